//! A reader of the bus as a [`Source`]: the state bucket read whole when it connects (so the
//! session knows every cluster before it starts, and `get` waits for all of them), then every
//! change as collectors publish it. It holds no connection to any cluster. It reads nothing from
//! clusters and sends nothing to them: the session has no way to write through it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use async_nats::jetstream::kv::{Operation, Watch};
use futures::StreamExt;
use futures::future::BoxFuture;

use super::keys::{self, Key};
use super::wire::{self, ClusterState};
use super::{Options, Stores};
use crate::fleet::actions::{Outcome, Step};
use crate::fleet::index::Change;
use crate::fleet::{
    ClusterInfo, ClusterKey, Connection, FluxKind, FluxSummary, ObjectEvent, ObjectKey, Phase,
};
use crate::k8s::direct::Direct;
use crate::source::{Sink, Source};

/// The state as the bucket held it when the reader connected, and the changes after.
pub struct Bus {
    clusters: BTreeMap<String, ClusterState>,
    objects: BTreeMap<String, Vec<FluxSummary>>,
    /// Values that could not be read, by key: shown as warnings.
    pub problems: Vec<String>,
    watch: Option<Watch>,
    /// The user's own kubeconfigs, for events, YAML, plugins and actions on the clusters they
    /// reach.
    direct: Option<Arc<Direct>>,
    /// Each cluster's API server, by name: how a cluster of the bus is found among the user's.
    servers: Servers,
    /// Where the bus is, for the history.
    options: Options,
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
        Bus::read(&stores, options).await
    }

    async fn read(stores: &Stores, options: &Options) -> Result<Bus, String> {
        let mut bus = Bus {
            clusters: BTreeMap::new(),
            objects: BTreeMap::new(),
            problems: Vec::new(),
            watch: None,
            direct: None,
            servers: Servers::default(),
            options: options.clone(),
            announced: Some(stores.collectors.clone()),
            live: super::collectors_alive(&stores.collectors).await?,
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
        let snapshot = super::last_values(stores, ">").await?;
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
            super::placed("watching the state bucket", || {
                stores.state.watch_all_from_revision(last + 1)
            })
            .await?,
        );
        Ok(bus)
    }
}

/// How often a reader looks again at which collectors are alive.
const LOOK: Duration = Duration::from_secs(2);

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

type Servers = Arc<RwLock<HashMap<String, String>>>;

