//! `/sim/truth` and `/sim/stats`: what is really in the fleet and what the server saw, so tests
//! and benchmarks can compare a client's picture with reality.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http::{Response, StatusCode};
use serde::Serialize;
use serde_json::{Value, json};

use super::body::{Body, json as respond};
use super::resources::Res;
use super::state::State;
use super::status::ApiError;
use super::world::{Cluster, World};
use crate::facts::{FluxKind, Health};
use crate::scenario::{Cast, Part};

/// One Flux object as the simulator means it to be.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TruthObject {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub health: Health,
    pub suspended: bool,
    pub resource_version: String,
    /// Its Ready condition's reason as written (`DependencyNotReady` is not counted failing by
    /// the Flux Operator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What it runs: a Kustomization's `lastAppliedRevision`, a HelmRelease's chart version, a
    /// source's artifact revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<String>,
    /// `lastAttemptedRevision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted: Option<String>,
    /// When what it runs arrived, as the object records it: a Kustomization's first reconcile of
    /// its applied revision (`status.history`), a HelmRelease's `firstDeployed`, a source's
    /// artifact time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_at: Option<String>,
    /// When its health last turned (its Ready condition's `lastTransitionTime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_since: Option<String>,
    /// Stuck as fluxfleet's rollout rules say by default: a Kustomization or HelmRelease that
    /// tried a revision other than the one it runs, and has not turned ready for half an hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck: Option<TruthStuck>,
    /// The story scenario: the revision that broke this copy (what its failure is to be blamed
    /// on); None for anything the story did not break with a change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_by: Option<String>,
    /// The story scenario: how this copy differs from the others on its revision —
    /// `substituted` (other manifests applied), `values` (another config digest) or `live`
    /// (its objects changed by hand, Drifted=True); None for a copy like the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<String>,
    /// The story scenario: how this copy's runs differ from its other copies' where its
    /// controller records it — `slow` (its last run took minutes), `flapping` (its releases
    /// alternate between failed and deployed) or `stale` (not reconciled for hours: its
    /// controller stopped); None for a copy like the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<String>,
    /// A Kustomization's or HelmRelease's workload and what is wrong with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<TruthWorkload>,
}

/// The workload a Kustomization or HelmRelease deploys, as the simulator means it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TruthWorkload {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// `healthy`, `image-not-found`, `registry-denied`, `crash-loop`, `oom-killed`,
    /// `unschedulable`, `readiness-probe`, `backoff-limit` or `hostile`.
    pub fault: String,
    /// The image its newest pods run.
    pub image: String,
    /// Who its labels say applied it (`Kustomization flux-system/apps`): the object that
    /// deploys it, except where another Kustomization applied it; None where it was applied by
    /// hand (no Flux label) — what a trace of it finds.
    #[serde(default)]
    pub applied_by: Option<String>,
}

/// Why a copy is stuck: the revision it tried, and since when it has failed to apply it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TruthStuck {
    pub tried: String,
    pub since: String,
}

/// How long a copy may try a revision before it counts as stuck (the rollout rules' default).
pub const STUCK_AFTER: i64 = 30 * 60;

/// One cluster as the simulator means it to be.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TruthCluster {
    pub name: String,
    pub workspace: String,
    pub management: bool,
    /// `v2.9`, or None when Flux is not installed.
    pub flux: Option<String>,
    /// The Flux Operator runs there, with its FluxInstance and FluxReport.
    #[serde(default)]
    pub operator: bool,
    pub faults: Vec<String>,
    pub objects: Vec<TruthObject>,
}

pub fn truth_of(cluster: &Cluster, now: i64, story: Option<&Cast>) -> TruthCluster {
    let store = cluster.store();
    let workloads = crate::workloads::shape::all(cluster, &store, story);
    let objects = store
        .all()
        .filter_map(|o| {
            let Res::Flux(kind) = o.res else { return None };
            let intent = o.intent?;
            let value = o.value();
            Some(TruthObject {
                kind: kind.as_str().to_string(),
                namespace: o.namespace.clone(),
                name: o.name.clone(),
                health: if o.suspended {
                    Health::Suspended
                } else {
                    intent.health
                },
                suspended: o.suspended,
                resource_version: o.rv.to_string(),
                reason: ready_reason(&value),
                stuck: stuck_of(kind, &value, now).filter(|_| !o.suspended),
                broken_by: story
                    .filter(|cast| {
                        cast.part(cluster.index, kind, &o.namespace, &o.name) == Part::Bad
                    })
                    .and_then(|_| text(&value, "/status/lastAttemptedRevision")),
                drift: story.and_then(|cast| {
                    match cast.part(cluster.index, kind, &o.namespace, &o.name) {
                        Part::Drift(d) => Some(d.name().to_string()),
                        _ => None,
                    }
                }),
                runs: story.and_then(|cast| {
                    match cast.part(cluster.index, kind, &o.namespace, &o.name) {
                        Part::Runs(r) => runs_of(r, &value, o.suspended).then(|| r.name().into()),
                        _ => None,
                    }
                }),
                workload: workloads
                    .iter()
                    .find(|w| w.owner == (kind, o.namespace.clone(), o.name.clone()))
                    .map(|w| TruthWorkload {
                        kind: w.kind.name().to_string(),
                        namespace: w.namespace.clone(),
                        name: w.name.clone(),
                        fault: w.fault.name().to_string(),
                        image: crate::workloads::shape::image(w, &w.revision),
                        applied_by: w
                            .applied_by
                            .as_ref()
                            .map(|(kind, ns, name)| format!("{kind} {ns}/{name}")),
                    }),
                applied: applied_of(kind, &value),
                applied_at: applied_at_of(kind, &value),
                ready_since: ready_since(&value),
                attempted: text(&value, "/status/lastAttemptedRevision"),
            })
        })
        .collect();
    TruthCluster {
        name: cluster.name.clone(),
        workspace: cluster.workspace.clone(),
        management: cluster.management,
        flux: cluster.flux.map(|r| r.name()),
        operator: cluster.operator,
        faults: cluster.faults().names(),
        objects,
    }
}

