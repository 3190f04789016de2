//! A reader of the bus as a [`Source`]. Connecting, it reads the clusters' states only — a few
//! hundred bytes a cluster — so that the session knows every cluster at once. Started, it reads
//! their summaries (counts, and the not-ready objects), saying each cluster shown by its summary
//! as it comes; then it either streams every object into the session as it arrives (the fleet
//! view usable from the first values; `get` still waits for every cluster) and follows every
//! change; or, summarizing (more clusters than `engine.summary_above`, or `--watch-mode
//! summary`), it shows each cluster by its collector's summary and holds only the objects of
//! the clusters the user opens, read by key prefix and followed until more recently opened ones
//! push them out ([`opened`]). A cluster its collector summarizes is shown by its summary
//! either way, and opening it asks that collector to watch it.
//!
//! It holds no connection to any cluster. It reads nothing from clusters and sends nothing to
//! them: the session has no way to write through it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use futures::future::BoxFuture;

use super::keys::{self, StateKey};
use super::wire::{self, ClusterState};
use super::{Options, Stores};
use crate::fleet::{ClusterInfo, ClusterKey};
use crate::k8s::direct::Direct;
use crate::source::{Sink, Source};

mod direct;
mod follow;
mod initial;
mod kept;
mod opened;
mod summaries;

use direct::{FromBus, Servers, ToCluster};
pub use kept::cluster_key;
use kept::{Kept, Summed, cluster_name, read, shown, summarized_report};

/// The bus as a source: what it held when the reader connected, and how to follow it.
pub struct Bus {
    stores: Stores,
    clusters: BTreeMap<String, ClusterState>,
    /// Values that could not be read, by key: shown as warnings.
    pub problems: Vec<String>,
    /// The state bucket's last sequence when the clusters were read: what follows is followed.
    last: u64,
    /// The user's own kubeconfigs, for events, YAML, plugins and actions on the clusters they
    /// reach.
    direct: Option<Arc<Direct>>,
    /// Each cluster's API server, by name: how a cluster of the bus is found among the user's.
    servers: Servers,
    /// Where the bus is, for the history.
    options: Options,
    /// The collectors alive when it connected.
    live: BTreeSet<String>,
    /// Summarizing: the clusters opened.
    opening: Option<opened::Opening>,
    /// Where the clusters the user opens are said, and heard: by the opened clusters
    /// (summarizing), else by the reader's task (which asks the collectors that summarize them
    /// to watch them).
    opens: Option<tokio::sync::mpsc::Sender<ClusterKey>>,
    opened: Option<tokio::sync::mpsc::Receiver<ClusterKey>>,
    task: Option<tokio::task::JoinHandle<()>>,
    stop: tokio_util::sync::CancellationToken,
}

impl Bus {
    /// How this bus was reached (its proposals are kept beside it).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Connects and reads the clusters' states (not their summaries or objects).
    pub async fn connect(options: &Options) -> Result<Bus, super::BusError> {
        let client = super::connect(options, "fluxfleet reader").await?;
        let stores = super::open(client, options, None).await?;
        // A node lost and its leaders being elected: the whole read again, not a failure
        // (a one-shot read during a failover answers, whole).
        let first = super::answered(|| first_read(&stores), super::BusError::retryable).await?;
        let (opens, opened) = tokio::sync::mpsc::channel(64);
        Ok(Bus {
            clusters: first.clusters,
            problems: first.problems,
            last: first.last,
            direct: None,
            servers: Servers::default(),
            options: options.clone(),
            live: first.live,
            opening: None,
            opens: Some(opens),
            opened: Some(opened),
            task: None,
            stop: Default::default(),
            stores,
        })
    }

    /// Reads and acts on the clusters that the user's own kubeconfigs reach (by the API
    /// server's URL, else by name) directly, over a connection made when first needed.
    pub fn reaching(mut self, direct: Direct) -> Bus {
        self.direct = Some(Arc::new(direct));
        self
    }

