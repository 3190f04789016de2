//! Following a management cluster while fluxfleet runs: read it again every interval, and turn
//! the difference into clusters joining, leaving or reconnecting.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::management;
use super::task::cluster;
use super::task::connect::TaskShared;
use crate::config;
use crate::fleet::ClusterKey;
use crate::fleet::index::Change;
use crate::inventory::{ClusterSpec, Inventory, capi};

pub(super) struct Follower {
    pub management: ClusterSpec,
    pub workspace_label: Option<String>,
    pub shared: Arc<TaskShared>,
    pub settings: config::EngineSection,
    pub cancel: CancellationToken,
    /// Names of the fleet's other clusters: a discovered cluster with one of them is renamed,
    /// as at start.
    pub reserved: std::collections::HashSet<String>,
}

/// A cluster being followed: its key, what it is shown as, how it is reached, its task.
struct Followed {
    key: ClusterKey,
    /// Workspace and labels: a change means leaving and joining again.
    shown: u64,
    /// Server, credentials, lifecycle: a change means reconnecting.
    reached: u64,
    task: CancellationToken,
}

impl Follower {
    pub(super) async fn run(self, known: Vec<(ClusterSpec, CancellationToken)>) {
        // The clusters found at start already run, each under its own token.
        let mut followed: HashMap<String, Followed> = known
            .into_iter()
            .map(|(spec, task)| {
                let f = Followed {
                    key: spec.key(),
                    shown: shown(&spec),
                    reached: reached(&spec),
                    task,
                };
                (spec.name, f)
            })
            .collect();
        loop {
            tokio::select! {
                _ = self.cancel.cancelled() => return,
                _ = tokio::time::sleep(self.settings.discovery_interval) => {}
            }
            let holdings = match management::discover(&self.management, &self.settings).await {
                Ok(h) => h,
                // The management cluster is down: keep the fleet as it is, try again later.
                Err(message) => {
                    tracing::warn!(management = %self.management.name, %message, "cannot read the management cluster");
                    continue;
                }
            };
            let mut found = Inventory::default();
            capi::add(
                &mut found,
                std::slice::from_ref(&self.management.name),
                holdings.found,
                &holdings.kommander,
                self.workspace_label.as_deref(),
                &self.reserved,
            );
            for p in &found.problems {
                tracing::warn!(problem = %p, "management cluster");
            }
            if self.apply(&mut followed, found.clusters).await.is_err() {
                return;
            }
        }
    }

    async fn apply(
        &self,
        followed: &mut HashMap<String, Followed>,
        specs: Vec<ClusterSpec>,
    ) -> Result<(), ()> {
        let mut seen = Vec::with_capacity(specs.len());
        for spec in specs {
            seen.push(spec.name.clone());
            let (shown, reached) = (shown(&spec), reached(&spec));
            match followed.get_mut(&spec.name) {
                Some(f) if f.shown == shown && f.reached == reached => {}
                Some(f) if f.shown == shown => {
                    // New credentials or a new lifecycle: the same cluster, reconnected.
                    f.task.cancel();
                    f.reached = reached;
                    self.send(&f.key, Change::Connection(Default::default()))
                        .await?;
                    f.task = self.spawn(spec);
                }
                _ => {
                    if let Some(old) = followed.remove(&spec.name) {
                        old.task.cancel();
                        self.send(&old.key, Change::Retired).await?;
                    }
                    // Added before its task starts: the cluster's own changes come after.
                    let key = spec.key();
                    self.send(&key, Change::Added(spec.info())).await?;
                    let name = spec.name.clone();
                    let task = self.spawn(spec);
                    followed.insert(
                        name,
                        Followed {
                            key,
                            shown,
                            reached,
                            task,
                        },
                    );
                }
            }
        }
        let gone: Vec<String> = followed
            .keys()
            .filter(|name| !seen.contains(name))
            .cloned()
            .collect();
        for name in gone {
            if let Some(f) = followed.remove(&name) {
                f.task.cancel();
                self.send(&f.key, Change::Retired).await?;
            }
        }
        Ok(())
    }

    fn spawn(&self, spec: ClusterSpec) -> CancellationToken {
        let token = self.cancel.child_token();
        tokio::spawn(cluster::run(spec, self.shared.clone(), token.clone()));
        token
    }

    async fn send(&self, cluster: &ClusterKey, change: Change) -> Result<(), ()> {
        self.shared
            .events
            .send(cluster, change)
            .await
            .map_err(|_| ())
    }
}

fn shown(spec: &ClusterSpec) -> u64 {
    let mut h = DefaultHasher::new();
    (&spec.workspace, &spec.labels).hash(&mut h);
    h.finish()
}

fn reached(spec: &ClusterSpec) -> u64 {
    let mut h = DefaultHasher::new();
    spec.server.hash(&mut h);
    spec.kubeconfig.hash(&mut h);
    format!("{:?}", spec.discovered.as_ref().map(|d| &d.lifecycle)).hash(&mut h);
    h.finish()
}
