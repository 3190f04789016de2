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

use super::keys::{self, Key};
use super::wire::{self, ClusterState};
use super::{Options, Stores};
use crate::fleet::index::Change;
use crate::fleet::report::Report;
use crate::fleet::{ClusterInfo, ClusterKey, Connection, Phase};
use crate::k8s::direct::Direct;
use crate::source::{Sink, Source};

mod direct;
mod follow;
mod initial;
mod opened;
mod summaries;

use direct::{FromBus, Servers, ToCluster};

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

/// How a reader names a cluster it learned from the bus.
pub fn cluster_key(name: &str) -> ClusterKey {
    ClusterKey::new(format!("nats#{name}"))
}

/// The name of a cluster a reader named; None for one that is not the bus's.
fn cluster_name(key: &ClusterKey) -> Option<&str> {
    key.as_str().strip_prefix("nats#")
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
        let live = super::collectors_alive(&stores.collectors).await?;
        // Where the bucket is, then what it holds: a value published meanwhile comes twice,
        // which changes nothing.
        let last = super::last_sequence(&stores.state.stream, "the state bucket").await?;
        let (opens, opened) = tokio::sync::mpsc::channel(64);
        let mut bus = Bus {
            clusters: BTreeMap::new(),
            problems: Vec::new(),
            last,
            direct: None,
            servers: Servers::default(),
            options: options.clone(),
            live,
            opening: None,
            opens: Some(opens),
            opened: Some(opened),
            task: None,
            stop: Default::default(),
            stores,
        };
        let (clusters, problems) = (&mut bus.clusters, &mut bus.problems);
        super::every_value(
            &bus.stores,
            "c.*",
            &mut |key, value| match keys::parse(key) {
                Some(Key::Cluster(name)) => match wire::read::<ClusterState>(value) {
                    Ok(state) if state.name == name => {
                        clusters.insert(name, state);
                    }
                    Ok(_) => problems.push(format!("{key}: names another cluster")),
                    Err(e) => problems.push(format!("{key}: {e}")),
                },
                _ => problems.push(format!("{key}: not a key fluxfleet writes")),
            },
        )
        .await?;
        Ok(bus)
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

/// A cluster's state as the reader keeps it once the session knows the cluster: its connection
/// as its collector published it, which collector that is, and its report until it is said.
/// Its name is its key; its server, workspace, labels and management clusters are kept
/// elsewhere (a state as read is 696 bytes, most of it room for a report the session keeps:
/// 70 MiB of a reader of 100,000 clusters).
pub(super) struct Kept {
    connection: Connection,
    collector: Box<str>,
    report: Option<Box<Report>>,
}

impl Kept {
    pub(super) fn of(state: ClusterState) -> Kept {
        Kept {
            connection: state.connection(),
            collector: state.collector.into(),
            report: state.report.map(Box::new),
        }
    }

    pub(super) fn collector(&self) -> &str {
        &self.collector
    }

    /// Its report, not yet said.
    pub(super) fn unsaid_report(&self) -> bool {
        self.report.is_some()
    }

    /// Its report, taken out to be said.
    pub(super) fn take_report(&mut self) -> Option<Report> {
        self.report.take().map(|r| *r)
    }
}

/// A cluster's connection as a reader shows it: as its collector published it while that
/// collector is alive — a live cluster the reader only summarizes as summarized; once the
/// collector is gone, timed out, saying so, with what it last published still shown, until
/// another collector takes the cluster over.
fn shown(
    state: &Kept,
    live: &BTreeSet<String>,
    summarized: bool,
    gone: Option<jiff::Timestamp>,
) -> Connection {
    if live.contains(state.collector()) {
        let mut c = state.connection.clone();
        if summarized && c.phase == Phase::Live {
            c.phase = Phase::Summary;
        }
        return c;
    }
    let mut c = Connection::new(Phase::TimedOut);
    let when = gone.map_or(String::new(), |t| format!(" at {t:.0}"));
    c.error = Some(
        format!(
            "its collector {} stopped announcing itself{when}: what it last published is shown \
             until another collector takes the cluster over",
            state.collector
        )
        .into(),
    );
    // Stale since the reader saw its collector go (unknown for one gone before it started).
    c.since = gone;
    c.watching = state.connection.watching.clone();
    c
}

/// A cluster's summary ([`wire::Summary`]) as a reader reads and keeps it: its counts, and what it
/// holds as read, parsed only when it is said to the session (a reader of 100,000 clusters
/// holding every summary's objects parsed at once took a tenth of its memory for them).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Summed {
    /// Checked against its key, then let go.
    name: String,
    #[serde(rename = "objects", deserialize_with = "wire::counts_of")]
    counts: crate::fleet::HealthCounts,
    at: Option<jiff::Timestamp>,
    #[serde(default)]
    counted: crate::fleet::Counted,
    #[serde(default)]
    held: Option<Box<serde_json::value::RawValue>>,
}

impl Summed {
    /// The summary `value` of cluster `name`.
    pub(super) fn read(name: &str, value: &[u8]) -> Result<Summed, super::Malformed> {
        let mut summed: Summed = wire::read(value)?;
        if summed.name != name {
            return Err(super::Malformed::OtherCluster);
        }
        summed.name = String::new();
        Ok(summed)
    }

    /// What it holds, taken out of it, its texts cut as the engine cuts a server's; None (and
    /// a warning) where that is not a list of objects.
    pub(super) fn take_held(&mut self) -> Option<Vec<crate::fleet::FluxSummary>> {
        let held = self.held.take()?;
        match serde_json::from_str::<Vec<crate::fleet::FluxSummary>>(held.get()) {
            Ok(held) => Some(
                held.into_iter()
                    .map(crate::fleet::FluxSummary::bounded)
                    .collect(),
            ),
            Err(e) => {
                tracing::warn!(error = %e, "a summary's objects that cannot be read");
                None
            }
        }
    }
}

/// What a summarized cluster counts by: its FluxReport if it has one, with its objects counted
/// by its collector (exact, where a report tells only running and failing).
fn summarized_report(report: Option<Report>, summary: Option<&Summed>) -> Report {
    let mut report = report.unwrap_or_default();
    if let Some(summary) = summary {
        report.counts = summary.counts.clone();
        if let Some(at) = summary.at {
            report.read_at = at;
        }
    }
    report
}

/// An object key's value as a change; None for a cluster's or a summary's key.
fn read(key: &str, value: &[u8]) -> Result<Option<Change>, super::Malformed> {
    match keys::parse(key) {
        None => Err(super::Malformed::NotOurKey),
        Some(Key::Cluster(_) | Key::Summary(_)) => Ok(None),
        Some(Key::Object(_, object)) => {
            let summary = wire::object(value)?;
            if summary.key != object {
                return Err(super::Malformed::OtherObject(format!(
                    "{} {}/{}",
                    summary.key.kind, summary.key.namespace, summary.key.name
                )));
            }
            Ok(Some(Change::Applied(summary)))
        }
    }
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
                    direct::remember(&self.servers, &state);
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
