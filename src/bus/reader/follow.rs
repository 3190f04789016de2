//! The reader's task: the clusters said to the session, their objects streamed in as they
//! arrive (or, summarizing, their counts), then every change followed — and every 2 s, which
//! collectors are alive.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use async_nats::jetstream::kv::{Entry, Operation, Watch};
use futures::StreamExt;

use super::super::Stores;
use super::super::keys::{self, StateKey};
use super::super::wire::{self, ClusterState};
use super::direct::{Servers, remember};
use super::opened::{Found, Next, Opening};
use super::{Kept, Summed, cluster_key, cluster_name, read, shown, summarized_report};
use crate::fleet::index::Change;
use crate::fleet::{Counted, FluxKind};
use crate::source::{Closed, Sink};

/// How often a reader looks again at which collectors are alive.
const LOOK: Duration = Duration::from_secs(2);

/// Errors in a row after which the watches are made again: at the first — a watch that errs
/// has lost its consumer (a missed heartbeat), and the client's own way of making it again
/// can take a minute on a cluster that has just lost a node.
const WATCH_FAILURES: u32 = 1;

/// How often a cluster's collector is asked at most to watch its objects (while it is open
/// and its collector still summarizes it).
pub(super) const ASK_AGAIN: Duration = Duration::from_secs(10);

/// The reader's watches, as one stream.
pub(super) type Watches = futures::stream::SelectAll<Watch>;

pub(super) struct Follow {
    pub(super) sink: Sink,
    pub(super) stores: Stores,
    pub(super) known: BTreeMap<String, Kept>,
    pub(super) summaries: HashMap<String, Summed>,
    pub(super) live: BTreeSet<String>,
    /// When this reader saw each collector that was alive go: its clusters are stale since.
    pub(super) gone: HashMap<String, jiff::Timestamp>,
    pub(super) servers: Servers,
    /// What reaches clusters with the user's own kubeconfigs: which clusters actions reach.
    pub(super) direct: Option<std::sync::Arc<crate::k8s::direct::Direct>>,
    pub(super) last: u64,
    /// Summarizing: the clusters opened.
    pub(super) opening: Option<Opening>,
    /// Streaming: where the clusters the user opens are said (their collector is asked to watch
    /// the ones it summarizes).
    pub(super) opens: Option<tokio::sync::mpsc::Receiver<crate::fleet::ClusterKey>>,
    /// When each cluster's collector was last asked to watch its objects.
    pub(super) asked: HashMap<String, tokio::time::Instant>,
    /// What tells each cluster's report, as last said, from a new one (the session keeps the
    /// report; the states in `known` are kept without it).
    pub(super) reports: HashMap<String, u64>,
}

impl Follow {
    pub(super) async fn run(mut self) -> Result<(), Closed> {
        let (watches, unfollowed) = self.watches().await;
        let mut watches = futures::stream::select_all(watches);
        let names: Vec<String> = self.known.keys().cloned().collect();
        let said = self.stream_summaries().await?;
        if self.opening.is_some() {
            for name in names.iter().filter(|n| !said.contains(*n)) {
                self.summarized_again(name, false).await?;
            }
        } else {
            let failed = self.stream_objects().await?;
            let behind = self.catch_up(&mut watches).await?;
            let failed = failed.or(behind);
            for name in &names {
                if said.contains(name) {
                    // Its collector summarizes it: no object of it is on the bus.
                    continue;
                }
                if let Some(summary) = self.summaries.get_mut(name) {
                    summary.held = None;
                }
                let key = cluster_key(name);
                if let Some(report) = self.take_report(name) {
                    self.sink
                        .send(&key, Change::Report(Some(Box::new(report))))
                        .await?;
                }
                let Some(state) = self.known.get(name) else {
                    continue;
                };
                // The cluster answers last: a session that settles has its objects.
                let mut connection = shown(state, &self.live, false, self.gone_since(state));
                if let Some(why) = &failed {
                    connection.phase = crate::fleet::Phase::TimedOut;
                    connection.error =
                        Some(format!("its objects could not be read from the bus: {why}").into());
                }
                self.sink.send(&key, Change::Connection(connection)).await?;
            }
        }
        if let Some(why) = unfollowed {
            // Shown as read, and said: nothing after it will come.
            tracing::warn!(error = %why, "following the bus");
            for (name, state) in &self.known {
                let summarized = self.summarized(self.opening.as_ref(), name);
                let mut connection = shown(state, &self.live, summarized, self.gone_since(state));
                connection.phase = crate::fleet::Phase::TimedOut;
                connection.error = Some(
                    format!("the bus cannot be followed ({why}): shown as it was read").into(),
                );
                self.sink
                    .send(&cluster_key(name), Change::Connection(connection))
                    .await?;
            }
        }
        self.follow(watches).await
    }

