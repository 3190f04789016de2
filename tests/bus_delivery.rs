//! `rollout --metrics` on the collectors' history: a revision promoted to one ring is delivered
//! to as many of its copies as the simulator applied it on, with the lead times its clock gives;
//! a copy that breaks just after is that revision's failure, restored once it is ready again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::{Duration, Instant};

use fluxfleet_sim::facts::FluxKind;
use serde_json::Value;

const KS: (&str, &str, &str) = ("Kustomization", "flux-system", "flux-system");

/// `rollout ks flux-system --metrics -o json` on the bus: the ring's row.
async fn delivery(p: &common::bus::Published, ring: &str) -> Option<Value> {
    let kubeconfigs = p.sim.dir.path().join("kubeconfigs");
    let out = common::bus::command(&kubeconfigs)
        .args(["rollout", "ks", "flux-system", "--metrics", "--since", "1h"])
        .args(["--nats", &p.options.url, "-o", "json", "--timeout", "10s"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["rings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ring"] == ring)
        .cloned()
}

/// Runs `delivery` until `done` says the ring's row for `revision` is as wanted.
async fn until(
    p: &common::bus::Published,
    ring: &str,
    revision: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let row = delivery(p, ring).await;
        let of = row.as_ref().and_then(|r| {
            r["revisions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["revision"] == revision)
                .cloned()
        });
        if let Some(of) = of.filter(|d| done(d)) {
            return of;
        }
        assert!(Instant::now() < deadline, "{what}: {row:#?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Waits until the simulator has nothing under way.
async fn quiet(sim: &common::Sim) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !sim.handle.quiet() {
        assert!(Instant::now() < deadline, "the simulator never settled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The revision most copies of `ring` tried.
fn tried_in(sim: &common::Sim, ring: &str) -> String {
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    for (_, ws, o) in common::copies_of(sim, KS) {
        if ws == ring
            && let Some(a) = o.attempted
        {
            *counts.entry(a).or_default() += 1;
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).unwrap().0
}

/// The simulator's lead times of `revision` in a ring of `copies`, in seconds, to 50, 90 and
/// 100 % (null until that many run it): from its first arrival on any object of the fleet (a
/// source's artifact) to each copy's first reconcile of it.
fn lead_times(
    sim: &common::Sim,
    copies: &[(String, fluxfleet_sim::TruthObject)],
    revision: &str,
) -> Value {
    let time = |t: &str| t.parse::<jiff::Timestamp>().unwrap();
    let first = common::workloads(sim)
        .into_iter()
        .flat_map(|c| c.objects)
        .filter(|o| o.applied.as_deref() == Some(revision))
        .filter_map(|o| o.applied_at.as_deref().map(time))
        .min()
        .unwrap();
    let mut applied: Vec<jiff::Timestamp> = copies
        .iter()
        .filter(|(_, o)| o.applied.as_deref() == Some(revision))
        .map(|(_, o)| time(o.applied_at.as_deref().unwrap()))
        .collect();
    applied.sort();
    let lead = |share: f64| {
        let k = ((copies.len() as f64 * share).ceil() as usize).max(1);
        applied
            .get(k - 1)
            .map(|at| at.duration_since(first).as_secs())
    };
    serde_json::json!([lead(0.5), lead(0.9), lead(1.0)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_revision_is_delivered_fails_and_is_restored_as_the_simulator_says() {
    let _turn = common::bus::one_at_a_time().await;
    let p = common::bus::published().await;
    let copies = common::copies_of(&p.sim, KS);
    let ring = copies[0].1.clone();
    // Promoted until the ring runs a revision no other ring has run: its whole delivery is in
    // the history. The simulator applies it on most of the ring's copies (a few fail and stay
    // behind).
    let mut newest = String::new();
    for _ in 0..4 {
        assert!(p.sim.handle.promote(&ring));
        quiet(&p.sim).await;
        newest = tried_in(&p.sim, &ring);
        let elsewhere = common::copies_of(&p.sim, KS)
            .into_iter()
            .any(|(_, ws, o)| ws != ring && o.applied.as_deref() == Some(&newest));
        if !elsewhere {
            break;
        }
    }
    let in_ring: Vec<(String, fluxfleet_sim::TruthObject)> = common::copies_of(&p.sim, KS)
        .into_iter()
        .filter(|(_, ws, _)| *ws == ring)
        .map(|(c, _, o)| (c, o))
        .collect();
    let applied = in_ring
        .iter()
        .filter(|(_, o)| o.applied.as_deref() == Some(&newest))
        .count();
    assert!(applied > 0);
    let delivered = until(&p, &ring, &newest, "delivered as applied", |d| {
        d["applied"] == applied
    })
    .await;
    // Lead times as the simulator's clock has them: from the revision's first artifact
    // anywhere to the copies' first reconciles of it, share by share.
    let truth = lead_times(&p.sim, &in_ring, &newest);
    assert!(truth[0].is_i64(), "half the ring runs it: {truth}");
    assert_eq!(delivered["leadSeconds"], truth, "{delivered}");
    assert_eq!(delivered["failed"], 0);

    // One copy that applied it breaks at once: the revision's failure; fixed: restored.
    let (broken, _) = in_ring
        .iter()
        .find(|(_, o)| o.applied.as_deref() == Some(&newest))
        .unwrap();
    let (kind, ns, name) = (FluxKind::Kustomization, KS.1, KS.2);
    assert!(p.sim.handle.set_ready(broken, kind, ns, name, false));
    let failed = until(&p, &ring, &newest, "its failure", |d| d["failed"] == 1).await;
    assert!(failed.get("restoredSeconds").is_none(), "{failed}");
    assert!(p.sim.handle.set_ready(broken, kind, ns, name, true));
    let restored = until(&p, &ring, &newest, "restored", |d| {
        d["restoredSeconds"].is_i64()
    })
    .await;
    assert_eq!(restored["failed"], 1);
    assert!(restored["restoredSeconds"].as_i64().unwrap() >= 0);
}
