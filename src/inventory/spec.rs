//! What the inventory makes: each cluster's spec, where a discovered one was found, the problems
//! met on the way, and the whole — what the loader and its readers (kubeconfig files, Cluster
//! API) share.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

/// One cluster of the fleet and how to reach it.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterSpec {
    /// Unique in the fleet: the context name, disambiguated when two files use the same one.
    #[serde(rename = "cluster")]
    pub name: String,
    /// The context name in its file.
    pub context: String,
    pub workspace: String,
    pub server: String,
    pub labels: BTreeMap<String, String>,
    /// The kubeconfig file the context comes from.
    pub source: PathBuf,
    /// A self-contained kubeconfig with just this context, its cluster and its user.
    #[serde(skip)]
    pub kubeconfig: super::Credentials,
    /// Found on a management cluster (Cluster API): where, and where it is in its life.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovered: Option<CapiDiscovered>,
}

impl ClusterSpec {
    /// The kubeconfig's name for the user (`users[].name`): what the journal records, never the
    /// credentials themselves.
    pub fn kube_user(&self) -> String {
        self.kubeconfig.user()
    }

    /// Whether its kubeconfig has been read: a fleet listed by name ([`list`]) has its clusters'
    /// credentials read when they are needed ([`Reread`]). A read kubeconfig always holds its one
    /// context.
    pub fn credentials_read(&self) -> bool {
        self.kubeconfig.is_read()
    }

    /// The same cluster, its credentials dropped (read again from its file when needed).
    pub fn without_credentials(self) -> ClusterSpec {
        ClusterSpec {
            kubeconfig: Default::default(),
            ..self
        }
    }

    /// Where it comes from, as the index knows it for as long as fluxfleet runs: its file and
    /// context (for a discovered cluster, its management path and Secret).
    pub fn key(&self) -> crate::fleet::ClusterKey {
        crate::fleet::ClusterKey::new(format!("{}#{}", self.source.display(), self.context))
    }

    /// What the index knows of it.
    pub fn info(&self) -> crate::fleet::ClusterInfo {
        crate::fleet::ClusterInfo {
            key: self.key(),
            source: crate::fleet::SourceId::default(),
            name: self.name.clone(),
            workspace: self.workspace.clone(),
            server: self.server.clone(),
            labels: self.labels.clone(),
            management: self
                .discovered
                .as_ref()
                .map(|d| d.management.clone())
                .unwrap_or_default(),
            origin: self
                .discovered
                .as_ref()
                .map(|d| format!("{}/{}", d.management.join("/"), d.namespace)),
            context: self.context.clone(),
            user: self.kube_user(),
            unreachable: None,
        }
    }
}

/// How a cluster was found on a management cluster.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CapiDiscovered {
    /// The management clusters above it, the top one first.
    pub management: Vec<String>,
    /// Its namespace on the management cluster.
    pub namespace: String,
    pub lifecycle: Lifecycle,
    /// Cluster API's `RemoteConnectionProbe` is False: CAPI cannot reach it either.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub probe_failed: bool,
}

/// Something wrong with one source or one context in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    /// The file (or config rule) at fault.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.context {
            Some(c) => write!(f, "{}: context {c:?}: {}", self.source, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

/// The resolved fleet.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Inventory {
    pub clusters: Vec<ClusterSpec>,
    pub problems: Vec<Problem>,
    /// Clusters that work but put something at risk (credentials sent in clear text).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Problem>,
    /// Where kubeconfigs were looked for, in order of precedence, one line each: what a user
    /// who has no clusters is shown.
    #[serde(skip)]
    pub looked: Vec<String>,
}

/// Where a Cluster API cluster is in its life, as the views show it instead of a connection
/// error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state", content = "message")]
pub enum Lifecycle {
    /// Provisioned: worth connecting to.
    Provisioned,
    /// Still being created (Pending, Provisioning): no kubeconfig worth using yet.
    Provisioning,
    /// `spec.paused`: CAPI does not reconcile it; fluxfleet leaves it alone too.
    Paused,
    /// Being deleted.
    Deleting,
    /// CAPI says it failed (phase Failed, or a failure reason), with why.
    Failed(String),
}

impl Lifecycle {
    pub fn connectable(&self) -> bool {
        *self == Lifecycle::Provisioned
    }
}
