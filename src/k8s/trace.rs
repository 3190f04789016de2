//! Tracing one object on one connected cluster, and growing a Kustomization's or HelmRelease's
//! tree there, read-only (GET only; Secrets are never asked for): [`crate::fleet::trace::walk`]
//! and [`crate::fleet::tree::walk`] over the cluster's connection, within a byte budget and a
//! time per request, a read the server turned away for now tried again.

use std::time::Duration;

use serde_json::Value;

use super::clients::Connected;
use super::workloads::Reading;
use crate::fleet::ObjectKey;
use crate::fleet::read::ReadError;
use crate::fleet::trace::resource::flux;
use crate::fleet::trace::walk::{Get, walk};
use crate::fleet::trace::{Asked, ClusterChain};
use crate::fleet::tree::ClusterTree;
use crate::fleet::tree::walk::grow;

/// Bytes read from one cluster for one trace, all requests together.
const BUDGET: usize = 2 * 1024 * 1024;

/// How often a read the server turned away for now (503, 429, a broken connection) is tried.
const TRIES: u32 = 3;

/// A walk's reads on one cluster.
struct OnCluster<'a> {
    reading: Reading<'a>,
    connected: &'a Connected,
}

impl Get for OnCluster<'_> {
    /// A GET, tried again after a pause when the server turned it away for now: a copy whose
    /// chain is cut by one busy answer would look like one that differs.
    async fn get(&mut self, path: &str) -> Result<Value, ReadError> {
        let mut tried = 1;
        loop {
            match self.reading.json(path).await {
                Err(ReadError::Server(_) | ReadError::Unreachable(_)) if tried < TRIES => {
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(tried))).await;
                    tried += 1;
                }
                answer => return answer,
            }
        }
    }

    fn flux_path(&self, key: &ObjectKey) -> String {
        self.connected
            .object_path(key)
            .unwrap_or_else(|_| flux(key.kind, None).path(&key.namespace, &key.name))
    }
}

/// `root`'s tree on the cluster `connected` reaches (see [`crate::fleet::tree::walk`]).
pub(super) async fn tree(
    connected: &Connected,
    root: &ObjectKey,
    timeout: Duration,
) -> Result<ClusterTree, ReadError> {
    let mut on = OnCluster {
        reading: Reading::new(&connected.http, timeout, BUDGET),
        connected,
    };
    grow(&mut on, root).await
}

/// `asked`'s chain on the cluster `connected` reaches.
pub(super) async fn read(
    connected: &Connected,
    asked: &Asked,
    timeout: Duration,
) -> Result<ClusterChain, ReadError> {
    let mut on = OnCluster {
        reading: Reading::new(&connected.http, timeout, BUDGET),
        connected,
    };
    walk(&mut on, asked).await
}
