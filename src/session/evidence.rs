//! A Flux object's workload evidence gathered from many clusters at once — a triage group's,
//! a headless command's, an MCP call's — and folded: a bounded number of clusters read at a
//! time, each within a timeout (its byte budget is the reader's), each through its own source.

use std::time::Duration;

use futures::StreamExt;

use super::Reader;
use crate::fleet::workload::ReadError;
use crate::fleet::workload::fold::{self, Folded};
use crate::fleet::{ClusterInfo, ObjectKey};

/// How evidence is gathered.
#[derive(Clone, Copy, Debug)]
pub struct Gather {
    /// Clusters read at the same time.
    pub concurrency: usize,
    /// How long one cluster may take, all its reads together.
    pub timeout: Duration,
}

impl Default for Gather {
    fn default() -> Gather {
        Gather {
            concurrency: 32,
            timeout: Duration::from_secs(10),
        }
    }
}

/// Reads `object`'s workloads on every one of `clusters` and folds what they say.
pub async fn gather(
    reader: &Reader,
    clusters: &[ClusterInfo],
    object: &ObjectKey,
    how: Gather,
) -> Folded {
    let read = each(clusters, how, |cluster| {
        let (reader, object) = (reader.clone(), object.clone());
        async move { reader.workloads(&cluster, &object).await }
    })
    .await;
    fold::fold(read)
}

/// `read` on every one of `clusters`, a bounded number at a time, each within the timeout: what
/// each answered, by cluster name.
pub async fn each<T, F, Fut>(
    clusters: &[ClusterInfo],
    how: Gather,
    read: F,
) -> Vec<(String, Result<T, ReadError>)>
where
    F: Fn(ClusterInfo) -> Fut,
    Fut: std::future::Future<Output = Result<T, ReadError>>,
{
    // Owned per cluster: a future borrowing across the stream cannot be spawned.
    futures::stream::iter(clusters.iter().cloned())
        .map(|cluster| {
            let name = cluster.name.clone();
            let reading = read(cluster);
            async move {
                let answer = tokio::time::timeout(how.timeout, reading)
                    .await
                    .unwrap_or(Err(ReadError::TimedOut(how.timeout)));
                (name, answer)
            }
        })
        .buffer_unordered(how.concurrency.max(1))
        .collect::<Vec<_>>()
        .await
}
