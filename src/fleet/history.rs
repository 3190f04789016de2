//! What changed in the fleet, as the history keeps it: a cluster's connection changes, an
//! object's health transitions and new revisions, deletions. Collectors write it
//! ([`crate::bus`]); `get --since` and the TUI's `:history` read it; a TUI on kubeconfigs keeps
//! what it saw itself ([`Recorder`]).

mod recorder;

pub use recorder::Recorder;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::FluxKind;

/// One change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
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

impl Change {
    /// A change of the object `key` on `cluster`: `what` it was (`health`, `revision`,
    /// `deleted`), with no before, after or message yet.
    pub fn of_object(
        at: Timestamp,
        cluster: &str,
        workspace: String,
        what: &str,
        key: &super::ObjectKey,
    ) -> Change {
        Change {
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

    /// "Kustomization flux-system/apps", or "-" for a cluster's own change.
    pub fn object(&self) -> String {
        match (&self.kind, &self.namespace, &self.name) {
            (Some(k), Some(ns), Some(n)) => format!("{k} {ns}/{n}"),
            _ => "-".into(),
        }
    }
}
