//! `fluxfleet collect`: the engine on this collector's share of the fleet, published into the
//! bus. Every `ttl / 3` a collector renews its announcement (a key with the bucket's age limit
//! `ttl`, renewed by a task of its own, so that a collector busy publishing is not taken for
//! dead) and reads who else is alive; each cluster belongs to the live collector that ranks
//! highest for it ([`owner`]: rendezvous hashing), so when one dies its clusters spread over the
//! others within `ttl` and a tick, and come back when it returns — no coordinator, no cluster
//! watched twice once the collectors agree on who is alive.
//!
//! Taking a cluster over, a collector first reads what the bucket holds for it, so that its
//! first list replaces those keys (deleting only what the cluster no longer has) and nothing is
//! lost in between. Handing one over, it stops watching and leaves the keys to the next owner.
//! Clusters its inventory does not have, among those it would own, are deleted from the bus.
//!
//! `fluxfleet collect` gives it the fleet by name: the credentials of a cluster from a kubeconfig
//! file are read when the collector takes the cluster and dropped when it hands it over, so a
//! collector holds the kubeconfigs of its share, not of the fleet ([`refresh`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_nats::jetstream;
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod announce;
mod outbox;
mod publish;
mod reach;
mod refresh;
pub mod rings;
mod state;
pub mod status;
mod take_over;
mod text;

use announce::{Aborting, announce};
use refresh::reread;
pub use state::Refresh;
use state::{Collector, Owned, Published};
use take_over::take_over;

use super::rendezvous::owner;
use super::wire::{self, ClusterState};
use super::{BusError, Options, Retention, Stores, keys, last_values};
use crate::config;
use crate::fleet::index::Event;
use crate::fleet::{Phase, SourceId};
use crate::inventory::{ClusterSpec, Problem, Reread};
use crate::k8s::Engine;
use crate::source::Sink;

/// What a collector is asked to do.
pub struct Collecting {
    pub options: Options,
    /// Unique among the collectors of a bucket (default: host and process id).
    pub id: String,
    pub retention: Retention,
    /// The whole fleet, to share out: the clusters of kubeconfig files may come by name alone
    /// ([`crate::inventory::list`]), their credentials read (from `reread`) when this collector
    /// takes them, and dropped when it hands them over.
    pub clusters: Vec<ClusterSpec>,
    pub reread: Reread,
    pub settings: config::EngineSection,
    /// Reads the fleet again (kubeconfigs, management clusters) every
    /// `settings.discovery_interval`: clusters that join are shared out, clusters that leave are
    /// deleted from the bus, a changed kubeconfig reconnects.
    pub refresh: Option<Refresh>,
    /// Told to stop, how long it has to withdraw its announcement and publish what it holds.
    pub shutdown: std::time::Duration,
    /// Where the collector says how it is, at each tick: for its probes and metrics.
    pub status: Arc<status::StatusBoard>,
    /// Ring metrics on `/metrics`, worked out from the history every so often.
    pub rings: Option<rings::RingsAsked>,
}