/// Whether what the story did to a copy's runs shows in what its controller records: a
/// history (Flux ≥ 2.7 for a Kustomization), and for a stopped controller, no one having asked
/// it to reconcile since (a request gets through) nor suspended it.
fn runs_of(runs: crate::scenario::Runs, value: &Value, suspended: bool) -> bool {
    let recorded = value.pointer("/status/history/0").is_some();
    match runs {
        crate::scenario::Runs::Stale => {
            recorded && !suspended && value.pointer("/status/lastHandledReconcileAt").is_none()
        }
        _ => recorded,
    }
}

fn ready_reason(value: &Value) -> Option<String> {
    crate::facts::ready_condition(value)?["reason"]
        .as_str()
        .map(str::to_string)
}

fn text(value: &Value, path: &str) -> Option<String> {
    value.pointer(path)?.as_str().map(str::to_string)
}

fn applied_of(kind: FluxKind, value: &Value) -> Option<String> {
    match kind {
        FluxKind::Kustomization => text(value, "/status/lastAppliedRevision"),
        FluxKind::HelmRelease => text(value, "/status/history/0/chartVersion"),
        _ => text(value, "/status/artifact/revision"),
    }
}

fn applied_at_of(kind: FluxKind, value: &Value) -> Option<String> {
    match kind {
        // Newest first, one entry per revision and outcome: the oldest of the run of entries
        // that starts at the newest for the applied revision is when it arrived.
        FluxKind::Kustomization => {
            let applied = text(value, "/status/lastAppliedRevision")?;
            let history = value.pointer("/status/history")?.as_array()?;
            let revision = |e: &Value| text(e, "/metadata/revision");
            let start = history
                .iter()
                .position(|e| revision(e).as_deref() == Some(&applied))?;
            let run = history[start..]
                .iter()
                .take_while(|e| revision(e).as_deref() == Some(&applied))
                .count();
            text(&history[start + run - 1], "/firstReconciled")
        }
        FluxKind::HelmRelease => text(value, "/status/history/0/firstDeployed"),
        _ => text(value, "/status/artifact/lastUpdateTime"),
    }
}

/// A Kustomization or HelmRelease that tried what it does not run for longer than
/// [`STUCK_AFTER`], counted from its Ready condition's last transition.
fn stuck_of(kind: FluxKind, value: &Value, now: i64) -> Option<TruthStuck> {
    if !matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease) {
        return None;
    }
    let tried = text(value, "/status/lastAttemptedRevision")?;
    let runs = match kind {
        FluxKind::HelmRelease => text(value, "/status/history/0/chartVersion")
            .or_else(|| text(value, "/status/lastAppliedRevision")),
        _ => text(value, "/status/lastAppliedRevision"),
    }?;
    let since = ready_since(value)?;
    let at = since.parse::<jiff::Timestamp>().ok()?.as_second();
    (tried != runs && now - at > STUCK_AFTER).then_some(TruthStuck { tried, since })
}

/// The Ready condition's `lastTransitionTime`.
fn ready_since(value: &Value) -> Option<String> {
    value
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")?
        .get("lastTransitionTime")?
        .as_str()
        .map(str::to_string)
}

pub fn truth(world: &World, only: Option<&str>) -> Vec<TruthCluster> {
    world
        .clusters
        .iter()
        .filter(|c| only.is_none_or(|n| n == c.name))
        .map(|c| truth_of(c, world.clock.now_seconds(), world.story.as_ref()))
        .collect()
}

pub fn stats(state: &State) -> Value {
    let g = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let clusters: serde_json::Map<String, Value> = state
        .world
        .clusters
        .iter()
        .map(|c| {
            let k = &c.counters;
            (c.name.clone(), json!({
                "connections": g(&k.connections), "connectionsTotal": g(&k.connections_total),
                "openWatches": g(&k.open_watches),
                "get": g(&k.get), "list": g(&k.list), "watch": g(&k.watch), "streamed": g(&k.streamed), "patch": g(&k.patch),
                "otherWrites": g(&k.other_write), "discovery": g(&k.discovery), "rejected": g(&k.rejected),
                "throttled": g(&k.throttled), "goaways": g(&k.goaways), "refused": g(&k.refused),
                "mutating": k.mutating(),
            }))
        })
        .collect();
    let mut v = state.stats.to_value();
    v["mutatingTotal"] = json!(
        state
            .world
            .clusters
            .iter()
            .map(|c| c.counters.mutating())
            .sum::<u64>()
    );
    // PATCHes alone: an action's changes, without the Events it records beside them.
    v["patchTotal"] = json!(
        state
            .world
            .clusters
            .iter()
            .map(|c| g(&c.counters.patch))
            .sum::<u64>()
    );
    v["clusters"] = Value::Object(clusters);
    v
}

pub fn endpoint(
    state: &State,
    rest: &str,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let body = match rest.trim_end_matches('/') {
        "truth" => json!({"clusters": truth(&state.world, q.get("cluster").map(String::as_str))}),
        "stats" => stats(state),
        _ => return Err(ApiError::no_route()),
    };
    Ok(respond(StatusCode::OK, Bytes::from(body.to_string())))
}
