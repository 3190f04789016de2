//! A reader of the bus as a [`Source`]: the state bucket read whole when it connects (so the
//! session knows every cluster before it starts, and `get` waits for all of them), then every
//! change as collectors publish it. It holds no connection to any cluster. It reads nothing from
//! clusters and sends nothing to them: the session has no way to write through it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use async_nats::jetstream::kv::{Operation, Watch};
use futures::StreamExt;
use futures::future::BoxFuture;

use super::keys::{self, Key};
use super::wire::{self, ClusterState};
use super::{Options, Stores};
use crate::fleet::index::Change;
use crate::fleet::{ClusterInfo, ClusterKey, Connection, FluxKind, FluxSummary, Phase};
use crate::source::{Sink, Source};

/// The state as the bucket held it when the reader connected, and the changes after.
pub struct Bus {
    clusters: BTreeMap<String, ClusterState>,
    objects: BTreeMap<String, Vec<FluxSummary>>,
    /// Values that could not be read, by key: shown as warnings.
    pub problems: Vec<String>,
    watch: Option<Watch>,
    /// The collectors' announcements: a cluster whose collector is gone is shown as such.
    announced: Option<async_nats::jetstream::kv::Store>,
    live: BTreeSet<String>,
    task: Option<tokio::task::JoinHandle<()>>,
    stop: tokio_util::sync::CancellationToken,
}

/// How a reader names a cluster it learned from the bus.
pub fn cluster_key(name: &str) -> ClusterKey {
    ClusterKey::new(format!("nats#{name}"))
}

impl Bus {
    /// Connects and reads the whole state bucket.
    pub async fn connect(options: &Options) -> Result<Bus, String> {
        let client = super::connect(options, "fluxfleet reader").await?;
        let stores = super::open(client, options, None).await?;
        Bus::read(&stores).await
    }

    async fn read(stores: &Stores) -> Result<Bus, String> {
        let mut bus = Bus {
            clusters: BTreeMap::new(),
            objects: BTreeMap::new(),
            problems: Vec::new(),
            watch: None,
            announced: Some(stores.collectors.clone()),
            live: collectors_alive(&stores.collectors).await?,
            task: None,
            stop: Default::default(),
        };
        // Where the bucket is, what it holds, then a watch from there: a value published
        // meanwhile comes twice, which changes nothing.
        let last = stores
            .state
            .stream
            .get_info()
            .await
            .map_err(|e| format!("reading the state bucket: {e}"))?
            .state
            .last_sequence;
        let snapshot = super::collector::last_values(stores, ">").await?;
        for (key, value) in snapshot {
            match read(&key, &value) {
                Ok(Some(Change::Connection(_))) | Ok(None) => {}
                Ok(Some(Change::Applied(summary))) => {
                    if let Some(Key::Object(cluster, _)) = keys::parse(&key) {
                        bus.objects.entry(cluster).or_default().push(summary);
                    }
                }
                Ok(Some(_)) => {}
                Err(e) => bus.problems.push(format!("{key}: {e}")),
            }
            if let Some(Key::Cluster(name)) = keys::parse(&key) {
                match wire::read::<ClusterState>(&value) {
                    Ok(state) if state.name == name => {
                        bus.clusters.insert(name, state);
                    }
                    Ok(_) => bus.problems.push(format!("{key}: names another cluster")),
                    Err(e) => bus.problems.push(format!("{key}: {e}")),
                }
            }
        }
        bus.watch = Some(
            stores
                .state
                .watch_all_from_revision(last + 1)
                .await
                .map_err(|e| format!("watching the state bucket: {e}"))?,
        );
        Ok(bus)
    }
}

/// How often a reader looks again at which collectors are alive.
const LOOK: Duration = Duration::from_secs(2);

/// The collectors whose announcement has not expired.
async fn collectors_alive(
    store: &async_nats::jetstream::kv::Store,
) -> Result<BTreeSet<String>, String> {
    let mut keys = store
        .keys()
        .await
        .map_err(|e| format!("reading the collectors: {e}"))?;
    let mut out = BTreeSet::new();
    while let Some(key) = keys.next().await {
        out.insert(key.map_err(|e| format!("reading the collectors: {e}"))?);
    }
    Ok(out)
}

/// A cluster's connection as a reader shows it: as its collector published it while that
/// collector is alive; once it is gone, timed out, saying so, with the objects it last published
/// still shown, until another collector takes the cluster over.
fn shown(state: &ClusterState, live: &BTreeSet<String>) -> Connection {
    if live.contains(&state.collector) {
        return state.connection();
    }
    let mut c = Connection::new(Phase::TimedOut);
    c.error = Some(
        format!(
            "its collector {} stopped announcing itself: what it last published is shown until \
             another collector takes the cluster over",
            state.collector
        )
        .into(),
    );
    c.watching = state.connection().watching;
    c
}

/// An object key's value as a change; None for a cluster's key (read by the caller).
fn read(key: &str, value: &[u8]) -> Result<Option<Change>, String> {
    match keys::parse(key) {
        None => Err("not a key fluxfleet writes".into()),
        Some(Key::Cluster(_)) => Ok(None),
        Some(Key::Object(_, object)) => {
            let summary = wire::object(value)?;
            if summary.key != object {
                return Err(format!(
                    "holds {} {}/{}",
                    summary.key.kind, summary.key.namespace, summary.key.name
                ));
            }
            Ok(Some(Change::Applied(summary)))
        }
    }
}

