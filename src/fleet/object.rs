//! A Flux object as its summary reads it, and nothing more: the fields `FluxSummary::read`,
//! `health` and `Rollout::of` read, typed, read straight from a list page or a watch line.
//! Everything else — managedFields, labels, HelmRelease values, every inventory entry — is
//! skipped by the parser without being built, and strings are borrowed from the bytes where they
//! hold no escape. A `serde_json::Value` reads into the same form (`Object::from_value`), so a
//! summary has one reading whatever it came from.
//!
//! Every field is lenient (`lax`): one of the wrong type reads as absent, as a missing one does.

mod lax;

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use serde_json::Value;

use super::annotations;
pub use lax::{Count, Flag, Int, Lax, List, MAX_ITEMS, MAX_TEXT, Set, Text};

/// A Flux object; also a watch's ERROR event's `Status` (`code`, `reason`, `message`).
/// Shares its name with `export::shapes::Object`: the same Flux object, this is how it is read off
/// the API server, that is how `get -o json` writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Object<'a> {
    #[serde(borrow)]
    pub metadata: Lax<Metadata<'a>>,
    #[serde(borrow)]
    pub spec: Lax<Spec<'a>>,
    #[serde(borrow)]
    pub status: Lax<Status<'a>>,
    pub code: Int,
    #[serde(borrow)]
    pub reason: Text<'a>,
    #[serde(borrow)]
    pub message: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Metadata<'a> {
    #[serde(borrow)]
    pub name: Text<'a>,
    #[serde(borrow)]
    pub namespace: Text<'a>,
    pub generation: Int,
    #[serde(borrow)]
    pub resource_version: Text<'a>,
    pub deletion_timestamp: Set,
    #[serde(borrow)]
    pub annotations: Annotations<'a>,
}

/// The annotations a summary reads ([`annotations::SUMMARIZED`]); the others are skipped.
#[derive(Debug, Default)]
pub struct Annotations<'a>([Text<'a>; annotations::SUMMARIZED.len()]);

impl Annotations<'_> {
    /// The annotation `key`, one of [`annotations::SUMMARIZED`], when it is a string.
    pub fn get(&self, key: &str) -> Option<&str> {
        let i = annotations::SUMMARIZED.iter().position(|k| *k == key)?;
        self.0[i].get()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Spec<'a> {
    pub suspend: Flag,
    /// HelmRepository: `oci` or `default`.
    #[serde(borrow, rename = "type")]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub source_ref: Lax<Ref<'a>>,
    #[serde(borrow)]
    pub chart_ref: Lax<Ref<'a>>,
    #[serde(borrow)]
    pub chart: Lax<Chart<'a>>,
    #[serde(borrow)]
    pub image_repository_ref: Lax<Ref<'a>>,
    #[serde(borrow)]
    pub depends_on: List<Ref<'a>>,
    /// ArtifactGenerator: the sources it composes its artifacts from.
    #[serde(borrow)]
    pub sources: List<Ref<'a>>,
    /// How often its controller reconciles it (`10m0s`).
    #[serde(borrow)]
    pub interval: Text<'a>,
}

/// `sourceRef`, `chartRef`, `dependsOn` entries, `imageRepositoryRef`, an ArtifactGenerator's
/// `sources` (their `alias` aside).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Ref<'a> {
    #[serde(borrow)]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub namespace: Text<'a>,
    #[serde(borrow)]
    pub name: Text<'a>,
}

/// HelmRelease `spec.chart`: the template of its HelmChart.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Chart<'a> {
    #[serde(borrow)]
    pub spec: Lax<ChartSpec<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ChartSpec<'a> {
    #[serde(borrow)]
    pub chart: Text<'a>,
    #[serde(borrow)]
    pub source_ref: Lax<Ref<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Status<'a> {
    #[serde(borrow)]
    pub conditions: List<Condition<'a>>,
    pub observed_generation: Int,
    #[serde(borrow)]
    pub last_handled_reconcile_at: Text<'a>,
    #[serde(borrow)]
    pub last_applied_revision: Text<'a>,
    #[serde(borrow)]
    pub last_attempted_revision: Text<'a>,
    #[serde(borrow)]
    pub last_applied_origin_revision: Text<'a>,
    #[serde(borrow)]
    pub last_attempted_config_digest: Text<'a>,
    /// HelmRelease: how long its last install, upgrade or rollback took.
    #[serde(borrow)]
    pub last_attempted_release_action_duration: Text<'a>,
    #[serde(borrow)]
    pub history: List<Deployment<'a>>,
    #[serde(borrow)]
    pub artifact: Lax<Artifact<'a>>,
    #[serde(borrow)]
    pub latest_ref: Lax<LatestRef<'a>>,
    #[serde(borrow)]
    pub latest_image: Text<'a>,
    #[serde(borrow)]
    pub last_scan_result: Lax<ScanResult<'a>>,
    #[serde(borrow)]
    pub last_automation_run_time: Text<'a>,
    pub inventory: Count,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub status: Text<'a>,
    #[serde(borrow)]
    pub reason: Text<'a>,
    #[serde(borrow)]
    pub message: Text<'a>,
    pub observed_generation: Int,
    #[serde(borrow)]
    pub last_transition_time: Text<'a>,
}

