//! What a view calls a workspace, a cluster and a scope in its titles: the parent and every view
//! say them alike.

use crate::app::model::ListScope;
use crate::fleet::{ClusterId, Index, WorkspaceId};

pub(crate) fn ws_name(index: &Index, w: WorkspaceId) -> &str {
    index.workspace(w).map_or("?", |w| w.name.as_str())
}

pub(crate) fn cluster_name(index: &Index, c: ClusterId) -> &str {
    index.cluster(c).map_or("?", |c| c.info.name.as_str())
}

/// "the fleet", "workspace payments", "cluster eu-prod-004".
pub(crate) fn scope_name(index: &Index, scope: ListScope) -> String {
    match scope {
        ListScope::Fleet => "the fleet".into(),
        ListScope::Workspace(w) => format!("workspace {}", ws_name(index, w)),
        ListScope::Cluster(c) => format!("cluster {}", cluster_name(index, c)),
    }
}
