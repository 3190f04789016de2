//! Rollouts on the simulator: a new revision promoted workspace by workspace is seen ring by
//! ring, `rollout -o json` says what the simulator's truth says, and stuck clusters are the
//! ones that tried a revision and did not apply it, once the clock says long enough.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use common::truth::seen;
use std::collections::HashMap;
use std::time::Duration;

use fluxfleet::config::Config;
use fluxfleet::export::Filter;
use fluxfleet::fleet::rollouts::{self, Matrix, Rings, Stuck, StuckRules};
use fluxfleet::fleet::{FluxKind, Health, ObjectKey};
use fluxfleet::headless::Output;
use fluxfleet::session::Session;
use fluxfleet_sim::TruthObject;
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

const EPOCH: i64 = 1_790_000_000;

fn key() -> ObjectKey {
    ObjectKey::new(FluxKind::Kustomization, "flux-system", "flux-system")
}

/// The Kustomization flux-system of every workload cluster, as the simulator means it.
fn truth_of(sim: &common::Sim) -> HashMap<String, (String, TruthObject)> {
    common::copies_of(sim, ("Kustomization", "flux-system", "flux-system"))
        .into_iter()
        .map(|(cluster, workspace, o)| (cluster, (workspace, o)))
        .collect()
}

/// Applies events until the simulator is still and the index shows what it holds for the
/// followed Kustomization on every cluster.
async fn observed(live: &mut Session, sim: &common::Sim) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        live.pump(Duration::from_millis(100)).await;
        // Quiet first: the truth read after it is final.
        let still = sim.handle.quiet();
        let truth = truth_of(sim);
        let seen = truth.iter().all(|(name, (_, t))| {
            let Some(o) = live
                .index
                .cluster_named(name)
                .and_then(|c| c.objects.get(&key()))
            else {
                return false;
            };
            let r = o.rollout.as_deref();
            r.and_then(|r| r.applied.as_deref()) == t.applied.as_deref()
                && r.and_then(|r| r.attempted.as_deref()) == t.attempted.as_deref()
        });
        if still && seen {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the index never showed the simulator's rollout"
        );
    }
}

/// Per ring (workspace), how many clusters the truth says run `revision`.
fn truth_on(sim: &common::Sim, workspaces: &[String], revision: &str) -> Vec<u32> {
    let truth = truth_of(sim);
    workspaces
        .iter()
        .map(|w| {
            truth
                .values()
                .filter(|(ws, o)| ws == w && o.applied.as_deref() == Some(revision))
                .count() as u32
        })
        .collect()
}

