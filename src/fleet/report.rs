//! The Flux Operator's summary of a cluster: its `FluxReport` (fluxcd.controlplane.io/v1, one
//! object named `flux` in the operator's namespace, its data in `.spec`) and its `FluxInstance`
//! (the Flux installation the operator manages). One small object says which Flux runs there,
//! whether its controllers are ready, how many objects of each kind run, fail or are suspended,
//! and how the cluster's sync stands — cheap enough to read from every cluster of a large fleet.
//!
//! Both come from the cluster: every text is bounded and every list capped.

use std::sync::Arc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bounds::{bounded, bounded_text, limits};
use super::object::Int;
use super::{FluxKind, Health, HealthCounts, SharedText};
use doc::ReportStatus;
pub use doc::{InstanceDoc, ReportDoc, first, first_versioned};

pub mod doc;

/// Components and reconcilers kept from one report; the operator knows about twenty kinds.
pub const MAX_ENTRIES: usize = 64;

/// What the Flux Operator reports about one cluster, as fluxfleet keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The Flux distribution: its version (`v2.9.4`), status and who manages it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<SharedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<SharedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_by: Option<SharedText>,
    /// The Flux Operator's own version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<SharedText>,
    /// The cluster's Kubernetes version and node count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<SharedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// Shared by the index between the clusters that report the same (a fleet on one Flux
    /// release reports the same controllers everywhere).
    pub components: Arc<[Component]>,
    pub reconcilers: Vec<Reconciler>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<Sync>,
    /// The report's own Ready condition: whether the operator could write it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Shared by the index between the clusters whose instances say the same.
    pub instance: Option<Arc<Instance>>,
    /// When fluxfleet read it: how old its counts may be.
    pub read_at: Timestamp,
    /// Its objects by health, of the kinds fluxfleet watches ([`Report::counting`]); what the
    /// cluster counts for while it is summarized.
    #[serde(skip, default)]
    pub counts: HealthCounts,
}

/// A Flux controller as the report sees it. Shares its name with `doc::Component`, its wire shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct Component {
    pub name: SharedText,
    /// The image's tag (`v1.9.4`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<SharedText>,
    pub ready: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<SharedText>,
}

impl Component {
    /// This controller with `share`'s copy of each of its texts.
    pub fn shared(&self, share: &mut dyn FnMut(&SharedText) -> SharedText) -> Component {
        Component {
            name: share(&self.name),
            version: self.version.as_ref().map(&mut *share),
            ready: self.ready,
            status: self.status.as_ref().map(share),
        }
    }
}

/// The objects of one kind on the cluster. Shares its name with `doc::Reconciler`, its wire shape.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reconciler {
    pub kind: SharedText,
    pub api_version: SharedText,
    /// Counts as u32 (a report is kept for every cluster, a list of a dozen of these in each):
    /// what the operator writes above that is kept as `u32::MAX`.
    pub running: u32,
    pub failing: u32,
    pub suspended: u32,
    /// Sources only: the artifacts' size, as the operator writes it (`2.1 MiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_size: Option<SharedText>,
}

/// The cluster's own sync (the FluxInstance's `spec.sync`).
/// Shares its name with `doc::Sync`, its shape on the wire: this is what is kept of it.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Sync {
    pub id: SharedText,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SharedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<SharedText>,
    pub ready: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<SharedText>,
}

/// The `FluxInstance` that installs Flux on the cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Instance {
    pub namespace: SharedText,
    pub name: SharedText,
    /// What it asks for (`2.9.x`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wants: Option<SharedText>,
    /// What it applied (`v2.9.4@sha256:…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<SharedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<SharedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<SharedText>,
    /// `fluxcd.controlplane.io/reconcile: disabled`.
    pub suspended: bool,
}

impl Instance {
    /// Replaces each of its texts by `share`'s copy of it.
    pub fn share(&mut self, share: &mut dyn FnMut(&SharedText) -> SharedText) {
        for t in [&mut self.namespace, &mut self.name] {
            *t = share(t);
        }
        let rest = [
            &mut self.wants,
            &mut self.revision,
            &mut self.reason,
            &mut self.message,
        ];
        for t in rest.into_iter().flatten() {
            *t = share(t);
        }
    }
}

