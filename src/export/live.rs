//! The engine and the index together, for commands without a terminal (and for tests): start
//! watching an inventory, apply events until every cluster has answered, then read the index.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::config;
use crate::fleet::Index;
use crate::fleet::index::Event;
use crate::inventory::Inventory;
use crate::k8s::Engine;

/// A new index holding every cluster of `inventory`, and the engine watching them; the events
/// it sends are for that index.
pub fn watch(
    inventory: &Inventory,
    settings: &config::Engine,
) -> (Index, Engine, mpsc::Receiver<Event>) {
    let mut index = Index::new();
    let clusters = inventory
        .clusters
        .iter()
        .map(|spec| {
            let id = index.add_cluster(spec.info());
            (id, spec.clone())
        })
        .collect();
    let (engine, events) = Engine::start(clusters, settings);
    (index, engine, events)
}

/// Has `engine` follow every management cluster of `managements` that `inventory` holds: the
/// clusters discovered on it at start are handed over with their ids.
pub fn follow(
    engine: &mut Engine,
    inventory: &Inventory,
    managements: &[crate::k8s::management::Management],
) {
    for m in managements {
        let Some(spec) = inventory
            .clusters
            .iter()
            .find(|c| c.context == m.context || c.name == m.context)
        else {
            continue;
        };
        let known = inventory
            .clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                // Its direct clusters: those below them are read once, at start.
                c.discovered
                    .as_ref()
                    .is_some_and(|d| d.management == [spec.name.clone()])
            })
            .map(|(i, c)| (crate::fleet::ClusterId(i as u32), c.clone()))
            .collect();
        let reserved = inventory
            .clusters
            .iter()
            .filter(|c| c.discovered.is_none())
            .map(|c| c.name.clone())
            .collect();
        engine.follow(spec.clone(), m.workspace_label.clone(), known, reserved);
    }
}

/// A watched fleet.
pub struct Live {
    pub index: Index,
    engine: Engine,
    events: mpsc::Receiver<Event>,
    batch: Vec<Event>,
}

impl Live {
    /// Adds every cluster of `inventory` to a new index and starts watching them.
    pub fn start(inventory: &Inventory, settings: &config::Engine) -> Live {
        let (index, engine, events) = watch(inventory, settings);
        Live {
            index,
            engine,
            events,
            batch: Vec::with_capacity(1024),
        }
    }

    /// Sends actions to the connected clusters: only with the proof that writes are enabled.
    pub fn writer(&self, grant: crate::k8s::WriteGrant, writable: Vec<bool>) -> crate::k8s::Writer {
        self.engine.writer(grant, writable)
    }

    /// Follows management clusters while running (see [`follow`]).
    pub fn follow(
        &mut self,
        inventory: &Inventory,
        managements: &[crate::k8s::management::Management],
    ) {
        follow(&mut self.engine, inventory, managements);
    }

    /// Reads events and YAML from the connected clusters.
    pub fn reader(&self) -> crate::k8s::Reader {
        self.engine.reader()
    }

    /// Applies events until every cluster has answered once (live or failed) or `timeout`
    /// passes. Returns whether every cluster answered.
    pub async fn settle(&mut self, timeout: Duration) -> bool {
        self.apply_until(timeout, Index::settled).await;
        self.index.settled()
    }

    /// Applies whatever arrives during `window`.
    pub async fn pump(&mut self, window: Duration) {
        self.apply_until(window, |_| false).await;
    }

    /// Applies events in batches until `done` says so, `within` passes or the engine stops.
    async fn apply_until(&mut self, within: Duration, done: impl Fn(&Index) -> bool) {
        let deadline = tokio::time::Instant::now() + within;
        while !done(&self.index) {
            tokio::select! {
                n = self.events.recv_many(&mut self.batch, 1024) => {
                    if n == 0 {
                        return;
                    }
                    for event in self.batch.drain(..) {
                        self.index.apply(event);
                    }
                }
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    /// The next event, not yet applied (for callers that look at the change first).
    pub async fn next_event(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    pub async fn shutdown(self) {
        self.engine.shutdown().await;
    }
}