/// The revision most clusters of `workspace` tried.
fn tried_in(sim: &common::Sim, workspace: &str) -> String {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (ws, o) in truth_of(sim).into_values() {
        if ws == workspace
            && let Some(a) = o.attempted
        {
            *counts.entry(a).or_default() += 1;
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).unwrap().0
}

fn matrix_now(live: &Session, rings: &Rings, now: Timestamp) -> Matrix {
    rollouts::matrix(
        live.index.entries(),
        &key(),
        rings,
        &StuckRules::default(),
        now,
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_revision_is_seen_ring_by_ring_as_the_truth_says() {
    let sim = common::start_with(|c| {
        c.clusters = 12;
        c.workspaces = 3;
    })
    .await;
    // By workspace directory, so that clusters keep their workspaces.
    let inventory = fluxfleet::inventory::load(
        &fluxfleet::inventory::Lookup {
            dirs: vec![sim.handle.files.dir.join("kubeconfigs")],
            ..Default::default()
        },
        &Config::defaults(),
    );
    assert_eq!(inventory.problems, []);
    let mut live = Session::kube(&inventory, &Config::defaults().engine);
    assert!(live.settle(Duration::from_secs(20)).await);
    let mut workspaces: Vec<String> = truth_of(&sim).into_values().map(|(w, _)| w).collect();
    workspaces.sort();
    workspaces.dedup();
    let rings = Rings {
        // Promotion order: the last workspace first.
        patterns: workspaces.iter().rev().cloned().collect(),
        label: None,
    };
    let order: Vec<String> = rings.patterns.clone();
    let now = || Timestamp::from_second(EPOCH + 60).unwrap();

    // A new release reaches the first ring only.
    observed(&mut live, &sim).await;
    assert!(sim.handle.promote(&order[0]));
    // The simulator starts with its workspaces one or two generations behind: promote until
    // the first ring runs something no other ring does.
    let mut newest = tried_in(&sim, &order[0]);
    for _ in 0..3 {
        observed(&mut live, &sim).await;
        newest = tried_in(&sim, &order[0]);
        if truth_on(&sim, &order, &newest)[1..].iter().all(|n| *n == 0) {
            break;
        }
        assert!(sim.handle.promote(&order[0]));
    }
    let m = matrix_now(&live, &rings, now());
    assert_eq!(&*m.spread.newest.as_ref().unwrap().revision, newest);
    let on: Vec<u32> = m.rings.iter().map(|r| r.on_newest).collect();
    assert_eq!(on, truth_on(&sim, &order, &newest));
    assert!(on[0] > 0 && on[1..].iter().all(|n| *n == 0), "{on:?}");

    // Then the second ring; the third has not moved.
    assert!(sim.handle.promote(&order[1]));
    observed(&mut live, &sim).await;
    assert_eq!(tried_in(&sim, &order[1]), newest);
    let m = matrix_now(&live, &rings, now());
    assert_eq!(&*m.spread.newest.as_ref().unwrap().revision, newest);
    let on: Vec<u32> = m.rings.iter().map(|r| r.on_newest).collect();
    assert_eq!(on, truth_on(&sim, &order, &newest));
    assert!(on[0] > 0 && on[1] > 0 && on[2] == 0, "{on:?}");
    // The newest arrived with the first ring, at the simulator's clock.
    let since = m.spread.newest_since.unwrap().as_second();
    assert!((EPOCH..EPOCH + 60).contains(&since), "{since}");

    // `rollout KIND NAME -o json`: every cluster with the revision the truth says it runs.
    let filter = Filter {
        kind: Some(FluxKind::Kustomization),
        name: Some("flux-system".into()),
        ..Filter::default()
    };
    let mut out = Vec::new();
    fluxfleet::export::rollout::write(
        &live.index,
        &filter,
        Output::Json,
        &fluxfleet::config::RolloutSection {
            rings: rings.clone(),
            rules: StuckRules::default(),
        },
        now(),
        &mut out,
    )
    .unwrap()
    .unwrap();
    let json: Value = serde_json::from_slice(&out).unwrap();
    let truth = truth_of(&sim);
    let listed = json["clusters"].as_array().unwrap();
    assert_eq!(listed.len(), truth.len());
    for c in listed {
        let (ws, t) = &truth[c["cluster"].as_str().unwrap()];
        assert_eq!(c["workspace"], ws.as_str());
        assert_eq!(c["ring"], ws.as_str());
        assert_eq!(c["revision"]["revision"].as_str(), t.applied.as_deref());
        let tried = t
            .attempted
            .as_deref()
            .filter(|a| Some(*a) != t.applied.as_deref());
        assert_eq!(c["attempted"].as_str(), tried, "{c}");
        let standing = if t.suspended {
            "suspended"
        } else if t.applied.as_deref() == Some(&newest) && seen(t.health) == Health::Ready {
            "current"
        } else if t.health.is_failing()
            && (t.applied.as_deref() == Some(&newest) || tried == Some(&newest))
        {
            "failing"
        } else {
            "behind"
        };
        assert_eq!(c["standing"], standing, "{c}");
    }
    let rings_json = json["rings"].as_array().unwrap();
    assert_eq!(rings_json[0]["name"], order[0].as_str());
    assert_eq!(
        json["rollout"]["clusters"]["current"].as_u64().unwrap() as usize,
        listed.iter().filter(|c| c["standing"] == "current").count()
    );
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_are_those_that_tried_and_did_not_apply_once_long_enough() {
    let sim = common::start_with(|c| c.clusters = 16).await;
    let mut live = common::settled(&sim.handle.files.fleet).await;
    // Every workspace gets the next revision twice: the simulator fails a few of them there.
    let mut workspaces: Vec<String> = truth_of(&sim).into_values().map(|(w, _)| w).collect();
    workspaces.sort();
    workspaces.dedup();
    for _ in 0..2 {
        for ws in &workspaces {
            assert!(sim.handle.promote(ws));
        }
    }
    observed(&mut live, &sim).await;
    let truth: Vec<(String, TruthObject)> = sim
        .handle
        .truth()
        .into_iter()
        .filter(|c| !c.management)
        .flat_map(|c| c.objects.into_iter().map(move |o| (c.name.clone(), o)))
        .filter(|(_, o)| matches!(o.kind.as_str(), "Kustomization" | "HelmRelease"))
        .collect();
    let tried_not_applied =
        |o: &TruthObject| !o.suspended && o.attempted.is_some() && o.attempted != o.applied;
    let expected: Vec<(String, String)> = truth
        .iter()
        .filter(|(_, o)| tried_not_applied(o))
        .map(|(c, o)| (c.clone(), format!("{}/{}/{}", o.kind, o.namespace, o.name)))
        .collect();
    assert!(!expected.is_empty(), "the simulator fails some rollouts");

    // Two hours on, every one of them is stuck because of its attempt.
    let later = Timestamp::from_second(EPOCH).unwrap() + SignedDuration::from_hours(2);
    let stuck_attempts = |now: Timestamp| {
        let mut found = Vec::new();
        for row in rollouts::spreads(live.index.entries(), None, &StuckRules::default(), now) {
            if !matches!(
                row.key.kind,
                FluxKind::Kustomization | FluxKind::HelmRelease
            ) {
                continue;
            }
            let m = rollouts::matrix(
                live.index.entries(),
                &row.key,
                &Rings::default(),
                &StuckRules::default(),
                now,
            )
            .unwrap();
            for p in m.places {
                if let Some(Stuck::Attempt { .. }) = p.stuck {
                    let name = &live.index.cluster(p.cluster).unwrap().info.name;
                    found.push((
                        name.clone(),
                        format!("{}/{}/{}", row.key.kind, row.key.namespace, row.key.name),
                    ));
                }
            }
        }
        found.sort();
        found
    };
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    assert_eq!(stuck_attempts(later), expected_sorted);
    // A minute after the promotions, the ones that just failed are not stuck yet.
    let soon = stuck_attempts(Timestamp::from_second(EPOCH + 60).unwrap());
    assert!(soon.len() < expected_sorted.len(), "{soon:?}");
    sim.handle.shutdown().await;
}

/// The Kustomization flux-system's copies in `workspace` that are not ready, fixed; then the
/// index shows the simulator still and every copy as it means it.
async fn fixed(live: &mut Session, sim: &common::Sim, workspace: &str) {
    for (cluster, (ws, o)) in truth_of(sim) {
        if ws == workspace && seen(o.health) != Health::Ready {
            let kind = fluxfleet_sim::facts::FluxKind::Kustomization;
            assert!(
                sim.handle
                    .set_ready(&cluster, kind, "flux-system", "flux-system", true)
            );
        }
    }
    settled_as_meant(live, sim).await;
}

/// Pumps until the simulator is still and the index shows every flux-system copy's health and
/// revision as the simulator means them.
async fn settled_as_meant(live: &mut Session, sim: &common::Sim) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        observed(live, sim).await;
        let healthy = truth_of(sim).iter().all(|(name, (_, t))| {
            live.index
                .cluster_named(name)
                .and_then(|c| c.objects.get(&key()))
                .is_some_and(|o| o.health == seen(t.health))
        });
        if healthy {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "never settled");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gate_opens_once_the_ring_runs_the_revision_ready_and_soaked() {
    use fluxfleet::export::gate::{ClosedBy, verdict};
    let sim = common::start_with(|c| {
        c.clusters = 12;
        c.workspaces = 3;
    })
    .await;
    let kubeconfigs = sim.handle.files.dir.join("kubeconfigs");
    let inventory = fluxfleet::inventory::load(
        &fluxfleet::inventory::Lookup {
            dirs: vec![kubeconfigs.clone()],
            ..Default::default()
        },
        &Config::defaults(),
    );
    let mut live = Session::kube(&inventory, &Config::defaults().engine);
    assert!(live.settle(Duration::from_secs(20)).await);
    let mut order: Vec<String> = truth_of(&sim).into_values().map(|(w, _)| w).collect();
    order.sort();
    order.dedup();
    let rings = Rings::default();
    // The first ring gets a revision no other ring runs.
    observed(&mut live, &sim).await;
    let mut newest = String::new();
    for _ in 0..4 {
        assert!(sim.handle.promote(&order[0]));
        observed(&mut live, &sim).await;
        newest = tried_in(&sim, &order[0]);
        if truth_on(&sim, &order, &newest)[1..].iter().all(|n| *n == 0) {
            break;
        }
    }
    let filter = Filter {
        kind: Some(FluxKind::Kustomization),
        name: Some("flux-system".into()),
        ..Filter::default()
    };
    let window = StuckRules::default().suspect_window;
    let at = |minutes: i64| Timestamp::from_second(EPOCH + 60 * minutes).unwrap();
    let hour = SignedDuration::from_hours(1);
    let gate = |live: &Session, ring: &str, now| {
        verdict(
            &live.index,
            (&filter, &rings),
            (ring, &newest),
            (hour, window),
            now,
        )
    };

    // The next ring has not taken it: every copy there runs something else.
    let next = gate(&live, &order[1], at(120));
    assert!(!next.open);
    assert_eq!(next.objects, ["Kustomization/flux-system/flux-system"]);
    assert!(next.clusters > 0);
    assert_eq!(next.closed_by.len(), next.clusters, "{next:#?}");
    assert!(
        next.closed_by
            .iter()
            .all(|c| matches!(c, ClosedBy::NotApplied { runs: Some(r), .. } if *r != newest)),
        "{next:#?}"
    );

    // The first ring runs it everywhere, ready (the copies the simulator failed fixed): closed
    // while it soaks, open an hour on.
    fixed(&mut live, &sim, &order[0]).await;
    let soaking = gate(&live, &order[0], at(1));
    assert!(!soaking.open);
    assert!(
        soaking
            .closed_by
            .iter()
            .all(|c| matches!(c, ClosedBy::Soaking { since: Some(_), .. })),
        "{soaking:#?}"
    );
    let soaked = gate(&live, &order[0], at(120));
    assert!(soaked.open, "{soaked:#?}");

    // As a pipeline runs it: exit 0.
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
            .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
            .env("HOME", "/nonexistent-home")
            .env_remove("KUBECONFIG")
            .args([
                "gate",
                &order[0],
                &newest,
                "ks",
                "flux-system",
                "--soak",
                "0s",
            ])
            .arg("--kubeconfig-dir")
            .arg(&kubeconfigs)
            .args(extra)
            .output()
            .unwrap()
    };
    let open = run(&[]);
    let said = String::from_utf8_lossy(&open.stdout);
    assert_eq!(open.status.code(), Some(0), "{said}");
    assert!(
        said.starts_with(&format!("gate {} {newest}: open", order[0])),
        "{said}"
    );

    // One copy breaks: closed, naming it — in process, and for the pipeline (exit 6, JSON).
    let (broken, _) = truth_of(&sim)
        .into_iter()
        .find(|(_, (ws, _))| *ws == order[0])
        .unwrap();
    let kind = fluxfleet_sim::facts::FluxKind::Kustomization;
    assert!(
        sim.handle
            .set_ready(&broken, kind, "flux-system", "flux-system", false)
    );
    settled_as_meant(&mut live, &sim).await;
    let closed = gate(&live, &order[0], at(120));
    assert!(!closed.open);
    assert!(
        closed
            .closed_by
            .iter()
            .any(|c| matches!(c, ClosedBy::NotReady { cluster, .. } if *cluster == broken)),
        "{closed:#?}"
    );
    let shut = run(&["-o", "json"]);
    assert_eq!(shut.status.code(), Some(6));
    let json: Value = serde_json::from_slice(&shut.stdout).unwrap();
    assert_eq!(json["open"], false);
    assert!(
        json["closedBy"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["reason"] == "notReady" && c["cluster"] == broken.as_str()),
        "{json:#}"
    );
    sim.handle.shutdown().await;
}