    /// Watches from where the clusters were read: every key, or summarizing, the clusters'
    /// states and summaries (objects only of the clusters opened).
    pub(super) async fn watches(&self) -> (Vec<Watch>, Option<crate::bus::BusError>) {
        let from = self.last + 1;
        let state = &self.stores.state;
        let filters: &[&str] = if self.opening.is_some() {
            &["c.*", "s.*"]
        } else {
            &[">"]
        };
        let mut watches = Vec::new();
        let mut failed = None;
        for filter in filters {
            let made = super::super::placed("watching the state bucket", || {
                state.watch_from_revision(*filter, from)
            })
            .await;
            match made {
                Ok(watch) => watches.push(watch),
                Err(e) => failed = Some(e),
            }
        }
        (watches, failed)
    }

    async fn follow(mut self, mut watches: Watches) -> Result<(), Closed> {
        let mut look = tokio::time::interval(LOOK);
        let mut opening = self.opening.take();
        let mut opens = self.opens.take();
        // The watches are made again, from the last revision taken, when the client has
        // connected again (its server lost: the consumers behind the watches may have gone
        // with it), when they fail (a consumer lost with another node), or when they end.
        let mut connects = self.connects();
        let mut failures = 0;
        loop {
            let mut again = false;
            tokio::select! {
                Some(key) = next_open(opens.as_mut()) => {
                    if let Some(name) = cluster_name(&key).filter(|n| self.by_report(n)) {
                        self.ask_to_watch(name);
                    }
                }
                entry = watches.next() => match entry {
                    Some(Ok(entry)) => {
                        failures = 0;
                        self.last = self.last.max(entry.revision);
                        self.entry(entry, opening.as_ref()).await?;
                    }
                    // An erring watch can err again at once: wait, so that this task yields
                    // (and sees being stopped) instead of spinning.
                    Some(Err(e)) => {
                        failures += 1;
                        tracing::debug!(error = %e, failures, "following the state bucket");
                        again = failures >= WATCH_FAILURES;
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    None => {
                        // Not at once: a bus that refuses them must not be asked in a loop.
                        again = true;
                        tokio::time::sleep(LOOK).await;
                    }
                },
                Some(next) = next_opening(opening.as_mut()) => {
                    if let Some(o) = opening.as_mut() {
                        self.opened(o, next).await?;
                    }
                }
                _ = look.tick() => {
                    again = self.connects() != connects;
                    self.look(opening.as_ref()).await?;
                    if let Some(o) = opening.as_ref() {
                        let open: Vec<String> = self
                            .known
                            .keys()
                            .filter(|n| o.is_open(n) && self.by_report(n))
                            .cloned()
                            .collect();
                        for name in open {
                            self.ask_to_watch(&name);
                        }
                    }
                }
            }
            if again {
                tracing::info!(from = self.last + 1, "following the state bucket again");
                connects = self.connects();
                failures = 0;
                let (made, failed) = self.watches().await;
                if let Some(e) = failed {
                    tracing::warn!(error = %e, "following the state bucket again; will retry");
                }
                // None made: the stream of none ends at once, and it is tried again then.
                watches = futures::stream::select_all(made);
            }
        }
    }

    /// When the collector of `state` was seen to go, if it was.
    pub(super) fn gone_since(&self, state: &Kept) -> Option<jiff::Timestamp> {
        self.gone.get(state.collector()).copied()
    }

    /// How many times the reader's client has connected to the bus so far.
    fn connects(&self) -> u64 {
        let client = self.stores.js.client();
        client
            .statistics()
            .connects
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A cluster opened, or what an opened cluster's task found.
    async fn opened(&mut self, o: &mut Opening, next: Next) -> Result<(), Closed> {
        match next {
            Next::Open(key) => {
                let Some(name) = cluster_name(&key).filter(|n| self.known.contains_key(*n)) else {
                    return Ok(());
                };
                let name = name.to_string();
                for cold in o.open(&name, &self.stores) {
                    self.summarized_again(&cold, true).await?;
                }
                if self.by_report(&name) {
                    self.ask_to_watch(&name);
                }
                Ok(())
            }
            Next::Found(name, n, _) if !o.current(&name, n) => Ok(()),
            Next::Found(name, _, Found::Objects(objects)) => self.opened_with(&name, objects).await,
            Next::Found(_, _, Found::Entry(entry)) => self.entry(entry, Some(o)).await,
            Next::Found(name, _, Found::Failed(e)) => {
                tracing::warn!(cluster = %name, error = %e, "opening a cluster of the bus");
                o.close(&name);
                self.summarized_again(&name, true).await
            }
        }
    }

    /// Which collectors are alive now: clusters whose collector came or went show it.
    async fn look(&mut self, opening: Option<&Opening>) -> Result<(), Closed> {
        let Ok(now) = super::super::collectors_alive(&self.stores.collectors).await else {
            return Ok(());
        };
        if now == self.live {
            return Ok(());
        }
        let at = jiff::Timestamp::now();
        for id in self.live.difference(&now) {
            self.gone.insert(id.clone(), at);
        }
        self.gone.retain(|id, _| !now.contains(id));
        for (name, state) in &self.known {
            if self.live.contains(state.collector()) != now.contains(state.collector()) {
                let c = shown(
                    state,
                    &now,
                    self.summarized(opening, name),
                    self.gone_since(state),
                );
                self.sink
                    .send(&cluster_key(name), Change::Connection(c))
                    .await?;
            }
        }
        self.live = now;
        Ok(())
    }

    /// One entry of the bucket after the clusters were read, as the session's changes.
    pub(super) async fn entry(
        &mut self,
        entry: Entry,
        opening: Option<&Opening>,
    ) -> Result<(), Closed> {
        let deleted = matches!(entry.operation, Operation::Delete | Operation::Purge);
        match keys::parse(&entry.key) {
            Some(StateKey::Cluster(name)) => {
                let key = cluster_key(&name);
                if deleted {
                    self.summaries.remove(&name);
                    if self.known.remove(&name).is_some() {
                        self.sink.send(&key, Change::Retired).await?;
                    }
                    return Ok(());
                }
                let Ok(state) = wire::read::<ClusterState>(&entry.value) else {
                    return Ok(());
                };
                if state.name != name {
                    return Ok(());
                }
                let summarized = self.summarized(opening, &name);
                let new = !self.known.contains_key(&name);
                if new {
                    let info = crate::fleet::ClusterInfo {
                        unreachable: super::direct::unreachable(self.direct.as_ref(), &state),
                        ..state.info(key.clone())
                    };
                    self.sink.send(&key, Change::Added(info)).await?;
                }
                remember(&self.servers, self.direct.as_ref(), &state);
                let kept = Kept::of(state);
                let shown = shown(&kept, &self.live, summarized, self.gone_since(&kept));
                let before = self.reports.get(&name).copied();
                self.known.insert(name.clone(), kept);
                let report = self.take_report(&name);
                let changed = new || before != self.reports.get(&name).copied();
                if summarized {
                    if changed {
                        let report = summarized_report(report, self.summaries.get(&name));
                        self.sink
                            .send(&key, Change::Report(Some(Box::new(report))))
                            .await?;
                    }
                    if new {
                        self.sink
                            .send(&key, Change::Counted(Counted::Report))
                            .await?;
                        self.held(&name).await?;
                    }
                } else if changed {
                    self.sink
                        .send(&key, Change::Report(report.map(Box::new)))
                        .await?;
                }
                self.sink.send(&key, Change::Connection(shown)).await?;
            }
            Some(StateKey::Summary(name)) => {
                if deleted {
                    self.summaries.remove(&name);
                    return Ok(());
                }
                let Ok(summary) = Summed::read(&name, &entry.value) else {
                    return Ok(());
                };
                let was = self.by_report(&name);
                self.summaries.insert(name.clone(), summary);
                let now = self.by_report(&name);
                if !self.known.contains_key(&name) {
                    return Ok(());
                }
                if self.summarized(opening, &name) {
                    self.summarized_again(&name, false).await?;
                    return Ok(());
                }
                // Shown by its objects: what the summary holds is not needed.
                if let Some(summary) = self.summaries.get_mut(&name) {
                    summary.held = None;
                }
                if was && !now && opening.is_none() {
                    // Its collector watches it now: its objects are on the bus.
                    self.read_opened(&name).await?;
                } else if now && opening.is_some() {
                    // Open here, summarized by its collector: asked to watch it.
                    self.ask_to_watch(&name);
                }
            }
            Some(StateKey::Object(cluster, object)) => {
                // Shown by its collector's summary: its objects going on or off the bus (being
                // warmed, or let go) are not what it holds; they are read whole once its summary
                // says it is watched.
                if opening.is_none() && self.by_report(&cluster) {
                    return Ok(());
                }
                let key = cluster_key(&cluster);
                if deleted {
                    self.sink.send(&key, Change::Deleted(object)).await?;
                } else if let Ok(Some(change)) = read(&entry.key, &entry.value) {
                    self.sink.send(&key, change).await?;
                }
            }
            None => {}
        }
        Ok(())
    }

    /// Tells the session that `name` counts by its objects from now on: the objects it holds
    /// (by kind, replacing whatever it held), then its connection as watched.
    pub(super) async fn opened_with(
        &self,
        name: &str,
        objects: Vec<crate::fleet::FluxSummary>,
    ) -> Result<(), Closed> {
        let key = cluster_key(name);
        let mut of = objects;
        for kind in FluxKind::ALL {
            let (these, rest) = of.into_iter().partition(|o| o.key.kind == kind);
            of = rest;
            self.sink.send(&key, Change::Replaced(kind, these)).await?;
        }
        self.sink
            .send(&key, Change::Counted(Counted::Objects))
            .await?;
        if let Some(state) = self.known.get(name) {
            let shown = shown(state, &self.live, false, self.gone_since(state));
            self.sink.send(&key, Change::Connection(shown)).await?;
        }
        Ok(())
    }
}

/// What the opened clusters say next; never, when the reader does not summarize.
async fn next_opening(opening: Option<&mut Opening>) -> Option<Next> {
    match opening {
        Some(o) => Some(o.next().await),
        None => std::future::pending().await,
    }
}

/// The next cluster the user opens, for a streaming reader; never, for a summarizing one.
async fn next_open(
    opens: Option<&mut tokio::sync::mpsc::Receiver<crate::fleet::ClusterKey>>,
) -> Option<crate::fleet::ClusterKey> {
    match opens {
        Some(opens) => opens.recv().await,
        None => std::future::pending().await,
    }
}