/// Why an object is not a report fluxfleet can read.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ReportError {
    #[error("{0} is not a FluxReport")]
    NotAReport(String),
    #[error("the FluxReport has no spec")]
    NoSpec,
}

/// A count of the cluster's, when it is a whole number not below zero.
fn unsigned(n: &Int) -> Option<u64> {
    n.0.and_then(|n| u64::try_from(n).ok())
}

/// A text of the cluster's, bounded to `max`, when it is one.
fn text(t: &doc::Text, max: usize) -> Option<SharedText> {
    t.get().map(|s| bounded_text(s, max).into())
}

impl Report {
    /// Replaces each of its own texts by `share`'s copy of it: the cluster's counts, sync and
    /// versions. Its list of controllers and its instance, the same on many clusters, are
    /// shared whole by the index ([`Component::shared`], [`Instance::share`]).
    pub fn share(&mut self, share: &mut dyn FnMut(&SharedText) -> SharedText) {
        let mut texts: Vec<&mut SharedText> = Vec::new();
        let top = [
            &mut self.version,
            &mut self.status,
            &mut self.managed_by,
            &mut self.operator,
            &mut self.kubernetes,
        ];
        texts.extend(top.into_iter().filter_map(Option::as_mut));
        for r in &mut self.reconcilers {
            texts.push(&mut r.kind);
            texts.push(&mut r.api_version);
            texts.extend(r.total_size.as_mut());
        }
        if let Some(sync) = &mut self.sync {
            texts.push(&mut sync.id);
            let rest = [&mut sync.source, &mut sync.path, &mut sync.status];
            texts.extend(rest.into_iter().filter_map(Option::as_mut));
        }
        for t in texts {
            *t = share(t);
        }
        // Read from JSON, a list keeps the room it grew into (sixteen for twelve kinds).
        self.reconcilers.shrink_to_fit();
    }

    /// Reads a `FluxReport` and, where the cluster has one, its `FluxInstance`.
    pub fn read(
        report: &Value,
        instance: Option<&Value>,
        read_at: Timestamp,
    ) -> Result<Report, ReportError> {
        let doc = ReportDoc::deserialize(report).unwrap_or_default();
        let instance = instance
            .and_then(|v| InstanceDoc::deserialize(v).ok())
            .and_then(|doc| Instance::of(&doc));
        Report::of(&doc, instance, read_at)
    }

    /// The report `doc` says, with `instance`.
    pub fn of(
        doc: &ReportDoc,
        instance: Option<Instance>,
        read_at: Timestamp,
    ) -> Result<Report, ReportError> {
        let kind = doc.kind.get().unwrap_or("");
        if kind != "FluxReport" {
            return Err(ReportError::NotAReport(
                bounded(kind, limits::REASON).into(),
            ));
        }
        let spec = doc.spec.get().ok_or(ReportError::NoSpec)?;
        let components = spec
            .components
            .0
            .iter()
            .take(MAX_ENTRIES)
            .filter_map(|c| {
                Some(Component {
                    name: text(&c.name, limits::NAME)?,
                    version: c
                        .image
                        .get()
                        .and_then(image_tag)
                        .map(|t| bounded_text(t, limits::SHORT).into()),
                    ready: c.ready.0 == Some(true),
                    status: text(&c.status, limits::MESSAGE),
                })
            })
            .collect();
        let reconcilers = spec
            .reconcilers
            .0
            .iter()
            .take(MAX_ENTRIES)
            .filter_map(|r| {
                let stats = r.stats.get();
                let count = |n: Option<&Int>| {
                    n.and_then(unsigned)
                        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
                };
                Some(Reconciler {
                    kind: text(&r.kind, limits::NAME)?,
                    api_version: text(&r.api_version, limits::NAME).unwrap_or_default(),
                    running: count(stats.map(|s| &s.running)),
                    failing: count(stats.map(|s| &s.failing)),
                    suspended: count(stats.map(|s| &s.suspended)),
                    total_size: stats.and_then(|s| text(&s.total_size, limits::REASON)),
                })
            })
            .collect();
        let sync = spec.sync.get().and_then(|s| {
            Some(Sync {
                id: text(&s.id, limits::NAME)?,
                source: text(&s.source, limits::SHORT),
                path: text(&s.path, limits::SHORT),
                ready: s.ready.0 == Some(true),
                status: text(&s.status, limits::MESSAGE),
            })
        });
        let distribution = spec.distribution.get();
        let cluster = spec.cluster.get();
        let mut report = Report {
            version: distribution.and_then(|d| text(&d.version, limits::SHORT)),
            status: distribution.and_then(|d| text(&d.status, limits::REASON)),
            managed_by: distribution.and_then(|d| text(&d.managed_by, limits::NAME)),
            operator: spec
                .operator
                .get()
                .and_then(|o| text(&o.version, limits::SHORT)),
            kubernetes: cluster.and_then(|c| text(&c.server_version, limits::SHORT)),
            nodes: cluster.and_then(|c| unsigned(&c.nodes)),
            components,
            reconcilers,
            sync,
            ready: doc
                .status
                .get()
                .and_then(ReportStatus::ready)
                .and_then(|c| c.status.get())
                .map(|s| s == "True"),
            instance: instance.map(Arc::new),
            read_at,
            counts: HealthCounts::default(),
        };
        report.counts = report.count(&FluxKind::ALL);
        Ok(report)
    }

