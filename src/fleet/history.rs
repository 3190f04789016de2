//! What changed in the fleet, as the history keeps it: a cluster's connection changes, an
//! object's health transitions and new revisions, deletions. Collectors write it
//! ([`crate::bus`]); `get --since` and the TUI's `:history` read it; a TUI on kubeconfigs keeps
//! what it saw itself ([`recorder::Recorder`]).

pub mod recorder;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{FluxKind, FluxSummary, Health, Phase};

/// One change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedChange {
    pub at: Timestamp,
    pub cluster: String,
    pub workspace: String,
    /// `connection`, `health`, `revision`, `deleted`.
    pub what: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FluxKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the cluster says it happened, where it says: a revision's first reconcile
    /// (`status.history`), a source's artifact time, the Ready condition's transition. `at` is
    /// when it was seen; the ring metrics count from this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub happened: Option<Timestamp>,
}

impl RecordedChange {
    /// A change of the object `key` on `cluster`: `what` it was (`health`, `revision`,
    /// `deleted`), with no before, after or message yet.
    pub fn of_object(
        at: Timestamp,
        cluster: &str,
        workspace: String,
        what: &str,
        key: &super::ObjectKey,
    ) -> RecordedChange {
        RecordedChange {
            at,
            cluster: cluster.to_string(),
            workspace,
            what: what.to_string(),
            kind: Some(key.kind),
            namespace: Some(key.namespace.to_string()),
            name: Some(key.name.to_string()),
            from: None,
            to: None,
            message: None,
            happened: None,
        }
    }

    /// What `now`, an object's new summary on `cluster`, changes against what it `was` (its
    /// health and revision): its health turning, then a new revision — each when the cluster
    /// says it happened, where it says. Collectors and a session's [`Recorder`] record the same.
    pub fn of_summary(
        at: Timestamp,
        cluster: &str,
        workspace: &str,
        was: (Health, Option<&str>),
        now: &FluxSummary,
    ) -> impl Iterator<Item = RecordedChange> {
        let (health, revision) = was;
        let turned = (health != now.health).then(|| {
            let mut c =
                RecordedChange::of_object(at, cluster, workspace.into(), "health", &now.key);
            c.from = Some(health.as_str().into());
            c.to = Some(now.health.as_str().into());
            c.message = now.message.as_deref().map(str::to_string);
            c.happened = now.since;
            c
        });
        let new = now
            .revision
            .as_deref()
            .filter(|r| revision != Some(*r))
            .map(|r| {
                let mut c =
                    RecordedChange::of_object(at, cluster, workspace.into(), "revision", &now.key);
                c.from = revision.map(str::to_string);
                c.to = Some(r.to_string());
                c.happened = now.rollout.as_ref().and_then(|r| r.since);
                c
            });
        turned.into_iter().chain(new)
    }

    /// A cluster's connection turning from `from` (None: first said) to `to`.
    pub fn of_connection(
        at: Timestamp,
        cluster: &str,
        workspace: &str,
        from: Option<Phase>,
        to: Phase,
        message: Option<String>,
    ) -> RecordedChange {
        RecordedChange {
            at,
            cluster: cluster.to_string(),
            workspace: workspace.to_string(),
            what: "connection".into(),
            kind: None,
            namespace: None,
            name: None,
            from: from.map(|p| p.as_str().to_string()),
            to: Some(to.as_str().to_string()),
            message,
            happened: None,
        }
    }

    /// "Kustomization flux-system/apps", or "-" for a cluster's own change.
    pub fn object(&self) -> String {
        match (&self.kind, &self.namespace, &self.name) {
            (Some(k), Some(ns), Some(n)) => format!("{k} {ns}/{n}"),
            _ => "-".into(),
        }
    }
}
