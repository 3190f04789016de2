//! Reaching a cluster on demand, with the user's own kubeconfig, for a session whose fleet state
//! comes from elsewhere (collectors through NATS): an object's events and YAML, a plugin's
//! kubeconfig, and — only with the write grant — actions. One connection is made when first
//! needed and kept while the session runs; nothing is watched.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Mutex, mpsc};

use super::clients::{Clients, Registration};
use super::reader::KubeReader;
use super::task::connect::{self, TaskShared};
use super::writer::KubeWriter;
use crate::config::{self, WriteGrant};
use crate::fleet::index::Event;
use crate::fleet::read::ReadError;
use crate::fleet::{ClusterKey, SourceId};
use crate::inventory::ClusterSpec;
use crate::source::Sink;

/// The user's clusters, reachable on demand.
pub struct Direct {
    shared: Arc<TaskShared>,
    clients: Arc<Clients>,
    timeout: std::time::Duration,
    specs: Vec<ClusterSpec>,
    /// Where each spec is, by its server's URL (without a trailing `/`) and by its name, the
    /// first of each kept: every cluster of the bus is looked up here, at start and on arrival.
    by_server: HashMap<String, usize>,
    by_name: HashMap<String, usize>,
    /// The connections made, each kept while the session runs.
    held: Mutex<HashMap<ClusterKey, Registration>>,
    /// Nothing reports through it: no task watches anything.
    _events: mpsc::Receiver<Event>,
}

impl Direct {
    pub fn new(specs: Vec<ClusterSpec>, settings: &config::EngineSection) -> Direct {
        let clients = Arc::new(Clients::default());
        let (tx, events) = mpsc::channel(1);
        let shared = Arc::new(TaskShared::new(
            settings,
            Sink::new(SourceId(0), tx),
            clients.clone(),
            specs.len(),
            false,
        ));
        let (mut by_server, mut by_name) = (HashMap::new(), HashMap::new());
        for (i, s) in specs.iter().enumerate() {
            by_server
                .entry(s.server.trim_end_matches('/').to_string())
                .or_insert(i);
            by_name.entry(s.name.clone()).or_insert(i);
        }
        Direct {
            shared,
            clients,
            timeout: settings.connect_timeout,
            specs,
            by_server,
            by_name,
            held: Mutex::new(HashMap::new()),
            _events: events,
        }
    }

    /// The user's cluster at `server` (the API server's URL), else the one named `name`.
    pub fn spec(&self, server: &str, name: &str) -> Option<&ClusterSpec> {
        self.by_server
            .get(server.trim_end_matches('/'))
            .or_else(|| self.by_name.get(name))
            .and_then(|&i| self.specs.get(i))
    }

    /// Connects to `spec`'s cluster if this has not yet: credentials, client, discovery.
    pub async fn connect(&self, spec: &ClusterSpec) -> Result<ClusterKey, ReadError> {
        let key = spec.key();
        let mut held = self.held.lock().await;
        if held.contains_key(&key) {
            return Ok(key);
        }
        let (http, served) = connect::on_demand(spec, &self.shared, self.timeout).await?;
        held.insert(
            key.clone(),
            self.clients.register(key.clone(), Arc::new(http), served),
        );
        Ok(key)
    }

    /// Reads over the connections made.
    pub fn reader(&self) -> KubeReader {
        KubeReader {
            clients: self.clients.clone(),
            timeout: self.timeout,
            shared: None,
            summary: false,
        }
    }

    /// Sends actions over the connections made; only with the proof that writes are enabled.
    pub fn writer(&self, _grant: &WriteGrant) -> KubeWriter {
        KubeWriter {
            clients: self.clients.clone(),
            timeout: self.timeout,
            acting_as: None,
        }
    }
}