    /// The report, counting only the objects of `kinds` (the kinds fluxfleet watches, so that a
    /// cluster counts the same from its report as from its objects).
    pub fn counting(mut self, kinds: &[FluxKind]) -> Report {
        self.counts = self.count(kinds);
        self
    }

    /// The report's counts with those of `listed` kinds replaced by what their listing counted:
    /// exact where a look listed a kind (a report cannot tell progressing apart, nor what a
    /// dependency holds back), the report's elsewhere.
    pub fn recounted(mut self, kinds: &[FluxKind], listed: &[(FluxKind, HealthCounts)]) -> Report {
        let reported: Vec<FluxKind> = kinds
            .iter()
            .copied()
            .filter(|k| !listed.iter().any(|(l, _)| l == k))
            .collect();
        self.counts = self.count(&reported);
        for (_, counts) in listed.iter().filter(|(k, _)| kinds.contains(k)) {
            self.counts.add_all(counts);
        }
        self
    }

    /// Objects of `kinds` by health, as far as a report tells: suspended ones suspended, failing
    /// ones failed, the other running ones running — never ready: a report does not tell ready
    /// from progressing, nor from one held back by a dependency (`DependencyNotReady`, which the
    /// operator does not count failing).
    fn count(&self, kinds: &[FluxKind]) -> HealthCounts {
        let mut counts = HealthCounts::default();
        for r in &self.reconcilers {
            let Some(kind) = FluxKind::from_kind(&r.kind) else {
                continue;
            };
            if !kinds.contains(&kind) {
                continue;
            }
            let failing = r.failing.min(r.running);
            counts.add_n(Health::Failed, failing);
            counts.add_n(Health::Running, r.running - failing);
            counts.add_n(Health::Suspended, r.suspended);
        }
        counts
    }

    /// Says the same as `other`, read at another time or not.
    pub fn same_as(&self, other: &Report) -> bool {
        let read_at = self.read_at;
        *self
            == Report {
                read_at,
                ..other.clone()
            }
    }

    /// Components ready, of all.
    pub fn components_ready(&self) -> (usize, usize) {
        let ready = self.components.iter().filter(|c| c.ready).count();
        (ready, self.components.len())
    }

    /// Objects running, failing and suspended, over every kind.
    pub fn totals(&self) -> (u64, u64, u64) {
        self.reconcilers.iter().fold((0, 0, 0), |(r, f, s), k| {
            let n = u64::from;
            (r + n(k.running), f + n(k.failing), s + n(k.suspended))
        })
    }

