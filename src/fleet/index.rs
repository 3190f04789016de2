//! The live picture of the fleet: every cluster's connection and Flux objects, with rollups per
//! cluster, per workspace and for the fleet, each updated by the change that touches it.
//!
//! Pure: the engine sends [`Event`]s, whoever owns the index applies them in order.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jiff::Timestamp;
use serde::Serialize;

use super::graph::{ClusterObjects, Graph};
use super::report::Report;
use super::{Connection, FluxKind, FluxSummary, HealthCounts, ObjectKey, PhaseCounts};
pub use ids::{ClusterId, ClusterInfo, ClusterKey, SourceId, WorkspaceId};
use names::Names;
use store::{Counts, applied, replaced};

/// One change, from a source.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The cluster, by its source's name for it.
    pub cluster: ClusterKey,
    /// When the engine saw it (freshness; the index never reads a clock).
    pub at: Timestamp,
    pub change: Change,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    Connection(Connection),
    /// An object was added or modified.
    Applied(FluxSummary),
    Deleted(ObjectKey),
    /// A (re)list of one kind: these are now all the objects of that kind in the cluster.
    Replaced(FluxKind, Vec<FluxSummary>),
    /// A cluster joined the fleet while it runs (found on a management cluster). The index gives
    /// it the next id; adding a key the index already holds changes nothing.
    Added(ClusterInfo),
    /// The cluster left the fleet (gone from its management cluster); its id is not reused, and
    /// its key may join again as a new cluster.
    Retired,
    /// The Flux Operator's report on the cluster, read again; None: the cluster has none (any
    /// more).
    Report(Option<Box<Report>>),
    /// From now on the cluster counts by its report, or by its objects.
    Counted(Counted),
    /// The counts of its report replaced, as of `at` (a collector counted the cluster again;
    /// the rest of its report is as it was). A cluster without a report gets one of these
    /// counts alone.
    Recounted(HealthCounts, Option<Timestamp>),
    /// A cluster counted by its report, looked at again: its not-ready objects and what they
    /// depend on, every one of them. These are all the objects it holds now, counted by none of
    /// the rollups (its report counts). Ignored while it counts by its objects.
    Held(Vec<FluxSummary>),
}

/// Where a cluster's counts come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Counted {
    /// Its objects, watched or listed.
    #[default]
    Objects,
    /// The Flux Operator's last report, while its objects are not watched: the objects it still
    /// holds are left out of every count, and are let go.
    Report,
}

/// One cluster in the index.
#[derive(Debug)]
pub struct ClusterEntry {
    /// Shared with the actions that target it.
    pub info: Arc<ClusterInfo>,
    pub workspace: WorkspaceId,
    pub connection: Connection,
    /// When the last object change from this cluster arrived.
    pub last_event: Option<Timestamp>,
    /// The cluster has been live or has failed at least once: there is a first answer about it
    /// (a later reconnection does not take that back).
    pub answered: bool,
    /// Its summaries, inline in one vector sorted by their keys ([`ClusterObjects`]).
    pub objects: ClusterObjects,
    /// What its objects depend on, and why each not-ready one is not ready.
    pub graph: Graph,
    pub health: HealthCounts,
    /// Gone from the fleet: kept so that ids stay stable, shown nowhere.
    pub retired: bool,
    /// The Flux Operator's last report, where the cluster has the operator.
    pub report: Option<Arc<Report>>,
    /// Where its counts come from.
    pub counted: Counted,
    /// Counted by its report, it holds every one of its not-ready objects and what they depend
    /// on, as its last look found them ([`Change::Held`]): triage and root causes see all its
    /// failures. False while it counts by its objects (which are all there), and for a
    /// summarized cluster whose objects could not be listed.
    pub held: bool,
    /// Renewed by every change to the cluster, and unique in the process: what a view derived
    /// from the cluster holds while its stamp is the same.
    pub stamp: u64,
}

/// A stamp no cluster has had.
fn next_stamp() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// One workspace in the index.
#[derive(Debug)]
pub struct WorkspaceEntry {
    pub name: String,
    pub clusters: Vec<ClusterId>,
    pub health: HealthCounts,
    pub phases: PhaseCounts,
}

/// The fleet.
#[derive(Debug, Default)]
pub struct Index {
    clusters: Vec<ClusterEntry>,
    workspaces: Vec<WorkspaceEntry>,
    workspace_ids: HashMap<String, WorkspaceId>,
    cluster_ids: HashMap<String, ClusterId>,
    /// Every cluster in the fleet, by its source's key (retired ones are forgotten).
    keys: HashMap<ClusterKey, ClusterId>,
    health: HealthCounts,
    phases: PhaseCounts,
    unanswered: u32,
    names: Names,
}

impl Index {
    pub fn new() -> Index {
        Index::default()
    }