    /// Shows every cluster by its collector's counts, holding the objects only of the last
    /// `warm` clusters the user opened.
    pub fn summarizing(mut self, warm: usize) -> Bus {
        if let Some(opened) = self.opened.take() {
            self.opening = Some(opened::Opening::new(warm, opened));
        }
        self
    }

    /// The state bucket read.
    pub fn bucket(&self) -> &str {
        &self.options.bucket
    }

    /// The clusters as their collectors last published them, by name (before the reader
    /// starts).
    pub fn states(&self) -> impl Iterator<Item = &ClusterState> {
        self.clusters.values()
    }
}

/// What a reader knows of the fleet before it starts, read in one go.
struct FirstRead {
    /// The collectors alive.
    live: BTreeSet<String>,
    /// The state bucket's last sequence before the clusters were read.
    last: u64,
    clusters: BTreeMap<String, ClusterState>,
    problems: Vec<String>,
}

/// The collectors alive, where the state bucket ends, then every cluster's state (a value
/// published meanwhile comes twice, which changes nothing).
async fn first_read(stores: &Stores) -> Result<FirstRead, super::BusError> {
    let live = super::collectors_alive(&stores.collectors).await?;
    let last = super::last_sequence(&stores.state.stream, "the state bucket").await?;
    let (mut clusters, mut problems) = (BTreeMap::new(), Vec::new());
    super::every_value(stores, "c.*", &mut |key, value| match keys::parse(key) {
        Some(StateKey::Cluster(name)) => match wire::read::<ClusterState>(value) {
            Ok(state) if state.name == name => {
                clusters.insert(name, state);
            }
            Ok(_) => problems.push(format!("{key}: names another cluster")),
            Err(e) => problems.push(format!("{key}: {e}")),
        },
        _ => problems.push(format!("{key}: not a key fluxfleet writes")),
    })
    .await?;
    Ok(FirstRead {
        live,
        last,
        clusters,
        problems,
    })
}

impl Source for Bus {
    fn clusters(&self) -> Vec<ClusterInfo> {
        self.clusters
            .values()
            .map(|s| ClusterInfo {
                unreachable: direct::unreachable(self.direct.as_ref(), s),
                ..s.info(cluster_key(&s.name))
            })
            .collect()
    }

    fn start(&mut self, sink: Sink) {
        let opening = self.opening.take();
        let follow = follow::Follow {
            sink,
            stores: self.stores.clone(),
            known: std::mem::take(&mut self.clusters)
                .into_iter()
                .map(|(name, state)| {
                    direct::remember(&self.servers, self.direct.as_ref(), &state);
                    (name, Kept::of(state))
                })
                .collect(),
            summaries: HashMap::new(),
            live: std::mem::take(&mut self.live),
            servers: self.servers.clone(),
            direct: self.direct.clone(),
            last: self.last,
            gone: HashMap::new(),
            opening,
            opens: self.opened.take(),
            asked: HashMap::new(),
            reports: HashMap::new(),
        };
        let stop = self.stop.clone();
        self.task = Some(tokio::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = follow.run() => {}
            }
        }));
    }

    fn reader(&self) -> Option<Arc<dyn crate::source::Read>> {
        Some(Arc::new(FromBus {
            direct: self.direct.clone(),
            servers: self.servers.clone(),
            options: self.options.clone(),
            opens: self.opens.clone(),
        }))
    }

    fn writer(&self, grant: &crate::config::WriteGrant) -> Option<Arc<dyn crate::source::Write>> {
        let direct = self.direct.clone()?;
        let writer = direct.writer(grant);
        Some(Arc::new(ToCluster {
            direct,
            writer,
            servers: self.servers.clone(),
        }))
    }

    fn stop(&mut self) -> BoxFuture<'_, ()> {
        self.stop.cancel();
        let task = self.task.take();
        Box::pin(async move {
            if let Some(task) = task {
                let _ = task.await;
            }
        })
    }
}
