//! The engine: one task per cluster, all reporting into the [`Sink`] of the session that owns
//! the fleet index (the TUI, `fluxfleet get`). Clusters are named by their key; the engine never
//! numbers them.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::clients::Clients;
use super::reader::KubeReader;
use super::task::cluster;
use super::task::connect::TaskShared;
use super::writer::KubeWriter;
use crate::config::{self, WriteGrant};
use crate::fleet::ClusterKey;
use crate::inventory::ClusterSpec;
use crate::source::Sink;

/// The running engine. Dropping it without [`Engine::shutdown`] also stops every task.
pub struct Engine {
    cancel: CancellationToken,
    tasks: JoinSet<()>,
    reader: KubeReader,
    shared: Arc<TaskShared>,
    settings: config::EngineSection,
    /// Each starting cluster's own token (a child of `cancel`): a follower may stop one.
    tokens: HashMap<ClusterKey, CancellationToken>,
}

impl Engine {
    /// Starts watching `clusters`, sending what it sees into `sink`. Must run inside a tokio
    /// runtime.
    pub fn start(
        clusters: Vec<ClusterSpec>,
        settings: &config::EngineSection,
        sink: Sink,
    ) -> Engine {
        let fleet = clusters.len();
        Engine::start_in(clusters, fleet, settings, sink)
    }

    /// Starts watching `clusters` of a fleet of `fleet` clusters, the others added later (a
    /// collector takes its share as the collectors agree on it): whether to summarize, and how
    /// many TLS sessions to keep, are the fleet's.
    pub fn start_in(
        clusters: Vec<ClusterSpec>,
        fleet: usize,
        settings: &config::EngineSection,
        sink: Sink,
    ) -> Engine {
        let clients = Arc::new(Clients::default());
        let summary = settings.summarizes(fleet, config::Reading::Clusters);
        let shared = Arc::new(TaskShared::new(
            settings,
            sink,
            clients.clone(),
            fleet,
            summary,
        ));
        let cancel = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let mut tokens = HashMap::new();
        for spec in clusters {
            let token = cancel.child_token();
            tokens.insert(spec.key(), token.clone());
            tasks.spawn(cluster::run(spec, shared.clone(), token));
        }
        let reader = KubeReader {
            clients,
            timeout: settings.connect_timeout,
            shared: Some(shared.clone()),
            summary,
        };
        Engine {
            cancel,
            tasks,
            reader,
            shared,
            settings: settings.clone(),
            tokens,
        }
    }

    /// Sends actions; only with the proof that writes are enabled.
    pub fn writer(&self, _grant: &WriteGrant) -> KubeWriter {
        KubeWriter {
            clients: self.reader.clients.clone(),
            timeout: self.reader.timeout,
            acting_as: None,
        }
    }

    /// Reads events and YAML from connected clusters. It has no way to change anything.
    pub fn reader(&self) -> KubeReader {
        self.reader.clone()
    }

    /// Reads `management` again every `discovery_interval`: clusters that appear there join
    /// the fleet (a [`Change::Added`](crate::fleet::index::Change::Added) event, then their own
    /// task), clusters that vanish leave it ([`Change::Retired`](crate::fleet::index::Change::Retired)),
    /// a changed kubeconfig or lifecycle restarts that cluster's task. `known` are the clusters
    /// found on it at start.
    pub fn follow(
        &mut self,
        management: ClusterSpec,
        workspace_label: Option<String>,
        known: Vec<ClusterSpec>,
        reserved: std::collections::HashSet<String>,
    ) {
        let follower = super::follow::Follower {
            management,
            workspace_label,
            shared: self.shared.clone(),
            settings: self.settings.clone(),
            cancel: self.cancel.clone(),
            reserved,
        };
        let known = known
            .into_iter()
            .filter_map(|spec| {
                let token = self.tokens.get(&spec.key())?.clone();
                Some((spec, token))
            })
            .collect();
        self.tasks.spawn(follower.run(known));
    }

    /// Starts watching `spec` too (a collector that takes a cluster over); a cluster it already
    /// watches is left as it is.
    pub fn add(&mut self, spec: ClusterSpec) {
        let key = spec.key();
        if self.tokens.get(&key).is_some_and(|t| !t.is_cancelled()) {
            return;
        }
        let token = self.cancel.child_token();
        self.tokens.insert(key, token.clone());
        self.tasks
            .spawn(cluster::run(spec, self.shared.clone(), token));
        // Ended tasks are reaped as others start, so a long-running collector does not grow.
        while self.tasks.try_join_next().is_some() {}
    }

    /// Stops watching the cluster of `key` (a collector that hands it over); its task ends and
    /// lets its connection go.
    pub fn remove(&mut self, key: &ClusterKey) {
        if let Some(token) = self.tokens.remove(key) {
            token.cancel();
        }
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
