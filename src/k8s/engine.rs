//! The engine: one task per cluster, all reporting into one channel of [`Event`]s that the owner
//! of the fleet index (the TUI, `fluxfleet get`) drains.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::cluster::{self, Shared};
use super::reader::{Clients, Reader};
use super::writer::{WriteGrant, Writer};
use crate::config;
use crate::fleet::ClusterId;
use crate::fleet::index::Event;
use crate::inventory::ClusterSpec;

/// Events in flight between the cluster tasks and the index. When the owner falls behind, the
/// watches wait (HTTP/2 flow control holds the rest on the servers) instead of memory growing.
const CHANNEL: usize = 4096;

/// The running engine. Dropping it without [`Engine::shutdown`] also stops every task.
pub struct Engine {
    cancel: CancellationToken,
    tasks: JoinSet<()>,
    reader: Reader,
    shared: Arc<Shared>,
    settings: config::Engine,
    /// The next id for a cluster that joins while running (the index assigns the same).
    next_id: Arc<AtomicU32>,
    /// Each starting cluster's own token (a child of `cancel`): a follower may stop one.
    tokens: HashMap<ClusterId, CancellationToken>,
}

impl Engine {
    /// Starts watching `clusters` (ids as the index gave them). Must run inside a tokio runtime.
    pub fn start(
        clusters: Vec<(ClusterId, ClusterSpec)>,
        settings: &config::Engine,
    ) -> (Engine, mpsc::Receiver<Event>) {
        let (events, receiver) = mpsc::channel(CHANNEL);
        let clients = Arc::new(Clients::default());
        let shared = Arc::new(Shared::new(settings, events, clients.clone()));
        let cancel = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let next_id = Arc::new(AtomicU32::new(clusters.len() as u32));
        let mut tokens = HashMap::new();
        for (id, spec) in clusters {
            let token = cancel.child_token();
            tokens.insert(id, token.clone());
            tasks.spawn(cluster::run(id, spec, shared.clone(), token));
        }
        let reader = Reader {
            clients,
            timeout: settings.connect_timeout,
        };
        (
            Engine {
                cancel,
                tasks,
                reader,
                shared,
                settings: settings.clone(),
                next_id,
                tokens,
            },
            receiver,
        )
    }

    /// Sends actions; only with the proof that writes are enabled, and only to the clusters
    /// `writable` says (by cluster id).
    pub fn writer(&self, _grant: WriteGrant, writable: Vec<bool>) -> Writer {
        Writer {
            clients: self.reader.clients.clone(),
            writable: writable.into(),
            timeout: self.reader.timeout,
        }
    }

    /// Reads events and YAML from connected clusters. It has no way to change anything.
    pub fn reader(&self) -> Reader {
        self.reader.clone()
    }

    /// Reads `management` again every `discovery_interval`: clusters that appear there join
    /// the fleet (an [`Change::Added`] event, then their own task), clusters that vanish leave it
    /// ([`Change::Retired`]), a changed kubeconfig or lifecycle restarts that cluster's task.
    /// `known` are the clusters found on it at start, with their ids.
    pub fn follow(
        &mut self,
        management: ClusterSpec,
        workspace_label: Option<String>,
        known: Vec<(ClusterId, ClusterSpec)>,
        reserved: std::collections::HashSet<String>,
    ) {
        let follower = super::follow::Follower {
            management,
            workspace_label,
            shared: self.shared.clone(),
            settings: self.settings.clone(),
            next_id: self.next_id.clone(),
            cancel: self.cancel.clone(),
            reserved,
        };
        let known = known
            .into_iter()
            .filter_map(|(id, spec)| Some((id, spec, self.tokens.get(&id)?.clone())))
            .collect();
        self.tasks.spawn(follower.run(known));
    }

    /// Stops every cluster task and waits for them to end.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        while self.tasks.join_next().await.is_some() {}
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