/// A `status.history` entry (HelmRelease, Kustomization on Flux ≥ 2.7), newest first.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Deployment<'a> {
    #[serde(borrow)]
    pub chart_name: Text<'a>,
    #[serde(borrow)]
    pub chart_version: Text<'a>,
    #[serde(borrow)]
    pub config_digest: Text<'a>,
    #[serde(borrow)]
    pub first_deployed: Text<'a>,
    #[serde(borrow)]
    pub first_reconciled: Text<'a>,
    /// HelmRelease: when this release (version) was made.
    #[serde(borrow)]
    pub last_deployed: Text<'a>,
    /// Kustomization: the digest of the manifests it applied.
    #[serde(borrow)]
    pub digest: Text<'a>,
    /// Kustomization: the last run with this digest and outcome, how long it took, and the
    /// outcome (a Ready reason).
    #[serde(borrow)]
    pub last_reconciled: Text<'a>,
    #[serde(borrow)]
    pub last_reconciled_duration: Text<'a>,
    #[serde(borrow)]
    pub last_reconciled_status: Text<'a>,
    /// HelmRelease: the Helm release's status (`deployed`, `superseded`, `failed`).
    #[serde(borrow)]
    pub status: Text<'a>,
    #[serde(borrow)]
    pub metadata: Lax<DeploymentMetadata<'a>>,
}

impl Deployment<'_> {
    /// A Kustomization's run of these manifests that ended applied and healthy
    /// (`lastReconciledStatus` ReconciliationSucceeded).
    pub fn reconciled(&self) -> bool {
        self.last_reconciled_status.get() == Some("ReconciliationSucceeded")
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DeploymentMetadata<'a> {
    #[serde(borrow)]
    pub revision: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Artifact<'a> {
    #[serde(borrow)]
    pub revision: Text<'a>,
    #[serde(borrow)]
    pub last_update_time: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct LatestRef<'a> {
    #[serde(borrow)]
    pub tag: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ScanResult<'a> {
    #[serde(borrow)]
    pub scan_time: Text<'a>,
}

impl<'a> Object<'a> {
    /// `value` read as an object; one that is not an object reads as empty.
    pub fn from_value(value: &'a Value) -> Object<'a> {
        Lax::<Object>::deserialize(value)
            .ok()
            .and_then(|o| o.0)
            .unwrap_or_default()
    }

    pub fn metadata(&self) -> Option<&Metadata<'a>> {
        self.metadata.get()
    }

    pub fn spec(&self) -> Option<&Spec<'a>> {
        self.spec.get()
    }

    pub fn status(&self) -> Option<&Status<'a>> {
        self.status.get()
    }

    pub fn name(&self) -> Option<&str> {
        self.metadata()?.name.get()
    }

    pub fn namespace(&self) -> Option<&str> {
        self.metadata()?.namespace.get()
    }

    pub fn generation(&self) -> Option<i64> {
        self.metadata()?.generation.0
    }

    pub fn resource_version(&self) -> Option<&str> {
        self.metadata()?.resource_version.get()
    }

    /// The annotation `key`, one of [`annotations::SUMMARIZED`].
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata()?.annotations.get(key)
    }

    /// The condition of type `kind` in `status.conditions`, if any.
    pub fn condition(&self, kind: &str) -> Option<&Condition<'a>> {
        self.status()?
            .conditions
            .0
            .iter()
            .find(|c| c.kind.get() == Some(kind))
    }

    /// The status's `history`, newest first; empty when it has none.
    pub fn history(&self) -> &[Deployment<'a>] {
        self.status().map_or(&[], |s| &s.history.0)
    }

    /// A text of the status, chosen by `field`.
    pub fn status_text<'s>(
        &'s self,
        field: impl Fn(&'s Status<'a>) -> &'s Text<'a>,
    ) -> Option<&'s str> {
        field(self.status()?).get()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Annotations<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Annotations<'a>, D::Error> {
        d.deserialize_any(AnnotationsVisitor)
            .map(|a| a.unwrap_or_default())
    }
}

/// Reads the annotations a summary reads and skips the others; not an object reads as none.
struct AnnotationsVisitor;

impl<'de> Visitor<'de> for AnnotationsVisitor {
    type Value = Option<Annotations<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of annotations")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut kept = Annotations::default();
        while let Some(key) = map.next_key::<Text>()? {
            let slot = key
                .get()
                .and_then(|k| annotations::SUMMARIZED.iter().position(|s| *s == k));
            match slot {
                Some(i) => kept.0[i] = map.next_value()?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(kept))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        lax::drain_seq(seq)?;
        Ok(None)
    }

    lax::scalars_read_as!(None);
}
