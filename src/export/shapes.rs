//! The JSON shapes of `fluxfleet get` (documented in docs/commands.md; add fields, never rename them).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use crate::fleet::report::Report;
use crate::fleet::{
    ClusterEntry, Counted, FluxKind, FluxSummary, HealthCounts, Index, Lists, ObjectRef, Phase,
    PhaseCounts, Ready, Rollout, WorkspaceEntry,
};

/// One Flux object of one cluster.
/// Shares its name with `fleet::object::Object`: the same Flux object, this is how `get -o json`
/// writes it, that is how it is read off the API server.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Object<'a> {
    pub workspace: &'a str,
    pub cluster: &'a str,
    pub kind: &'static str,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The health (FACTS §3.8): stalled, failed, deleting, progressing, waiting, suspended,
    /// ready, not-applicable.
    pub status: &'static str,
    pub suspended: bool,
    pub ready: Option<Ready>,
    pub reason: Option<&'a str>,
    pub message: Option<&'a str>,
    pub revision: Option<&'a str>,
    pub generation: i64,
    pub observed_generation: Option<i64>,
    pub last_transition_time: Option<Timestamp>,
    pub last_handled_reconcile_at: Option<&'a str>,
    pub reconcile_requested_at: Option<&'a str>,
    pub source: Option<&'a ObjectRef>,
    pub depends_on: &'a [ObjectRef],
    /// An ArtifactGenerator's `spec.sources` (its `dependsOn` is empty: it has none).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub sources: &'a [ObjectRef],
    /// Entries in `status.inventory`, when the object keeps one.
    pub inventory: Option<u32>,
    /// Who suspended it and why, when recorded (fluxfleet or the Flux Operator).
    pub suspended_by: Option<&'a str>,
    pub suspend_reason: Option<&'a str>,
    /// Kustomization and HelmRelease: `applied`, `attempted`, `origin`, `chart`,
    /// `configDigest`, `since` (each when known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<&'a Rollout>,
}

impl<'a> Object<'a> {
    pub fn new(cluster: &'a ClusterEntry, s: &'a FluxSummary) -> Object<'a> {
        Object {
            workspace: &cluster.info.workspace,
            cluster: &cluster.info.name,
            kind: s.key.kind.as_str(),
            namespace: &s.key.namespace,
            name: &s.key.name,
            status: s.health.key(),
            suspended: s.suspended,
            ready: s.ready,
            reason: s.reason.as_deref(),
            message: s.message.as_deref(),
            revision: s.revision.as_deref(),
            generation: s.generation,
            observed_generation: s.observed_generation,
            last_transition_time: s.since,
            last_handled_reconcile_at: s.last_handled_reconcile_at(),
            reconcile_requested_at: s.requested_at(),
            source: s.source.as_deref(),
            depends_on: match s.key.kind {
                FluxKind::ArtifactGenerator => &[],
                _ => &s.depends_on,
            },
            sources: match s.key.kind {
                FluxKind::ArtifactGenerator => &s.depends_on,
                _ => &[],
            },
            inventory: s.inventory(),
            suspended_by: s.suspended_by(),
            suspend_reason: s.suspend_reason(),
            rollout: s.rollout.as_deref(),
        }
    }
}

/// One cluster: where it comes from, how the connection is, its objects by health.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster<'a> {
    pub cluster: &'a str,
    pub workspace: &'a str,
    pub server: &'a str,
    pub labels: &'a BTreeMap<String, String>,
    /// The management clusters it was found on, the top one first; empty for a kubeconfig.
    pub management: &'a [String],
    /// Where a discovered cluster comes from (management path and namespace), as `origin` in
    /// `[[modes]]` and `actions.deny` names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a str>,
    /// connecting, syncing, live, unreachable, timed-out, tls-error, unauthorized, forbidden,
    /// server-error, flux-not-installed, invalid; for clusters found on a management cluster
    /// also provisioning, paused, deleting, provision-failed.
    pub state: &'static str,
    pub error: Option<&'a str>,
    pub since: Option<Timestamp>,
    /// While backing off: when the next attempt starts.
    pub retry_at: Option<Timestamp>,
    /// Watches the server broke and fluxfleet resumed at once, in the last five minutes (a
    /// live cluster with 3 or more is flapping).
    #[serde(skip_serializing_if = "is_zero")]
    pub watch_restarts: u16,
    /// When the last object change arrived.
    pub last_event: Option<Timestamp>,
    pub protocol: Option<&'static str>,
    /// How its kinds were listed: `streaming` (a watch that begins with every object) or
    /// `paged`; absent until one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lists: Option<&'static str>,
    /// Why its kinds are listed in pages where streaming was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lists_why: Option<&'static str>,
    /// Kind → API version watched.
    pub watching: BTreeMap<&'static str, &'a str>,
    /// Kinds the credentials may not list.
    pub forbidden: Vec<&'static str>,
    pub objects: &'a HealthCounts,
    /// Where `objects` comes from: `objects` (watched or listed) or `report` (its FluxReport,
    /// with `watch = "summary"`: the objects themselves are not listed).
    pub counted: Counted,
    /// Counted by its report, the objects listed for it are its not-ready ones and what they
    /// depend on, every one as of its last look; false where they could not be listed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failures_held: bool,
    /// The Flux Operator's FluxReport (and FluxInstance), where the cluster runs the operator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<&'a Report>,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

impl<'a> Cluster<'a> {
    pub fn new(c: &'a ClusterEntry) -> Cluster<'a> {
        let conn = &c.connection;
        Cluster {
            cluster: &c.info.name,
            workspace: &c.info.workspace,
            server: &c.info.server,
            labels: &c.info.labels,
            management: &c.info.management,
            origin: c.info.origin.as_deref(),
            state: conn.phase.as_str(),
            error: conn.error.as_deref(),
            since: conn.since,
            retry_at: conn.retry_at,
            watch_restarts: conn.restarts,
            last_event: c.last_event,
            protocol: conn.protocol,
            lists: conn.lists.map(Lists::as_str),
            lists_why: conn.lists.and_then(Lists::why),
            watching: conn
                .watching
                .iter()
                .map(|served| (served.kind.as_str(), served.version.as_str()))
                .collect(),
            forbidden: conn.forbidden.iter().map(|k| k.as_str()).collect(),
            objects: &c.health,
            counted: c.counted,
            failures_held: c.held,
            report: c.report.as_deref(),
        }
    }
}

/// Clusters counted by state, every state present.
pub struct States<'a>(pub &'a PhaseCounts);

impl Serialize for States<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(Phase::ALL.len()))?;
        for p in Phase::ALL {
            map.serialize_entry(p.as_str(), &self.0.get(p))?;
        }
        map.end()
    }
}

/// One workspace's rollup.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Workspace<'a> {
    pub workspace: &'a str,
    pub clusters: u32,
    pub states: States<'a>,
    pub objects: &'a HealthCounts,
}

impl<'a> Workspace<'a> {
    pub fn new(w: &'a WorkspaceEntry) -> Workspace<'a> {
        Workspace {
            workspace: &w.name,
            clusters: w.clusters.len() as u32,
            states: States(&w.phases),
            objects: &w.health,
        }
    }
}

/// The whole fleet's rollup.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetRollup<'a> {
    pub clusters: u32,
    pub states: States<'a>,
    pub objects: &'a HealthCounts,
}

impl<'a> FleetRollup<'a> {
    pub fn new(index: &'a Index) -> FleetRollup<'a> {
        FleetRollup {
            clusters: index.phases().total(),
            states: States(index.phases()),
            objects: index.health(),
        }
    }
}
