//! One object traced on many clusters at once — a headless command's, the TUI's, an MCP
//! call's — and folded by the shape of each copy's chain; a Kustomization's or HelmRelease's
//! tree grown on many clusters and folded into one. A bounded number of clusters read at a time
//! (as [`super::evidence`] reads workloads), each within a timeout, each through its own source;
//! a summarized cluster reached over a connection of its own for the read.

use super::Reader;
use super::evidence::{Gather, each};
use crate::fleet::trace::{self, Asked, Trace};
use crate::fleet::tree::{self, Tree};
use crate::fleet::{ClusterInfo, Index, ObjectKey};

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

/// `root`'s tree on every one of `clusters`, folded into one.
pub async fn grow(
    reader: &Reader,
    clusters: &[ClusterInfo],
    root: &ObjectKey,
    how: Gather,
) -> Tree {
    let read = each(clusters, how, |cluster| {
        let (reader, root) = (reader.clone(), root.clone());
        async move { reader.tree(&cluster, &root).await }
    })
    .await;
    tree::fold(read)
}
