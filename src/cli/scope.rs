//! Which objects and clusters a command is about: what `get`, `rollout`, `workloads`, `alert`
//! and the actions select by.

use clap::Args;

use super::usage::Usage;
use crate::export::{Filter, StatusFilter};

/// The kind and name, the workspace, clusters and namespace.
#[derive(Debug, Args)]
pub struct ScopeArgs {
    /// The kind: ks, hr, gitrepo, ocirepo, helmrepo, hc, bucket … (kind, plural or short name),
    /// or `all`.
    pub kind: Option<String>,
    /// Only objects with this name.
    pub name: Option<String>,
    /// Only clusters of this workspace.
    #[arg(long)]
    pub workspace: Option<String>,
    /// Only clusters matching this glob (repeatable).
    #[arg(long = "cluster", value_name = "GLOB")]
    pub clusters: Vec<String>,
    /// Only objects in this namespace.
    #[arg(short, long)]
    pub namespace: Option<String>,
}

impl ScopeArgs {
    /// Whether the kind given is `all` (every Flux kind), rather than none (the watched kinds).
    pub fn names_every_kind(&self) -> bool {
        self.kind.as_deref() == Some("all")
    }

    pub fn filter(&self, status: Option<StatusFilter>) -> Result<Filter, Usage> {
        let kind = crate::fleet::filter::kind(self.kind.as_deref())
            .map_err(|k| Usage::NotAKind(k.to_string()))?;
        Ok(Filter {
            kind,
            name: self.name.clone(),
            workspace: self.workspace.clone(),
            clusters: self.clusters.clone(),
            namespace: self.namespace.clone(),
            status,
        })
    }
}

/// The selectors `get` and the actions share: the scope and a status.
#[derive(Debug, Args)]
pub struct Selectors {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// failing, stalled, suspended, progressing, ready, not-ready (or any other health).
    #[arg(long, value_parser = StatusFilter::parse)]
    pub status: Option<StatusFilter>,
}

impl Selectors {
    pub fn filter(&self) -> Result<Filter, Usage> {
        self.scope.filter(self.status)
    }
}
