//! A collector's state between ticks: the clusters it owns and what it published of each —
//! what its loop, its publishing, its refreshing and its taking over share.

use crate::fleet::SharedText;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use super::super::wire::ClusterState;
use super::super::{BusError, Stores};
use super::{outbox, rings, status};
use crate::fleet::report::Report;
use crate::fleet::{ClusterKey, Counted, FluxSummary, Health, HealthCounts, Phase};
use crate::inventory::{ClusterSpec, Problem, Reread};
use crate::k8s::Engine;

/// How a collector reads its fleet again: an error (a source that could not be read whole)
/// changes nothing, so that a management cluster out of reach for a moment does not take its
/// clusters off the bus; None says nothing it is read from changed (its files are as they were):
/// the fleet is not compared.
pub type Refresh = Arc<
    dyn Fn() -> futures::future::BoxFuture<'static, Result<Option<Vec<ClusterSpec>>, Problem>>
        + Send
        + Sync,
>;

/// What was published of one object.
pub(super) struct Published {
    pub(super) hash: u64,
    pub(super) health: Health,
    pub(super) revision: Option<SharedText>,
}

/// A cluster this collector watches.
pub(super) struct Owned {
    pub(super) state: Option<ClusterState>,
    /// By key in the state bucket.
    pub(super) objects: HashMap<String, Published>,
    /// The hash of the summary last published.
    pub(super) summary: Option<u64>,
    /// The Flux Operator's last report (also in its published state, once it has one: the
    /// first look reads the report before the state is said).
    pub(super) report: Option<Report>,
    /// Summarized (`engine.watch`), it counts by its report and has no object on the bus.
    pub(super) counted: Counted,
    /// Counted by its report: its not-ready objects and what they depend on, as listed at its
    /// last look (published with its summary).
    pub(super) held: Option<Vec<FluxSummary>>,
    /// Counted by its objects: the not-ready ones, by key (published with its summary, so that
    /// a reader holding no object still has every failure and its root cause).
    pub(super) not_ready: BTreeMap<String, FluxSummary>,
}

impl Owned {
    /// Its objects by health: by its report while it counts by it, else by what was published.
    pub(super) fn counts(&self) -> HealthCounts {
        let mut counts = HealthCounts::default();
        match (self.counted, &self.report) {
            (Counted::Report, Some(report)) => counts = report.counts.clone(),
            (Counted::Report, None) => {}
            (Counted::Objects, _) => {
                for published in self.objects.values() {
                    counts.add(published.health);
                }
            }
        }
        counts
    }

    /// The cluster's workspace as last published; empty before its first state.
    pub(super) fn workspace(&self) -> String {
        self.state
            .as_ref()
            .map(|s| s.workspace.clone())
            .unwrap_or_default()
    }
}

pub(super) struct Collector {
    pub(super) id: String,
    pub(super) stores: Stores,
    /// The fleet; the clusters it owns (or is about to) with their credentials read.
    pub(super) specs: BTreeMap<String, ClusterSpec>,
    pub(super) reread: Reread,
    /// What could not be read of the clusters' credentials (a file, a context in it), said
    /// once until it can be.
    pub(super) unreadable: BTreeSet<(String, Option<String>)>,
    pub(super) names: HashMap<ClusterKey, String>,
    pub(super) engine: Engine,
    pub(super) owned: HashMap<String, Owned>,
    pub(super) members: BTreeSet<String>,
    /// Clusters this collector owns now but starts watching only once their last owner has
    /// seen the same collectors and let them go: after half a ttl, more than one tick.
    pub(super) waiting: BTreeMap<String, tokio::time::Instant>,
    /// Owned clusters another collector has published since the last tick.
    pub(super) overwritten: BTreeSet<String>,
    /// Owned clusters whose objects changed since their summary was last published.
    pub(super) unsummed: BTreeSet<String>,
    pub(super) ttl: std::time::Duration,
    pub(super) outbox: outbox::Outbox,
    /// How many clusters it owns, as its announcement says.
    pub(super) announced: Arc<AtomicUsize>,
    /// Owned clusters that went into an error state, by state.
    pub(super) connection_errors: BTreeMap<Phase, u64>,
    /// Owned clusters watched live again after an error.
    pub(super) watch_restarts: u64,
    /// What its last look at who else is alive said; None before the first.
    pub(super) looked: Option<Result<(), BusError>>,
    /// The history stream's size at the last tick that could read it.
    pub(super) history_size: Option<status::HistorySize>,
    /// The ring metrics last worked out.
    pub(super) ring_figures: rings::Kept,
}