/// Runs until `stop` fires: then it withdraws its announcement (so that the others take its
/// clusters over at their next tick), stops the engine and waits for what it published.
pub async fn run(request: Collecting, stop: CancellationToken) -> Result<(), BusError> {
    let stuck_after = status::stuck_after(request.retention.ttl);
    let reaching = reach::Reaching {
        options: &request.options,
        id: &request.id,
        retention: request.retention,
        status: &request.status,
        stuck_after,
    };
    let Some((client, stores)) = reach::reach(reaching, &stop).await? else {
        return Ok(());
    };
    let asking = format!("{}.*", stores.names.warm);
    let mut warms = client
        .subscribe(asking.clone())
        .await
        .map_err(|e| BusError::jetstream(format!("subscribing to {asking}"), e))?;
    // Whether to summarize is decided by the whole fleet, not by this collector's share (its
    // engine starts with none of it).
    let (tx, mut events) = mpsc::channel::<Event>(4096);
    let fleet = request.clusters.len();
    let sink = Sink::new(SourceId(0), tx);
    let engine = Engine::start_in(Vec::new(), fleet, &request.settings, sink);
    let ttl = request.retention.ttl;
    let fleet = (request.clusters, request.reread);
    let mut collector = Collector::new(request.id.clone(), stores, fleet, engine, ttl);
    // Stopped with the collector however it ends (aborted too): a dead collector's
    // announcement must lapse.
    let announcer = Aborting(Some(tokio::spawn(announce(
        collector.stores.collectors.clone(),
        collector.id.clone(),
        collector.announced.clone(),
        ttl,
    ))));
    // Ring metrics, off the loop: reading a day of history takes a while.
    let ring_metrics = request.rings.clone().map(|asked| {
        let (options, kept) = (request.options.clone(), collector.ring_figures.clone());
        rings::Working::start(options, asked, kept, collector.specs.values())
    });
    request.status.set(collector.snapshot(stuck_after));
    let mut tick = tokio::time::interval(request.retention.ttl / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut summing = tokio::time::interval(publish::SUMMARIES_EVERY);
    summing.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut batch = Vec::with_capacity(512);
    // Cluster states others write: one naming another collector, for a cluster this one owns,
    // is a late word from its last owner (which had not yet seen this one).
    let state = &collector.stores.state;
    let mut others = super::placed("watching the cluster states", || state.watch("c.*")).await?;
    // The fleet read again off the loop, so that a slow management cluster delays nothing.
    let (refreshed_tx, mut refreshed) = mpsc::channel::<Result<Vec<ClusterSpec>, Problem>>(1);
    let every = request
        .settings
        .discovery_interval
        .max(std::time::Duration::from_millis(100));
    let refresher = request
        .refresh
        .clone()
        .map(|refresh| tokio::spawn(reread(refresh, every, refreshed_tx)));
    // Told to stop, whatever the loop is waiting on is abandoned (a publish or a heartbeat to a
    // bus that stopped answering holds it for as long as the bus says nothing).
    let following = async {
        loop {
            tokio::select! {
                Some(Ok(entry)) = others.next() => collector.noticed(&entry),
                Some(asked) = warms.next() => {
                    if collector.warm(&asked)
                        && let Some(reply) = asked.reply
                    {
                        let _ = client.publish(reply, "watching".into()).await;
                    }
                }
                Some(specs) = refreshed.recv() => {
                    match specs {
                        Ok(specs) => {
                            if let Err(e) = collector.refreshed(specs).await {
                                tracing::warn!(error = %e, "the fleet read again could not be shared out");
                            }
                            if let Some(working) = &ring_metrics {
                                working.fleet(collector.specs.values());
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "reading the fleet again; nothing changed"),
                    }
                }
                _ = tick.tick() => {
                    collector.outbox.resend().await;
                    let looked = collector.heartbeat().await;
                    if let Err(e) = &looked {
                        tracing::warn!(error = %e, "collector heartbeat");
                    }
                    collector.looked = Some(looked);
                    if let Some(working) = &ring_metrics {
                        working.collectors(&collector.id, &collector.members);
                    }
                    if let Some(size) = history_size(&mut collector.stores.history).await {
                        collector.history_size = Some(size);
                    }
                    request.status.set(collector.snapshot(stuck_after));
                }
                n = events.recv_many(&mut batch, 512) => {
                    if n == 0 {
                        break;
                    }
                    for event in batch.drain(..) {
                        collector.publish(event).await;
                    }
                }
                acked = collector.outbox.next() => collector.outbox.acked(acked),
                _ = summing.tick() => collector.publish_summaries().await,
            }
        }
    };
    tokio::select! {
        _ = stop.cancelled() => {}
        () = following => {}
    }
    if let Some(refresher) = refresher {
        refresher.abort();
    }
    // What can be done within `request.shutdown` is: the announcement withdrawn (so that the
    // others take its clusters over at their next tick, not after --ttl), what was published
    // acknowledged; what cannot is abandoned and said.
    // Half for the announcement, the rest for the watches and what was published.
    let (started, half) = (tokio::time::Instant::now(), request.shutdown / 2);
    let until = started + request.shutdown;
    let within = |what: &'static str, within: std::time::Duration| {
        move |_| BusError::Stopping { what, within }
    };
    announcer.stop().await;
    if let Some(working) = ring_metrics {
        let _ = tokio::time::timeout_at(until, working.stop()).await;
    }
    let withdrawing = collector.stores.collectors.delete(&collector.id);
    let withdrawn = tokio::time::timeout_at(started + half, withdrawing)
        .await
        .map_err(within("withdrawing its announcement", half))
        .and_then(|deleted| {
            deleted.map_err(|e| BusError::jetstream("withdrawing its announcement", e))
        });
    if let Err(e) = withdrawn {
        tracing::warn!(error = %e, "the others take this collector's clusters over after --ttl");
    }
    let stopped = tokio::time::timeout_at(until, collector.engine.shutdown()).await;
    let flushed = tokio::time::timeout_at(until, collector.outbox.flush()).await;
    if let Err(e) = stopped
        .map_err(within("stopping its watches", request.shutdown))
        .and(flushed.map_err(within("publishing what it held", request.shutdown)))
    {
        tracing::warn!(error = %e, "abandoned");
    }
    Ok(())
}

/// The history stream's size as the server says it now; None when it does not answer soon (the
/// last size read stands).
async fn history_size(history: &mut jetstream::stream::Stream) -> Option<status::HistorySize> {
    let asked = tokio::time::timeout(std::time::Duration::from_secs(2), history.info());
    let info = asked.await.ok()?.ok()?;
    Some(status::HistorySize {
        bytes: info.state.bytes,
        messages: info.state.messages,
        max_bytes: u64::try_from(info.config.max_bytes).unwrap_or(0),
    })
}

impl Collector {
    /// A collector of `clusters` (their credentials read again from `reread`), owning none of
    /// them yet.
    fn new(
        id: String,
        stores: Stores,
        (clusters, reread): (Vec<ClusterSpec>, Reread),
        engine: Engine,
        ttl: std::time::Duration,
    ) -> Collector {
        Collector {
            outbox: outbox::Outbox::new(stores.js.clone(), &id),
            id,
            stores,
            names: clusters.iter().map(|s| (s.key(), s.name.clone())).collect(),
            specs: clusters.into_iter().map(|s| (s.name.clone(), s)).collect(),
            reread,
            unreadable: BTreeSet::new(),
            engine,
            owned: HashMap::new(),
            members: BTreeSet::new(),
            waiting: BTreeMap::new(),
            overwritten: BTreeSet::new(),
            unsummed: BTreeSet::new(),
            ttl,
            announced: Arc::new(AtomicUsize::new(0)),
            connection_errors: BTreeMap::new(),
            watch_restarts: 0,
            looked: None,
            history_size: None,
            ring_figures: rings::Kept::default(),
        }
    }

    /// Reads who is alive, and takes over or hands over clusters.
    async fn heartbeat(&mut self) -> Result<(), BusError> {
        let mut members = super::collectors_alive(&self.stores.collectors).await?;
        // Whatever the bucket says, this one is alive.
        members.insert(self.id.clone());
        if members != self.members {
            tracing::info!(collectors = ?members, "collectors changed");
            self.members = members;
            self.rebalance().await?;
        }
        self.take_back();
        let started = self.start_waiting().await;
        self.announced.store(self.owned.len(), Ordering::Relaxed);
        started
    }

    /// A reader asks for a cluster's objects: its owner watches them (a summarized one among
    /// its last `engine.warm_clusters` opened) and answers; the others leave it to the owner.
    fn warm(&self, asked: &async_nats::Message) -> bool {
        let Ok(name) = std::str::from_utf8(&asked.payload) else {
            return false;
        };
        let Some(spec) = self
            .specs
            .get(name)
            .filter(|_| self.owned.contains_key(name))
        else {
            return false;
        };
        crate::source::Read::open(&self.engine.reader(), &spec.key());
        tracing::debug!(cluster = %name, "a reader asked for its objects");
        true
    }

    /// A cluster state was written: by another collector, for a cluster this one owns?
    fn noticed(&mut self, entry: &jetstream::kv::Entry) {
        let Some(keys::StateKey::Cluster(name)) = keys::parse(&entry.key) else {
            return;
        };
        if !self.owned.contains_key(&name) {
            return;
        }
        if wire::read::<ClusterState>(&entry.value).is_ok_and(|s| s.collector != self.id) {
            self.overwritten.insert(name);
        }
    }

    /// The clusters another collector wrote over since the last tick are read again from the
    /// bus and watched anew, so that what this one publishes replaces whatever came late.
    fn take_back(&mut self) {
        let now = tokio::time::Instant::now();
        for name in std::mem::take(&mut self.overwritten) {
            if self.owned.remove(&name).is_none() {
                continue;
            }
            tracing::info!(cluster = %name, "written by another collector: publishing it again");
            if let Some(spec) = self.specs.get(&name) {
                self.engine.remove(&spec.key());
            }
            self.waiting.insert(name, now);
        }
    }

    /// Starts watching the clusters whose wait is over, their credentials read (those that
    /// cannot be read wait for the next tick).
    async fn start_waiting(&mut self) -> Result<(), BusError> {
        let now = tokio::time::Instant::now();
        let due: Vec<ClusterSpec> = self
            .waiting
            .iter()
            .filter(|(_, at)| **at <= now)
            .filter_map(|(name, _)| self.specs.get(name).cloned())
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        let mut ready = BTreeSet::new();
        for spec in self.read_credentials(due).await {
            ready.insert(spec.name.clone());
            self.specs.insert(spec.name.clone(), spec);
        }
        if ready.is_empty() {
            return Ok(());
        }
        let reading = std::time::Instant::now();
        let taken = take_over(&self.stores, &ready, self.specs.len()).await?;
        tracing::info!(
            clusters = taken.len(),
            seconds = reading.elapsed().as_secs_f64(),
            "taking clusters over: what the bus holds for them read; watching them"
        );
        for (name, owned) in taken {
            self.waiting.remove(&name);
            self.owned.insert(name.clone(), owned);
            self.unsummed.insert(name.clone());
            if let Some(spec) = self.specs.get(&name) {
                self.engine.add(spec.clone());
            }
        }
        Ok(())
    }

    /// Watches exactly the clusters this collector owns among the live ones.
    async fn rebalance(&mut self) -> Result<(), BusError> {
        let mine: BTreeSet<String> = self
            .specs
            .keys()
            .filter(|name| owner(name, &self.members) == Some(self.id.as_str()))
            .cloned()
            .collect();
        // Handed over, or no longer to be taken: its credentials dropped too.
        let gone: Vec<String> = self
            .owned
            .keys()
            .chain(self.waiting.keys())
            .filter(|n| !mine.contains(*n))
            .cloned()
            .collect();
        for name in gone {
            self.waiting.remove(&name);
            if self.owned.remove(&name).is_some()
                && let Some(spec) = self.specs.get(&name)
            {
                self.engine.remove(&spec.key());
            }
            self.forget_credentials(&name);
        }
        // Its last owner lets it go at its next tick (every ttl / 3): until then both would
        // publish, and the last owner's late word could outlive this one's.
        let after = tokio::time::Instant::now() + self.ttl / 2;
        for name in mine {
            if !self.owned.contains_key(&name) {
                self.waiting.entry(name).or_insert(after);
            }
        }
        self.forget_strangers().await
    }

    /// Deletes the clusters on the bus that no inventory has, among those this one would own.
    async fn forget_strangers(&mut self) -> Result<(), BusError> {
        for (key, _) in last_values(&self.stores, "c.*").await? {
            let Some(keys::StateKey::Cluster(name)) = keys::parse(&key) else {
                continue;
            };
            if self.specs.contains_key(&name) || owner(&name, &self.members) != Some(&self.id) {
                continue;
            }
            for (object, _) in last_values(&self.stores, &keys::objects_of(&name)).await? {
                let _ = self.stores.state.delete(&object).await;
            }
            let _ = self.stores.state.delete(keys::summary(&name)).await;
            let _ = self.stores.state.delete(&key).await;
        }
        Ok(())
    }
}
impl Collector {
    /// What the loop says of itself now.
    fn snapshot(&self, stuck_after: std::time::Duration) -> status::Snapshot {
        let mut clusters = BTreeMap::new();
        let mut objects = BTreeMap::new();
        for owned in self.owned.values() {
            let workspace = owned.workspace();
            let phase = owned.state.as_ref().map_or(Phase::Connecting, |s| s.phase);
            *clusters.entry((workspace.clone(), phase)).or_insert(0) += 1;
            for (health, n) in owned.counts().iter() {
                *objects.entry((workspace.clone(), health)).or_insert(0) += u64::from(n);
            }
        }
        let connected = matches!(
            self.stores.js.client().connection_state(),
            async_nats::connection::State::Connected
        );
        let out = self.outbox.figures();
        let not_ready = match &self.looked {
            _ if !connected => Some(status::NotReady::Disconnected),
            None => Some(status::NotReady::NotLooked),
            Some(Err(e)) => Some(status::NotReady::Bus(e.clone())),
            Some(Ok(())) if !self.waiting.is_empty() => {
                Some(status::NotReady::Waiting(self.waiting.len()))
            }
            Some(Ok(())) if out.published == 0 && !self.owned.is_empty() => {
                Some(status::NotReady::Unpublished(self.owned.len()))
            }
            Some(Ok(())) => None,
        };
        status::Snapshot {
            id: self.id.clone(),
            at: Some(tokio::time::Instant::now()),
            not_ready,
            stuck_after,
            fleet: self.specs.len(),
            owned: self.owned.len(),
            waiting: self.waiting.len(),
            collectors: self.members.len(),
            clusters,
            objects,
            connection_errors: self.connection_errors.clone(),
            watch_restarts: self.watch_restarts,
            published: out.published,
            publish_failures: out.failures,
            in_flight: out.in_flight,
            kept: out.kept,
            history_dropped: out.dropped,
            history: self.history_size,
            lag: out.lag,
            rings: self
                .ring_figures
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        }
    }
}
