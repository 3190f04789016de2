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
use fluxfleet::export::request::Output;
use fluxfleet::fleet::rollouts::{self, Matrix, Rings, Rules, Stuck};
use fluxfleet::fleet::{FluxKind, Health, ObjectKey};
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
    rollouts::matrix(live.index.entries(), &key(), rings, &Rules::default(), now).unwrap()
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
        &fluxfleet::inventory::Request {
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
        &fluxfleet::config::Rollout {
            rings: rings.clone(),
            rules: Rules::default(),
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
        for row in rollouts::spreads(live.index.entries(), None, &Rules::default(), now) {
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
                &Rules::default(),
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