    /// Makes room for `clusters` more clusters (a large fleet's entries are not doubled into
    /// place one growth at a time).
    pub fn reserve(&mut self, clusters: usize) {
        self.clusters.reserve_exact(clusters);
        self.keys.reserve(clusters);
        self.cluster_ids.reserve(clusters);
    }

    /// Adds a cluster, in phase `Connecting`, to its workspace (created on first use). A key
    /// already in the fleet is that cluster.
    pub fn add_cluster(&mut self, info: ClusterInfo) -> ClusterId {
        if let Some(id) = self.keys.get(&info.key) {
            return *id;
        }
        let id = ClusterId(self.clusters.len() as u32);
        let workspace = match self.workspace_ids.get(&info.workspace) {
            Some(w) => *w,
            None => {
                let w = WorkspaceId(self.workspaces.len() as u32);
                self.workspaces.push(WorkspaceEntry {
                    name: info.workspace.clone(),
                    clusters: Vec::new(),
                    health: HealthCounts::default(),
                    phases: PhaseCounts::default(),
                });
                self.workspace_ids.insert(info.workspace.clone(), w);
                w
            }
        };
        let connection = Connection::default();
        let ws = &mut self.workspaces[workspace.0 as usize];
        ws.clusters.push(id);
        ws.phases.add(connection.phase);
        self.phases.add(connection.phase);
        self.unanswered += 1;
        self.cluster_ids.insert(info.name.clone(), id);
        self.keys.insert(info.key.clone(), id);
        self.clusters.push(ClusterEntry {
            info: Arc::new(info),
            workspace,
            connection,
            last_event: None,
            answered: false,
            objects: ClusterObjects::default(),
            graph: Graph::default(),
            health: HealthCounts::default(),
            retired: false,
            report: None,
            counted: Counted::default(),
            held: false,
            stamp: next_stamp(),
        });
        id
    }

    /// Takes a cluster out of the fleet: its objects, its counts, its place in its workspace.
    fn retire(&mut self, id: ClusterId) {
        let Some(cluster) = self.clusters.get_mut(id.0 as usize) else {
            return;
        };
        if cluster.retired {
            return;
        }
        cluster.retired = true;
        cluster.stamp = next_stamp();
        let ws = &mut self.workspaces[cluster.workspace.0 as usize];
        ws.clusters.retain(|c| *c != id);
        ws.phases.sub(cluster.connection.phase);
        self.phases.sub(cluster.connection.phase);
        cluster.graph = Graph::default();
        if cluster.counted == Counted::Report {
            ws.health.sub_all(&cluster.health);
            self.health.sub_all(&cluster.health);
            cluster.objects.clear();
        }
        cluster.report = None;
        cluster.held = false;
        for o in std::mem::take(&mut cluster.objects).into_values() {
            ws.health.sub(o.health);
            self.health.sub(o.health);
        }
        cluster.health = HealthCounts::default();
        if !cluster.answered {
            cluster.answered = true;
            self.unanswered -= 1;
        }
        if self.cluster_ids.get(&cluster.info.name) == Some(&id) {
            self.cluster_ids.remove(&cluster.info.name);
        }
        if self.keys.get(&cluster.info.key) == Some(&id) {
            self.keys.remove(&cluster.info.key);
        }
    }

    /// The cluster its source calls `key`, while it is in the fleet.
    pub fn id_of(&self, key: &ClusterKey) -> Option<ClusterId> {
        self.keys.get(key).copied()
    }

