//! What a Kustomization or HelmRelease runs, what it tried, and since when: the part of a
//! summary the rollout view reads.

use std::sync::Arc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::FluxKind;
use super::summary::{bounded, limits};

/// What a Kustomization or HelmRelease has deployed and tried to deploy. The texts are shared
/// between the objects of a fleet by the index: ten thousand clusters on one revision hold it once.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollout {
    /// Kustomization `lastAppliedRevision`; HelmRelease the chart version of the current
    /// `status.history` entry (else `lastAppliedRevision`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<Arc<str>>,
    /// `lastAttemptedRevision`: differs from `applied` while a new revision fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempted: Option<Arc<str>>,
    /// Kustomization `lastAppliedOriginRevision`: the revision of the source's origin (an OCI
    /// artifact built from Git), where the controller records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Arc<str>>,
    /// HelmRelease: the chart's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chart: Option<Arc<str>>,
    /// HelmRelease: the digest of the values of the current release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_digest: Option<Arc<str>>,
    /// When the current revision was first reconciled (Kustomization, `status.history`, Flux ≥
    /// 2.7) or deployed (HelmRelease `firstDeployed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
}

impl Rollout {
    pub(super) fn of(kind: FluxKind, object: &Value) -> Option<Rollout> {
        let at = |path: &str| -> Option<Arc<str>> {
            object
                .pointer(path)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|s| Arc::from(&*bounded(s, limits::SHORT)))
        };
        let time =
            |path: &str| -> Option<Timestamp> { object.pointer(path)?.as_str()?.parse().ok() };
        let rollout = match kind {
            FluxKind::Kustomization => {
                let applied = at("/status/lastAppliedRevision");
                Rollout {
                    attempted: at("/status/lastAttemptedRevision"),
                    origin: at("/status/lastAppliedOriginRevision"),
                    since: first_reconciled(object, applied.as_deref()),
                    applied,
                    ..Rollout::default()
                }
            }
            FluxKind::HelmRelease => Rollout {
                applied: at("/status/history/0/chartVersion")
                    .or_else(|| at("/status/lastAppliedRevision")),
                attempted: at("/status/lastAttemptedRevision"),
                chart: at("/status/history/0/chartName").or_else(|| at("/spec/chart/spec/chart")),
                config_digest: at("/status/history/0/configDigest")
                    .or_else(|| at("/status/lastAttemptedConfigDigest")),
                since: time("/status/history/0/firstDeployed"),
                ..Rollout::default()
            },
            // A source's artifact: what its consumers should apply, produced when.
            k if k.has_artifact() => Rollout {
                applied: at("/status/artifact/revision"),
                since: time("/status/artifact/lastUpdateTime"),
                ..Rollout::default()
            },
            _ => return None,
        };
        (rollout != Rollout::default()).then_some(rollout)
    }

    /// The kinds whose revisions the rollout view follows.
    pub fn followed(kind: FluxKind) -> bool {
        matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease) || kind.has_artifact()
    }

    /// Tried something other than what runs: a new revision that has not been applied (yet).
    pub fn behind_attempt(&self) -> bool {
        matches!((&self.applied, &self.attempted), (Some(a), Some(t)) if a != t)
    }
}

/// When a Kustomization's applied revision was first reconciled: `status.history` is newest
/// first, and one revision may have several entries in a row (one per outcome); the oldest of
/// the run that starts at the newest entry for `applied` is when it arrived.
fn first_reconciled(object: &Value, applied: Option<&str>) -> Option<Timestamp> {
    let applied = applied?;
    let history = object.pointer("/status/history")?.as_array()?;
    fn revision(e: &Value) -> Option<&str> {
        e.pointer("/metadata/revision").and_then(Value::as_str)
    }
    let start = history.iter().position(|e| revision(e) == Some(applied))?;
    history[start..]
        .iter()
        .take_while(|e| revision(e) == Some(applied))
        .last()?
        .get("firstReconciled")?
        .as_str()?
        .parse()
        .ok()
}
