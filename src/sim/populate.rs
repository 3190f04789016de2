//! Fills a cluster with its namespaces and Flux objects, reproducibly for a seed: mostly ready,
//! some failing with the controllers' real reasons, a few stalled, suspended or progressing, and
//! one "hot" failure per workspace that hits many of its clusters identically.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use super::catalog::{self, Planned};
use super::clock::Clock;
use super::flux::Intent;
use super::flux::{self, Context, Failure};
use super::resources::{Res, api_version};
use super::revisions::{ObjKey, consumed_revision, key_of, revision_at, source_of};
use super::rng::Rng;
use super::world::{Cluster, World};
use crate::facts::annotations;
use crate::facts::{FluxKind, FluxRelease, Health};
use crate::scenario::{Cast, Drift, Part, Runs, STALE_FOR};

mod events;
mod history;
mod intent;
mod inventory;
mod metadata;
use events::corrected;
pub use events::event;
use history::{flapped, ran_since};
use intent::{decide, decide_story};
pub use metadata::{add_namespaces, uuid};
use metadata::{finish_metadata, meta};

/// Days between two rollout generations before the simulator starts.
const RELEASE_DAYS: i64 = 2;

/// Populates a cluster with `count` Flux objects. `generation` is its ring's rollout generation,
/// `latest` the fleet's newest: what a rollout moves arrived `RELEASE_DAYS` per generation
/// behind, so that newer revisions are also the more recent ones.
pub fn populate(
    cluster: &Cluster,
    (seed, story): (u64, Option<&Cast>),
    clock: &Clock,
    count: usize,
    generation: usize,
    latest: usize,
) {
    let mut rng = Rng::fork(seed, &cluster.name);
    let mut store = cluster.store();
    let mut namespaces: BTreeSet<String> =
        ["default", "kube-system", "kube-public", "kube-node-lease"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    if cluster.flux.is_none() {
        add_namespaces(&mut store, clock, namespaces.iter().map(String::as_str));
        return;
    }
    namespaces.insert("flux-system".into());
    let planned = catalog::plan(&cluster.name, &cluster.workspace, count);
    let hot = hot_failure(seed, &cluster.workspace, &planned);
    // The story: when the newest revision reached this cluster (dev first, staging after), where
    // it did. What it applied followed within minutes, and what it broke failed five after.
    let arrived = (story.is_some() && generation == latest && generation > 0).then(|| {
        let env = cluster.labels.get("env").map_or("", String::as_str);
        let hours = if env == "dev" { 4 } else { 2 };
        3_600 * hours + 60 * Rng::fork(seed, &format!("arrived-{}", cluster.name)).below(30) as i64
    });
    let mut healths: HashMap<ObjKey, Health> = HashMap::new();
    let mut revisions: HashMap<ObjKey, String> = HashMap::new();
    let mut events = Vec::new();
    for p in planned {
        let Some(served) = cluster.served(Res::Flux(p.kind)) else {
            continue;
        };
        let mut obj = p.object;
        let api = api_version(p.kind.group(), served.storage_version());
        let age = 3600 * (24 + rng.below(24 * 120) as i64);
        finish_metadata(&mut rng, clock, &mut obj, &api, age);
        if let Some(ns) = obj.pointer("/metadata/namespace").and_then(Value::as_str) {
            namespaces.insert(ns.to_string());
        }
        let part = story.map_or(Part::None, |cast| {
            let (ns, name) = (
                meta(&obj, "/metadata/namespace"),
                meta(&obj, "/metadata/name"),
            );
            cast.part(cluster.index, p.kind, ns, name)
        });
        // What makes a copy differ is in its spec, as on a real cluster; a hand edit is found
        // by its controller (below, once it has a status).
        match part {
            Part::Drift(Drift::Substituted) => {
                obj["spec"]["postBuild"] =
                    json!({"substitute": {"ingress_class": "nginx-internal"}});
            }
            Part::Drift(Drift::Overridden) => {
                obj["spec"]["values"]["controller"] = json!({"replicaCount": 5});
            }
            Part::Drift(Drift::Live) => {
                obj["spec"]["driftDetection"] = json!({"mode": "warn"});
            }
            // Slow because it waits on a StatefulSet of its own rolling, pod by pod.
            Part::Runs(Runs::Slow) => {
                obj["spec"]["healthChecks"] = json!([{"apiVersion": "apps/v1",
                    "kind": "StatefulSet", "name": "prometheus-k8s", "namespace": "monitoring"}]);
                obj["spec"]["timeout"] = json!("10m0s");
            }
            _ => {}
        }
        let intent = match story {
            Some(_) => decide_story(part, p.kind, &obj, &healths),
            None => decide(
                &mut rng,
                p.kind,
                &obj,
                hot.as_ref().map(|(k, n, f)| (*k, n.as_str(), *f)),
                &healths,
            ),
        };
        // What its source really holds (a failing source keeps an older artifact), else the ring's.
        let revision = source_of(p.kind, &obj)
            .and_then(|src| {
                revisions
                    .get(&src)
                    .map(|r| consumed_revision(p.kind, src.0, r))
            })
            .unwrap_or_else(|| revision_at(seed, p.kind, &obj, generation));
        let key = key_of(p.kind, &obj);
        // Moved by rollouts: arrived with its generation, within hours of its release.
        let rolled = generation > 0 && revision != revision_at(seed, p.kind, &obj, generation - 1);
        let ago = match (story, part, intent.health, arrived) {
            // The story's long-standing trouble began days ago.
            (Some(_), Part::Misconfigured(_), ..) => 86_400 * (2 + rng.below(6) as i64),
            // What the newest revision broke failed five minutes after it arrived; what waits
            // on it, at its next retry.
            (Some(_), Part::Bad, Health::Failed | Health::Stalled, Some(at)) => at - 300,
            (Some(_), _, Health::Failed | Health::Stalled, Some(at)) => at - 330,
            (Some(_), _, Health::Failed | Health::Stalled, None) => {
                3_600 * (2 + rng.below(3) as i64)
            }
            (_, _, _, Some(at)) if rolled => at - 60 * rng.below(3) as i64,
            _ if rolled => {
                let behind = latest.saturating_sub(generation) as i64;
                behind * RELEASE_DAYS * 86_400 + 60 * (5 + rng.below(60 * 6)) as i64
            }
            _ => 60 * (5 + rng.below(60 * 24 * 7)) as i64,
        };
        // A failing object shows an older applied revision: render it once ready at the
        // previous generation first, like a controller that succeeded before.
        if intent.health != Health::Ready && generation > 0 {
            let ready = Intent {
                health: Health::Ready,
                failure: None,
            };
            let prev_rev = revision_at(seed, p.kind, &obj, generation - 1);
            let behind = latest.saturating_sub(generation) as i64 + 1;
            // Before it began to fail.
            let then = (behind * RELEASE_DAYS * 86_400 + 3_600).max(ago + 3_600);
            let then = clock.before_start(then);
            let ctx = context(cluster, p.kind, &prev_rev, &then);
            obj["status"] = flux::status::render_status(&obj, ready, &ctx);
        }
        // A stopped controller applied what it runs before it stopped.
        let ago = match part {
            Part::Runs(Runs::Stale) => ago.max(STALE_FOR),
            _ => ago,
        };
        let ran_at = ago;
        let ago = clock.before_start(ago);
        let ctx = context(cluster, p.kind, &revision, &ago);
        obj["status"] = flux::status::render_status(&obj, intent, &ctx);
        if p.kind == FluxKind::Kustomization {
            ran_since(&mut obj, (ran_at, part), clock, &mut rng);
        }
        if part == Part::Runs(Runs::Flapping) {
            flapped(&mut obj, clock);
        }
        if part == Part::Drift(Drift::Live) && intent.health == Health::Ready {
            let drifted = flux::records::drifted(&obj, &ago);
            // helm-controller tells it as a Warning event too, in the condition's words.
            let message = drifted["message"].as_str().unwrap_or_default().to_string();
            events.push(event(
                &mut rng,
                clock,
                &obj,
                p.kind,
                "DriftDetected",
                &message,
                true,
            ));
            if let Some(conditions) = obj["status"]["conditions"].as_array_mut() {
                conditions.push(drifted);
            }
        }
        if part == Part::Drift(Drift::Corrected) && intent.health == Health::Ready {
            events.push(corrected(&mut rng, clock, &obj, p.kind));
        }
        match (story, part) {
            (None, _) if rng.chance(0.03) => obj["spec"]["suspend"] = json!(true),
            (Some(_), Part::Suspended { by, why }) => {
                obj["spec"]["suspend"] = json!(true);
                let notes = &mut obj["metadata"]["annotations"];
                notes[annotations::SUSPENDED_BY] = json!(by);
                notes[annotations::SUSPEND_REASON] = json!(why);
                notes[annotations::OPERATOR_SUSPENDED_BY] = json!(by);
            }
            _ => {}
        }
        if let (Some(f), true) = (intent.failure, intent.health.is_failing()) {
            let (reason, message) = flux::failure_text(f, &obj, &ctx);
            events.push(event(&mut rng, clock, &obj, p.kind, reason, &message, true));
        }
        if let Some(rev) = obj
            .pointer("/status/artifact/revision")
            .and_then(Value::as_str)
        {
            revisions.insert(key.clone(), rev.to_string());
        }
        // A suspended dependency that is Ready still counts as ready for dependsOn.
        healths.insert(key, intent.health);
        store.put(Res::Flux(p.kind), obj, Some(intent));
    }
    inventory::add_applied(&mut store);
    add_namespaces(&mut store, clock, namespaces.iter().map(String::as_str));
    for ev in events {
        store.put(Res::Event, ev, None);
    }
}

/// The workspace's hot failure: one applier, and how it fails, chosen per workspace so that
/// the same failure shows on many clusters (and groups in triage).
fn hot_failure(
    seed: u64,
    workspace: &str,
    planned: &[Planned],
) -> Option<(FluxKind, String, Failure)> {
    let mut rng = Rng::fork(seed, &format!("hot-{workspace}"));
    let appliers: Vec<&Planned> = planned
        .iter()
        .filter(|p| matches!(p.kind, FluxKind::Kustomization | FluxKind::HelmRelease))
        .collect();
    (!appliers.is_empty()).then(|| {
        let p = appliers[rng.below(appliers.len())];
        let name = p.object["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string();
        (p.kind, name, *rng.pick(Failure::for_kind(p.kind).0))
    })
}

/// What the status writer needs for an object of `kind` on `cluster`, written at `now`.
fn context<'a>(cluster: &Cluster, kind: FluxKind, revision: &'a str, now: &'a str) -> Context<'a> {
    Context {
        kind,
        revision,
        now,
        handled: None,
        flux: cluster.flux.unwrap_or(FluxRelease::LATEST),
    }
}

/// Populates the workload clusters on all cores.
pub fn populate_all(world: &Arc<World>, seed: u64, objects: usize, clock: &Clock, rings: &[usize]) {
    let latest = rings.iter().copied().max().unwrap_or(0);
    let workloads: Vec<&Arc<Cluster>> = world.workloads().collect();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(workloads.len().max(1));
    let chunk = workloads.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for part in workloads.chunks(chunk) {
            s.spawn(move || {
                for c in part {
                    let story = world.story.as_ref();
                    let ring = match story {
                        Some(_) => {
                            let env = c.labels.get("env").map_or("", String::as_str);
                            Cast::generation(env, latest)
                        }
                        None => world
                            .workspaces
                            .iter()
                            .position(|w| *w == c.workspace)
                            .map_or(0, |i| rings[i]),
                    };
                    populate(c, (seed, story), clock, objects, ring, latest);
                }
            });
        }
    });
    for c in workloads {
        let rv = c.store().resource_version();
        c.notify(rv);
    }
}
