//! The headless commands: `fluxfleet get`, `fluxfleet inventory` and `suspend` / `resume` /
//! `reconcile` — selecting from the index and printing tables, JSON and NDJSON. The JSON shapes
//! are documented in docs/commands.md and stable.

pub mod act;
pub mod alert;
pub mod get;
pub(crate) mod history;
pub mod inventory;
pub(crate) mod opening;
pub(crate) mod output;
pub mod proposals;
pub mod request;
pub mod rollout;
pub(crate) mod roots;
pub mod table;
pub mod view;
mod watch;
pub mod workloads;

use crate::fleet::{ClusterEntry, FluxKind, FluxSummary, Health, WorkspaceEntry};
use crate::glob::glob_match;

/// `--status`: a named group of healths, or one health by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Stalled or failed.
    Failing,
    /// Anything but ready or n/a.
    NotReady,
    Is(Health),
}

/// `--status` (or a tool's `status`) names no health.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown status {0:?} (failing, not-ready, stalled, failed, deleting, progressing, waiting, suspended, ready, not-applicable)"
)]
pub struct UnknownStatus(pub String);

impl Status {
    pub fn parse(text: &str) -> Result<Status, UnknownStatus> {
        match text {
            "failing" => Ok(Status::Failing),
            "not-ready" => Ok(Status::NotReady),
            other => Health::ALL
                .into_iter()
                .find(|h| h.key() == other || h.as_str() == other)
                .map(Status::Is)
                .ok_or_else(|| UnknownStatus(other.to_string())),
        }
    }

    pub fn matches(self, health: Health) -> bool {
        match self {
            Status::Failing => health.is_failing(),
            Status::NotReady => health.is_not_ready(),
            Status::Is(h) => h == health,
        }
    }
}

/// Which clusters and objects to show.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub kind: Option<FluxKind>,
    pub name: Option<String>,
    pub workspace: Option<String>,
    /// Globs over cluster names.
    pub clusters: Vec<String>,
    pub namespace: Option<String>,
    pub status: Option<Status>,
}

impl Filter {
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
        self.kind.is_none_or(|k| k == s.key.kind)
            && self.name.as_deref().is_none_or(|n| n == &*s.key.name)
            && self
                .namespace
                .as_deref()
                .is_none_or(|n| n == &*s.key.namespace)
            && self.status.is_none_or(|st| st.matches(s.health))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_groups_and_single_healths() {
        assert_eq!(Status::parse("failing"), Ok(Status::Failing));
        assert_eq!(Status::parse("stalled"), Ok(Status::Is(Health::Stalled)));
        assert_eq!(
            Status::parse("not-applicable"),
            Ok(Status::Is(Health::NotApplicable))
        );
        assert_eq!(Status::parse("broken"), Err(UnknownStatus("broken".into())));
        assert!(Status::Failing.matches(Health::Stalled));
        assert!(!Status::Failing.matches(Health::Progressing));
        assert!(Status::NotReady.matches(Health::Suspended));
        assert!(!Status::NotReady.matches(Health::NotApplicable));
    }
}
