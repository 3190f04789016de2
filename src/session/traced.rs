//! One object traced on many clusters at once — a headless command's, the TUI's, an MCP
//! call's — and folded by the shape of each copy's chain: a bounded number of clusters read at
//! a time (as [`super::evidence`] reads workloads), each within a timeout, each through its own
//! source; a summarized cluster is opened first, as for workloads.

use super::Reader;
use super::evidence::{Gather, each};
use crate::fleet::trace::{self, Asked, Trace};
use crate::fleet::{ClusterInfo, Index};

/// The clusters of `index` a trace asks: every cluster the filter's workspace and cluster
/// globs take, that has not left the fleet.
pub fn in_scope(index: &Index, filter: &crate::fleet::filter::Filter) -> Vec<ClusterInfo> {
    index
        .entries()
        .filter(|(_, c)| !c.retired && filter.cluster(c))
        .map(|(_, c)| (*c.info).clone())
        .collect()
}

/// Traces `asked` on every one of `clusters` and folds what they answer.
pub async fn gather(
    reader: &Reader,
    clusters: &[ClusterInfo],
    asked: &Asked,
    how: Gather,
) -> Trace {
    let read = each(clusters, how, |cluster| {
        let (reader, asked) = (reader.clone(), asked.clone());
        async move { reader.trace(&cluster, &asked).await }
    })
    .await;
    trace::fold(read)
}
