//! Which clusters and objects a command, a view or a proposal is about: `--status` (a group of
//! healths or one), and the filter of kind, name, workspace, cluster globs and namespace every
//! selector fills in.

use super::{
    ClusterEntry, ClusterId, FluxKind, FluxSummary, Health, Index, ObjectKey, WorkspaceEntry,
};
use crate::glob::glob_match;

/// `--status`: a named group of healths, or one health by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusFilter {
    /// Stalled or failed.
    Failing,
    /// Anything but ready or n/a.
    NotReady,
    Is(Health),
}

/// `--status` (or a tool's `status`) names no health.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown status {0:?} (failing, not-ready, stalled, failed, deleting, progressing, waiting, suspended, running, ready, not-applicable)"
)]
pub struct UnknownStatus(pub String);

impl StatusFilter {
    pub fn parse(text: &str) -> Result<StatusFilter, UnknownStatus> {
        match text {
            "failing" => Ok(StatusFilter::Failing),
            "not-ready" => Ok(StatusFilter::NotReady),
            other => Health::ALL
                .into_iter()
                .find(|h| h.key() == other || h.as_str() == other)
                .map(StatusFilter::Is)
                .ok_or_else(|| UnknownStatus(other.to_string())),
        }
    }

    pub fn matches(self, health: Health) -> bool {
        match self {
            StatusFilter::Failing => health.is_failing(),
            StatusFilter::NotReady => health.is_not_ready(),
            StatusFilter::Is(h) => h == health,
        }
    }

    /// Whether the object is selected: by its health, and `not-ready` as the object says it
    /// ([`FluxSummary::is_not_ready`]: a suspended object that is Ready is not selected).
    pub fn selects(self, s: &FluxSummary) -> bool {
        match self {
            StatusFilter::NotReady => s.is_not_ready(),
            other => other.matches(s.health),
        }
    }
}

/// Which clusters and objects to show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub kind: Option<FluxKind>,
    pub name: Option<String>,
    pub workspace: Option<String>,
    /// Globs over cluster names.
    pub clusters: Vec<String>,
    pub namespace: Option<String>,
    pub status: Option<StatusFilter>,
}

impl Filter {
    /// Whether it names a place — a workspace, clusters, a namespace or a name — rather than
    /// the whole fleet (a kind or a status alone picks across every cluster).
    pub fn names_a_place(&self) -> bool {
        self.workspace.is_some()
            || !self.clusters.is_empty()
            || self.namespace.is_some()
            || self.name.is_some()
    }

    pub fn workspace(&self, workspace: &WorkspaceEntry) -> bool {
        self.workspace.as_ref().is_none_or(|w| *w == workspace.name)
    }

    pub fn cluster(&self, cluster: &ClusterEntry) -> bool {
        self.workspace
            .as_ref()
            .is_none_or(|w| *w == cluster.info.workspace)
            && (self.clusters.is_empty()
                || self
                    .clusters
                    .iter()
                    .any(|g| glob_match(g, &cluster.info.name)))
    }

    pub fn object(&self, s: &FluxSummary) -> bool {
        self.key(&s.key) && self.status.is_none_or(|st| st.selects(s))
    }

    /// The kind, name and namespace select `key` (the status aside).
    pub fn key(&self, key: &super::ObjectKey) -> bool {
        self.kind.is_none_or(|k| k == key.kind)
            && self.name.as_deref().is_none_or(|n| n == &*key.name)
            && self
                .namespace
                .as_deref()
                .is_none_or(|n| n == &*key.namespace)
    }
}

/// A selector's kind: none when absent or `all`; the text back when it names no Flux kind (nor a
/// plural or short name of one).
pub fn kind(text: Option<&str>) -> Result<Option<FluxKind>, &str> {
    match text {
        None | Some("all") => Ok(None),
        Some(text) => FluxKind::parse(text).map(Some).ok_or(text),
    }
}

/// The objects `filter` selects, cluster by cluster in the index's order (retired clusters
/// left out).
pub fn selected(index: &Index, filter: &Filter) -> Vec<(ClusterId, ObjectKey)> {
    let clusters = index.clusters().iter().enumerate();
    let clusters = clusters.filter(|(_, c)| !c.retired && filter.cluster(c));
    clusters
        .flat_map(|(i, c)| {
            let objects = c.objects.values().filter(|s| filter.object(s));
            objects.map(move |s| (ClusterId(i as u32), s.key.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_groups_and_single_healths() {
        assert_eq!(StatusFilter::parse("failing"), Ok(StatusFilter::Failing));
        assert_eq!(
            StatusFilter::parse("stalled"),
            Ok(StatusFilter::Is(Health::Stalled))
        );
        assert_eq!(
            StatusFilter::parse("not-applicable"),
            Ok(StatusFilter::Is(Health::NotApplicable))
        );
        assert_eq!(
            StatusFilter::parse("broken"),
            Err(UnknownStatus("broken".into()))
        );
        assert!(StatusFilter::Failing.matches(Health::Stalled));
        assert!(!StatusFilter::Failing.matches(Health::Progressing));
        assert!(StatusFilter::NotReady.matches(Health::Suspended));
        assert!(!StatusFilter::NotReady.matches(Health::NotApplicable));
    }

    /// `flux suspend` leaves Ready as it was: `--status not-ready` selects a suspended object only
    /// while its Ready condition is not True; `--status suspended` selects both.
    #[test]
    fn a_suspended_object_that_is_ready_is_not_selected_as_not_ready() {
        let suspended = |ready: &str| {
            FluxSummary::of(
                FluxKind::Kustomization,
                &serde_json::json!({"metadata": {"name": "b", "namespace": "apps"},
                    "spec": {"suspend": true},
                    "status": {"conditions": [{"type": "Ready", "status": ready}]}}),
            )
            .unwrap()
        };
        let (ready, failed) = (suspended("True"), suspended("False"));
        assert_eq!(
            (ready.health, failed.health),
            (Health::Suspended, Health::Suspended)
        );
        assert!(!StatusFilter::NotReady.selects(&ready));
        assert!(StatusFilter::NotReady.selects(&failed));
        let is_suspended = StatusFilter::Is(Health::Suspended);
        assert!(is_suspended.selects(&ready) && is_suspended.selects(&failed));
    }
}
