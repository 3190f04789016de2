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
    // Owned per cluster: a future borrowing across the stream cannot be spawned.
    let read = futures::stream::iter(clusters.iter().cloned())
        .map(|cluster| {
            let (reader, object) = (reader.clone(), object.clone());
            async move {
                let read = tokio::time::timeout(how.timeout, reader.workloads(&cluster, &object))
                    .await
                    .unwrap_or(Err(ReadError::TimedOut(how.timeout)));
                (cluster.name, read)
            }
        })
        .buffer_unordered(how.concurrency.max(1))
        .collect::<Vec<_>>()
        .await;
    fold::fold(read)
}