impl Bus {
    /// Reads and acts on the clusters that the user's own kubeconfigs reach (by the API
    /// server's URL, else by name) directly, over a connection made when first needed.
    pub fn reaching(mut self, direct: Direct) -> Bus {
        self.direct = Some(Arc::new(direct));
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

impl Source for Bus {
    fn clusters(&self) -> Vec<ClusterInfo> {
        self.clusters
            .values()
            .map(|s| s.info(cluster_key(&s.name)))
            .collect()
    }

    fn start(&mut self, sink: Sink) {
        let clusters = std::mem::take(&mut self.clusters);
        let servers = self.servers.clone();
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
                    remember(&servers, &state);
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
                    // The cluster answers last: a session that settles has its objects.
                    sink.send(&key, Change::Connection(shown(&state, &live)))
                        .await?;
                    known.insert(name, state);
                }
                let Some(mut watch) = watch else {
                    return Ok(());
                };
                let mut look = tokio::time::interval(LOOK);
                loop {
                    tokio::select! {
                        entry = watch.next() => match entry {
                            Some(Ok(entry)) => {
                                follow_one(&sink, &mut known, &live, &servers, entry).await?;
                            }
                            // An erring watch can err again at once: wait, so that this task
                            // yields (and sees being stopped) instead of spinning.
                            Some(Err(_)) => tokio::time::sleep(Duration::from_millis(200)).await,
                            None => break,
                        },
                        _ = look.tick() => {
                            let Some(store) = &announced else { continue };
                            let Ok(now) = super::collectors_alive(store).await else { continue };
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

    fn reader(&self) -> Option<Arc<dyn crate::source::Read>> {
        Some(Arc::new(FromBus {
            direct: self.direct.clone(),
            servers: self.servers.clone(),
            options: self.options.clone(),
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

fn remember(servers: &Servers, state: &ClusterState) {
    servers
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(state.name.clone(), state.server.clone());
}

/// The user's own cluster behind a cluster of the bus: the one at its server's URL, else of its
/// name.
fn spec_of(
    direct: Option<&Arc<Direct>>,
    servers: &Servers,
    cluster: &ClusterKey,
) -> Result<crate::inventory::ClusterSpec, String> {
    let name = cluster.as_str().strip_prefix("nats#").unwrap_or_default();
    let server = servers
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
        .cloned()
        .unwrap_or_default();
    direct
        .and_then(|d| d.spec(&server, name).cloned())
        .ok_or_else(|| NOT_ON_THE_BUS.to_string())
}

/// The user's own cluster behind a cluster of the bus, connected.
async fn reach(
    direct: Option<&Arc<Direct>>,
    servers: &Servers,
    cluster: &ClusterKey,
) -> Result<ClusterKey, String> {
    let spec = spec_of(direct, servers, cluster)?;
    match direct {
        Some(d) => d.connect(&spec).await,
        None => Err(NOT_ON_THE_BUS.to_string()),
    }
}

/// What a reader of the bus reads of an object: from the cluster itself, where the user's own
/// kubeconfigs reach it; nothing otherwise (collectors publish summaries only).
struct FromBus {
    direct: Option<Arc<Direct>>,
    servers: Servers,
    options: Options,
}

/// Why events, YAML, kubeconfigs and actions are not there.
const NOT_ON_THE_BUS: &str = "this cluster's state comes from collectors through NATS, which \
    publish summaries only, and none of your kubeconfigs reaches it (by its server's URL or its \
    name): its events, its YAML and actions are on the cluster itself";

impl crate::source::Read for FromBus {
    fn events<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<Vec<ObjectEvent>, String>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or(NOT_ON_THE_BUS)?;
            direct.reader().events(&key, object).await
        })
    }

    fn yaml<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or(NOT_ON_THE_BUS)?;
            direct.reader().yaml(&key, object).await
        })
    }

    fn kubeconfig(&self, cluster: &ClusterKey) -> Result<kube::config::Kubeconfig, String> {
        spec_of(self.direct.as_ref(), &self.servers, cluster).map(|spec| spec.kubeconfig)
    }

    fn history(
        &self,
        since: jiff::Timestamp,
    ) -> BoxFuture<'_, Result<Vec<crate::fleet::history::Change>, String>> {
        Box::pin(super::history::since(&self.options, since, None))
    }
}

/// Actions on a cluster of the bus: sent to the cluster itself with the user's own kubeconfig
/// and the session's write grant — never through the bus.
struct ToCluster {
    direct: Arc<Direct>,
    writer: crate::k8s::Writer,
    servers: Servers,
}

impl crate::source::Write for ToCluster {
    fn apply<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        token: &'a str,
        wait: Option<Duration>,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match reach(Some(&self.direct), &self.servers, cluster).await {
                Ok(key) => self.writer.apply(&key, steps, token, wait).await,
                Err(why) => Outcome::Refused(why),
            }
        })
    }

    fn identity<'a>(&'a self, cluster: &'a ClusterKey) -> BoxFuture<'a, Option<Arc<str>>> {
        Box::pin(async move {
            let key = reach(Some(&self.direct), &self.servers, cluster)
                .await
                .ok()?;
            crate::source::Write::identity(&self.writer, &key).await
        })
    }

    fn handled<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
        token: &'a str,
        within: Duration,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match reach(Some(&self.direct), &self.servers, cluster).await {
                Ok(key) => {
                    crate::source::Write::handled(&self.writer, &key, object, token, within).await
                }
                Err(why) => Outcome::Refused(why),
            }
        })
    }
}

/// One entry of the bucket after the snapshot, as the session's changes.
async fn follow_one(
    sink: &Sink,
    known: &mut BTreeMap<String, ClusterState>,
    live: &BTreeSet<String>,
    servers: &Servers,
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
            remember(servers, &state);
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