    /// Flux is installed and all its controllers are ready.
    pub fn healthy(&self) -> bool {
        let (ready, all) = self.components_ready();
        ready == all
            && self
                .instance
                .as_ref()
                .is_none_or(|i| i.ready != Some(false))
    }

    /// What is wrong with Flux itself on the cluster, in a few words; None when nothing is.
    pub fn trouble(&self) -> Option<String> {
        let down: Vec<&str> = self
            .components
            .iter()
            .filter(|c| !c.ready)
            .map(|c| &*c.name)
            .collect();
        if !down.is_empty() {
            let verb = if down.len() == 1 { "is" } else { "are" };
            return Some(format!("Flux: {} {verb} not ready", down.join(", ")));
        }
        let instance = self.instance.as_ref()?;
        if instance.ready == Some(false) {
            let why = instance.message.as_deref().or(instance.reason.as_deref());
            return Some(format!(
                "FluxInstance {} not ready: {}",
                instance.name,
                why.unwrap_or("no reason given")
            ));
        }
        None
    }

    /// The Flux version, or what the instance asks for when the report has none yet.
    pub fn flux_version(&self) -> Option<&str> {
        self.version
            .as_deref()
            .or_else(|| self.instance.as_ref()?.wants.as_deref())
    }
}

impl Instance {
    /// The instance `doc` says; None when it is not a `FluxInstance` or has no name.
    pub fn of(doc: &InstanceDoc) -> Option<Instance> {
        if doc.kind.get() != Some("FluxInstance") {
            return None;
        }
        let metadata = doc.metadata.get()?;
        let ready = doc.status.get().and_then(ReportStatus::ready);
        Some(Instance {
            namespace: text(&metadata.namespace, limits::NAME).unwrap_or_default(),
            name: text(&metadata.name, limits::NAME)?,
            wants: doc
                .spec
                .get()
                .and_then(|s| s.distribution.get())
                .and_then(|d| text(&d.version, limits::SHORT)),
            revision: doc
                .status
                .get()
                .and_then(|s| text(&s.last_applied_revision, limits::SHORT)),
            ready: ready.and_then(|c| c.status.get()).map(|s| s == "True"),
            reason: ready.and_then(|c| text(&c.reason, limits::REASON)),
            message: ready.and_then(|c| text(&c.message, limits::MESSAGE)),
            suspended: metadata
                .annotations
                .get()
                .and_then(|a| a.reconcile.get())
                .is_some_and(|a| a.eq_ignore_ascii_case("disabled")),
        })
    }
}

/// Which Flux versions run across some clusters, by their reports: version skew.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skew<'a> {
    /// Each version with its clusters, most clusters first (then the newer version).
    pub versions: Vec<(&'a str, u32)>,
    /// Clusters without a report (no operator, or not read yet).
    pub unreported: u32,
}

impl<'a> Skew<'a> {
    pub fn of(reports: impl IntoIterator<Item = Option<&'a Report>>) -> Skew<'a> {
        let mut skew = Skew::default();
        for report in reports {
            match report.and_then(Report::flux_version) {
                Some(v) => match skew.versions.iter_mut().find(|(seen, _)| *seen == v) {
                    Some((_, n)) => *n += 1,
                    None => skew.versions.push((v, 1)),
                },
                None => skew.unreported += 1,
            }
        }
        skew.versions
            .sort_by(|(a, n), (b, m)| m.cmp(n).then_with(|| super::deployed::release_order(b, a)));
        skew
    }

    /// The version most of them run.
    pub fn main(&self) -> Option<&'a str> {
        self.versions.first().map(|(v, _)| *v)
    }

    /// More than one version runs.
    pub fn skewed(&self) -> bool {
        self.versions.len() > 1
    }
}

/// The tag of an image reference: `ghcr.io/fluxcd/helm-controller:v1.6.3@sha256:…` → `v1.6.3`.
fn image_tag(image: &str) -> Option<&str> {
    let named = image.split('@').next()?;
    let last = named.rsplit('/').next()?;
    last.split_once(':').map(|(_, tag)| tag)
}

#[cfg(test)]
mod tests;