    /// Applies one change. Events for clusters not in the fleet are ignored.
    pub fn apply(&mut self, mut event: Event) {
        match &mut event.change {
            Change::Applied(summary) => self.names.admit(summary),
            Change::Replaced(_, objects) | Change::Held(objects) => {
                for summary in objects {
                    self.names.admit(summary);
                }
            }
            Change::Connection(_)
            | Change::Deleted(_)
            | Change::Report(_)
            | Change::Counted(_)
            | Change::Recounted(..) => {}
            Change::Added(info) => {
                let mut info = std::mem::replace(info, ClusterInfo::empty());
                info.key = event.cluster;
                self.add_cluster(info);
                return;
            }
            Change::Retired => {
                if let Some(id) = self.id_of(&event.cluster) {
                    self.retire(id);
                }
                return;
            }
        }
        let Some(id) = self.id_of(&event.cluster) else {
            return;
        };
        let names = &mut self.names;
        let cluster = &mut self.clusters[id.0 as usize];
        cluster.stamp = next_stamp();
        let ws = &mut self.workspaces[cluster.workspace.0 as usize];
        let mut counts = Counts {
            on: cluster.counted == Counted::Objects,
            cluster: &mut cluster.health,
            workspace: &mut ws.health,
            fleet: &mut self.health,
        };
        match event.change {
            Change::Connection(connection) => {
                let (old, new) = (cluster.connection.phase, connection.phase);
                if old != new {
                    ws.phases.sub(old);
                    ws.phases.add(new);
                    self.phases.sub(old);
                    self.phases.add(new);
                }
                if !cluster.answered && !new.is_pending() {
                    cluster.answered = true;
                    self.unanswered -= 1;
                }
                cluster.connection = connection;
            }
            Change::Applied(summary) => {
                cluster.last_event = Some(event.at);
                applied(
                    (&mut cluster.objects, &mut cluster.graph),
                    &mut counts,
                    names,
                    summary,
                );
            }
            Change::Deleted(key) => {
                cluster.last_event = Some(event.at);
                if let Some(old) = cluster.objects.remove(&key) {
                    counts.sub(&old);
                    cluster.graph.removed(&cluster.objects, &key);
                }
            }
            Change::Added(_) | Change::Retired => {}
            Change::Report(report) => {
                let report = report.map(|mut r| {
                    names.report(&mut r);
                    Arc::new(*r)
                });
                // A report read is news from the cluster, whatever it counts by.
                if report.is_some() {
                    cluster.last_event = Some(event.at);
                }
                if !counts.on {
                    let none = HealthCounts::default();
                    let old = cluster.report.as_ref().map_or(&none, |r| &r.counts);
                    let new = report.as_ref().map_or(&none, |r| &r.counts);
                    counts.replace(old, new);
                }
                cluster.report = report;
            }
            Change::Recounted(new, at) => {
                let mut report = cluster.report.take().unwrap_or_default();
                let r = Arc::make_mut(&mut report);
                if !counts.on {
                    counts.replace(&r.counts, &new);
                }
                r.counts = new;
                if let Some(at) = at {
                    r.read_at = at;
                    cluster.last_event = Some(event.at);
                }
                cluster.report = Some(report);
            }
            // Counted from here on by what the report says; the objects are let go, also
            // those listed by an opening that ended before it was complete.
            Change::Counted(Counted::Report) => {
                if counts.on {
                    let report = cluster.report.as_ref().map(|r| r.counts.clone());
                    let old = std::mem::take(counts.cluster);
                    counts.replace(&old, &report.unwrap_or_default());
                }
                cluster.objects.clear();
                cluster.graph = Graph::default();
                cluster.counted = Counted::Report;
                cluster.held = false;
            }
            Change::Counted(Counted::Objects) if counts.on => {}
            Change::Counted(Counted::Objects) => {
                let mut listed = HealthCounts::default();
                for o in cluster.objects.values() {
                    listed.add(o.health);
                }
                let old = std::mem::take(counts.cluster);
                counts.replace(&old, &listed);
                cluster.counted = Counted::Objects;
                cluster.held = false;
            }
            Change::Held(_) if counts.on => {}
            Change::Held(objects) => {
                cluster.objects = objects.into_iter().collect();
                cluster.graph = Graph::of(&cluster.objects, &mut |o| names.upstream(o));
                cluster.held = true;
            }
            Change::Replaced(kind, objects) => {
                cluster.last_event = Some(event.at);
                let (listed, graph) = (&mut cluster.objects, &mut cluster.graph);
                replaced((listed, graph), &mut counts, names, kind, objects);
            }
        }
    }

    pub fn clusters(&self) -> &[ClusterEntry] {
        &self.clusters
    }

    /// Every cluster in the fleet with its id; retired ones are left out.
    pub fn entries(&self) -> impl Iterator<Item = (ClusterId, &ClusterEntry)> {
        self.clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.retired)
            .map(|(i, c)| (ClusterId(i as u32), c))
    }

    pub fn cluster(&self, id: ClusterId) -> Option<&ClusterEntry> {
        self.clusters.get(id.0 as usize)
    }

    /// The cluster with this (unique) name.
    pub fn cluster_named(&self, name: &str) -> Option<&ClusterEntry> {
        self.cluster(*self.cluster_ids.get(name)?)
    }

    pub fn workspaces(&self) -> &[WorkspaceEntry] {
        &self.workspaces
    }

    pub fn workspace(&self, id: WorkspaceId) -> Option<&WorkspaceEntry> {
        self.workspaces.get(id.0 as usize)
    }

    pub fn workspace_id(&self, name: &str) -> Option<WorkspaceId> {
        self.workspace_ids.get(name).copied()
    }

    /// Objects of the whole fleet by health.
    pub fn health(&self) -> &HealthCounts {
        &self.health
    }

    /// Clusters of the whole fleet by connection phase.
    pub fn phases(&self) -> &PhaseCounts {
        &self.phases
    }

    /// Every cluster has answered once: live, or failed in a way worth reporting.
    pub fn settled(&self) -> bool {
        self.unanswered == 0
    }

    /// How many objects the fleet holds.
    pub fn object_count(&self) -> u32 {
        self.health.total()
    }
}

mod ids;
mod names;
mod store;
#[cfg(test)]
mod tests;
