//! The kube engine as a [`Source`]: the clusters of an inventory, watched directly, and the
//! management clusters it follows while running.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::Engine;
use super::management::Management;
use crate::config::{self, WriteGrant};
use crate::fleet::ClusterInfo;
use crate::inventory::{ClusterSpec, Inventory};
use crate::source::{Read, Sink, Source, Write};

/// Watches every cluster of an inventory over its own connection.
pub struct Kube {
    clusters: Vec<ClusterSpec>,
    settings: config::EngineSection,
    follows: Vec<Follow>,
    engine: Option<Engine>,
}

/// A management cluster to read again every interval while running.
struct Follow {
    management: ClusterSpec,
    workspace_label: Option<String>,
    /// Its direct clusters, already in the inventory.
    known: Vec<ClusterSpec>,
    /// Names of the fleet's own clusters, which discovered clusters may not take.
    reserved: std::collections::HashSet<String>,
}

impl Kube {
    pub fn new(inventory: &Inventory, settings: &config::EngineSection) -> Kube {
        Kube {
            clusters: inventory.clusters.clone(),
            settings: settings.clone(),
            follows: Vec::new(),
            engine: None,
        }
    }

    /// Also follows every management cluster of `managements` that the inventory holds: clusters
    /// that appear there join the fleet, clusters that vanish leave it.
    pub fn following(mut self, managements: &[Management]) -> Kube {
        let reserved: std::collections::HashSet<String> = self
            .clusters
            .iter()
            .filter(|c| c.discovered.is_none())
            .map(|c| c.name.clone())
            .collect();
        for m in managements {
            let Some(spec) = self
                .clusters
                .iter()
                .find(|c| c.context == m.context || c.name == m.context)
            else {
                continue;
            };
            // Its direct clusters: those below them are read once, at start.
            let known = self
                .clusters
                .iter()
                .filter(|c| {
                    c.discovered
                        .as_ref()
                        .is_some_and(|d| d.management == std::slice::from_ref(&spec.name))
                })
                .cloned()
                .collect();
            self.follows.push(Follow {
                management: spec.clone(),
                workspace_label: m.workspace_label.clone(),
                known,
                reserved: reserved.clone(),
            });
        }
        self
    }
}

impl Source for Kube {
    /// Before [`Source::start`] only: the specs go to the cluster tasks then.
    fn clusters(&self) -> Vec<ClusterInfo> {
        self.clusters.iter().map(ClusterSpec::info).collect()
    }

    fn start(&mut self, sink: Sink) {
        // Each cluster's task owns its spec from here on: no second copy of every kubeconfig.
        let clusters = std::mem::take(&mut self.clusters);
        let mut engine = Engine::start(clusters, &self.settings, sink);
        for f in std::mem::take(&mut self.follows) {
            engine.follow(f.management, f.workspace_label, f.known, f.reserved);
        }
        self.engine = Some(engine);
    }

    fn reader(&self) -> Option<Arc<dyn Read>> {
        let reader: Arc<dyn Read> = Arc::new(self.engine.as_ref()?.reader());
        Some(reader)
    }

    fn writer(&self, grant: &WriteGrant) -> Option<Arc<dyn Write>> {
        let writer: Arc<dyn Write> = Arc::new(self.engine.as_ref()?.writer(grant));
        Some(writer)
    }

    fn stop(&mut self) -> BoxFuture<'_, ()> {
        let engine = self.engine.take();
        Box::pin(async move {
            if let Some(engine) = engine {
                engine.shutdown().await;
            }
        })
    }
}