impl Source for Bus {
    fn clusters(&self) -> Vec<ClusterInfo> {
        self.clusters
            .values()
            .map(|s| s.info(cluster_key(&s.name)))
            .collect()
    }

    fn start(&mut self, sink: Sink) {
        let clusters = std::mem::take(&mut self.clusters);
        let mut objects = std::mem::take(&mut self.objects);
        let watch = self.watch.take();
        let announced = self.announced.take();
        let mut live = std::mem::take(&mut self.live);
        let stop = self.stop.clone();
        self.task = Some(tokio::spawn(async move {
            let follow = async {
                let mut known: BTreeMap<String, ClusterState> = BTreeMap::new();
                for (name, state) in clusters {
                    let key = cluster_key(&name);
                    sink.send(&key, Change::Connection(shown(&state, &live)))
                        .await?;
                    let mut of = objects.remove(&name).unwrap_or_default();
                    for kind in FluxKind::ALL {
                        let (these, rest) = of.into_iter().partition(|o| o.key.kind == kind);
                        of = rest;
                        sink.send(&key, Change::Replaced(kind, these)).await?;
                    }
                    if let Some(report) = state.report.clone() {
                        sink.send(&key, Change::Report(Some(Box::new(report))))
                            .await?;
                    }
                    known.insert(name, state);
                }
                let Some(mut watch) = watch else {
                    return Ok(());
                };
                let mut look = tokio::time::interval(LOOK);
                loop {
                    tokio::select! {
                        entry = watch.next() => match entry {
                            Some(Ok(entry)) => follow_one(&sink, &mut known, &live, entry).await?,
                            Some(Err(_)) => continue,
                            None => break,
                        },
                        _ = look.tick() => {
                            let Some(store) = &announced else { continue };
                            let Ok(now) = collectors_alive(store).await else { continue };
                            if now != live {
                                // Clusters whose collector came or went show it.
                                for (name, state) in &known {
                                    if live.contains(&state.collector) != now.contains(&state.collector) {
                                        let c = shown(state, &now);
                                        sink.send(&cluster_key(name), Change::Connection(c)).await?;
                                    }
                                }
                                live = now;
                            }
                        }
                    }
                }
                Ok::<(), crate::source::Closed>(())
            };
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = follow => {}
            }
        }));
    }

    fn reader(&self) -> Option<std::sync::Arc<dyn crate::source::Read>> {
        Some(std::sync::Arc::new(FromBus))
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

/// What a reader of the bus can read of an object: nothing the collectors did not publish.
struct FromBus;

/// Why events, YAML and kubeconfigs are not there.
const NOT_ON_THE_BUS: &str = "this cluster's state comes from collectors through NATS, which \
    publish summaries only: its events and YAML are on the cluster, which this session does not \
    connect to (run fluxfleet with a kubeconfig that reaches it)";

impl crate::source::Read for FromBus {
    fn events<'a>(
        &'a self,
        _: &'a ClusterKey,
        _: &'a crate::fleet::ObjectKey,
    ) -> BoxFuture<'a, Result<Vec<crate::fleet::ObjectEvent>, String>> {
        Box::pin(async { Err(NOT_ON_THE_BUS.to_string()) })
    }

    fn yaml<'a>(
        &'a self,
        _: &'a ClusterKey,
        _: &'a crate::fleet::ObjectKey,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async { Err(NOT_ON_THE_BUS.to_string()) })
    }

    fn kubeconfig(&self, _: &ClusterKey) -> Result<kube::config::Kubeconfig, String> {
        Err(NOT_ON_THE_BUS.to_string())
    }
}

/// One entry of the bucket after the snapshot, as the session's changes.
async fn follow_one(
    sink: &Sink,
    known: &mut BTreeMap<String, ClusterState>,
    live: &BTreeSet<String>,
    entry: async_nats::jetstream::kv::Entry,
) -> Result<(), crate::source::Closed> {
    let deleted = matches!(entry.operation, Operation::Delete | Operation::Purge);
    match keys::parse(&entry.key) {
        Some(Key::Cluster(name)) => {
            let key = cluster_key(&name);
            if deleted {
                if known.remove(&name).is_some() {
                    sink.send(&key, Change::Retired).await?;
                }
                return Ok(());
            }
            let Ok(state) = wire::read::<ClusterState>(&entry.value) else {
                return Ok(());
            };
            if state.name != name {
                return Ok(());
            }
            if !known.contains_key(&name) {
                sink.send(&key, Change::Added(state.info(key.clone())))
                    .await?;
            }
            sink.send(&key, Change::Connection(shown(&state, live)))
                .await?;
            let report = state.report.clone().map(Box::new);
            if known.get(&name).map(|k| &k.report) != Some(&state.report) {
                sink.send(&key, Change::Report(report)).await?;
            }
            known.insert(name, state);
        }
        Some(Key::Object(cluster, object)) => {
            let key = cluster_key(&cluster);
            if deleted {
                sink.send(&key, Change::Deleted(object)).await?;
            } else if let Ok(Some(change)) = read(&entry.key, &entry.value) {
                sink.send(&key, change).await?;
            }
        }
        None => {}
    }
    Ok(())
}
