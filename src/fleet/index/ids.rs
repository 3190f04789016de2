//! How the index names clusters, workspaces and sources, and what it knows about a cluster
//! before connecting to it.

use crate::fleet::SharedText;
use std::collections::BTreeMap;

use serde::Serialize;

/// A cluster's place in the index. Stable for the life of the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ClusterId(pub u32);

/// Where a cluster comes from, as its source names it: a kubeconfig file and context, or a
/// management cluster's path and Secret. Stable while fluxfleet runs; producers name clusters by
/// it, and the index alone turns it into a [`ClusterId`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterKey(SharedText);

impl ClusterKey {
    pub fn new(key: impl Into<SharedText>) -> ClusterKey {
        ClusterKey(key.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ClusterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which registered source a cluster's state comes from (the session numbers them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(pub u16);

/// A workspace's place in the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct WorkspaceId(pub u32);

/// What the index knows about a cluster before connecting.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterInfo {
    /// How its source names it.
    #[serde(skip)]
    pub key: ClusterKey,
    /// The source it comes from (set by the session when it joins).
    #[serde(skip)]
    pub source: SourceId,
    pub name: String,
    pub workspace: String,
    pub server: String,
    pub labels: BTreeMap<String, String>,
    /// The management clusters it was found on, the top one first (empty: a kubeconfig).
    pub management: Vec<String>,
    /// Where a discovered cluster comes from, as guardrails name it: its management path and its
    /// namespace there (`mgmt/prod-eu`, `mgmt/mgmt-eu/team-a`). None for a kubeconfig's
    /// cluster. Unlike its workspace (a label, a Kommander display name), the management cluster
    /// cannot change it without creating another Cluster in another namespace.
    pub origin: Option<String>,
    /// The kubeconfig context that reaches it and its name for the user (`users[].name`), as
    /// the audit journal records them; empty when its source has none.
    #[serde(skip)]
    pub context: String,
    #[serde(skip)]
    pub user: String,
    /// Why no action can reach it where its source cannot send one (a cluster of the bus that
    /// none of the user's kubeconfigs reaches); None where its source sends actions. The
    /// planner refuses its targets with this, so that a dry run says what the run will do.
    #[serde(skip)]
    pub unreachable: Option<crate::fleet::SharedText>,
}

impl ClusterInfo {
    /// A cluster named `name` in `workspace`, which its source also calls `name`; nothing else
    /// known about it.
    pub fn new(name: &str, workspace: &str) -> ClusterInfo {
        ClusterInfo {
            key: ClusterKey::new(name),
            name: name.into(),
            workspace: workspace.into(),
            ..ClusterInfo::empty()
        }
    }

    pub(super) fn empty() -> ClusterInfo {
        ClusterInfo {
            key: ClusterKey::new(""),
            source: SourceId::default(),
            name: String::new(),
            workspace: String::new(),
            server: String::new(),
            labels: BTreeMap::new(),
            management: Vec::new(),
            origin: None,
            context: String::new(),
            user: String::new(),
            unreachable: None,
        }
    }
}
