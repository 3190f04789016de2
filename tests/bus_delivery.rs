//! `rollout --metrics` on the collectors' history, against the simulator's truth: a scripted
//! rollout over two rings is delivered to as many copies as the simulator applied it on, with
//! the lead times its clock gives; copies that break just after are that revision's failure, and
//! its time to restore runs from the first failure to the last copy ready again, to the second.
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

/// The copies of the flux-system Kustomization in `ring`.
fn in_ring(sim: &common::Sim, ring: &str) -> Vec<(String, fluxfleet_sim::TruthObject)> {
    common::copies_of(sim, KS)
        .into_iter()
        .filter(|(_, ws, _)| ws == ring)
        .map(|(c, _, o)| (c, o))
        .collect()
}

/// Promotes `ring` until `done` says what it tried is enough; that revision.
async fn promote_until(sim: &common::Sim, ring: &str, done: impl Fn(&str) -> bool) -> String {
    for _ in 0..8 {
        assert!(sim.handle.promote(ring));
        quiet(sim).await;
        let tried = tried_in(sim, ring);
        if done(&tried) {
            return tried;
        }
    }
    panic!("{ring} never got there");
}

/// Breaks (`ready` false) or fixes one copy; when the simulator says its health turned.
async fn set_ready(sim: &common::Sim, cluster: &str, ready: bool) -> jiff::Timestamp {
    let (kind, ns, name) = (FluxKind::Kustomization, KS.1, KS.2);
    assert!(sim.handle.set_ready(cluster, kind, ns, name, ready));
    quiet(sim).await;
    copy_on(sim, cluster).ready_since.unwrap().parse().unwrap()
}

/// The copy of the flux-system Kustomization on `cluster`.
fn copy_on(sim: &common::Sim, cluster: &str) -> fluxfleet_sim::TruthObject {
    common::copies_of(sim, KS)
        .into_iter()
        .find_map(|(c, _, o)| (c == cluster).then_some(o))
        .unwrap()
}

/// A scripted rollout over two rings: the first promoted until it runs a revision no ring has
/// run (so its whole delivery is in the history), the second promoted until it runs the same;
/// in the second, two copies break one after the other and are fixed one after the other. Each
/// ring's lead times, failures and time to restore are the simulator's, to the second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_rollout_is_delivered_fails_and_is_restored_as_the_simulator_says() {
    let _turn = common::bus::one_at_a_time().await;
    // Two rings of a dozen clusters.
    let p = common::bus::published_with(|c| {
        c.clusters = 24;
        c.workspaces = 2;
    })
    .await;
    // The two largest rings.
    let mut sizes: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, ws, _) in common::copies_of(&p.sim, KS) {
        *sizes.entry(ws).or_default() += 1;
    }
    let mut rings: Vec<(String, usize)> = sizes.into_iter().collect();
    rings.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let (first, second) = (rings[0].0.clone(), rings[1].0.clone());
    // Every copy healthy to begin with (the simulator spreads failures over the fleet): what
    // fails later, fails in the script.
    for (cluster, ws, o) in common::copies_of(&p.sim, KS) {
        if (ws == first || ws == second) && o.health != fluxfleet_sim::facts::Health::Ready {
            set_ready(&p.sim, &cluster, true).await;
        }
    }
    let newest = promote_until(&p.sim, &first, |tried| {
        !common::copies_of(&p.sim, KS)
            .into_iter()
            .any(|(_, ws, o)| ws != first && o.applied.as_deref() == Some(tried))
    })
    .await;
    promote_until(&p.sim, &second, |tried| tried == newest).await;

    // Delivered as applied, with the lead times the simulator's clock gives: from the
    // revision's first artifact anywhere to each copy's first reconcile of it, share by share.
    for ring in [&first, &second] {
        let copies = in_ring(&p.sim, ring);
        let applied = copies
            .iter()
            .filter(|(_, o)| o.applied.as_deref() == Some(&newest))
            .count();
        assert!(applied > 0, "{ring}: none of its copies runs {newest}");
        let delivered = until(&p, ring, &newest, "delivered as applied", |d| {
            d["applied"] == applied
        })
        .await;
        let truth = lead_times(&p.sim, &copies, &newest);
        assert!(truth[0].is_i64(), "half of {ring} runs it: {truth}");
        assert_eq!(delivered["leadSeconds"], truth, "{ring}: {delivered}");
        assert_eq!(delivered["failed"], 0, "{ring}: {delivered}");
    }

    // Two copies that applied it break, one after the other (in the ring where most did; a
    // few fail to apply it): the revision's failure, from the first. Fixed in turn: restored
    // only when both are.
    let running_in = |ring: &str| -> Vec<String> {
        in_ring(&p.sim, ring)
            .into_iter()
            .filter(|(_, o)| o.applied.as_deref() == Some(&newest))
            .map(|(c, _)| c)
            .collect()
    };
    let (second, first) = if running_in(&second).len() >= running_in(&first).len() {
        (second, first)
    } else {
        (first, second)
    };
    let running = running_in(&second);
    assert!(running.len() >= 2, "{second}: {running:?} run {newest}");
    let failed_at = set_ready(&p.sim, &running[0], false).await;
    until(&p, &second, &newest, "the first failure", |d| {
        d["failed"] == 1
    })
    .await;
    set_ready(&p.sim, &running[1], false).await;
    until(&p, &second, &newest, "the second failure", |d| {
        d["failed"] == 2
    })
    .await;
    set_ready(&p.sim, &running[0], true).await;
    let restored_at = set_ready(&p.sim, &running[1], true).await;
    let restored = until(&p, &second, &newest, "restored", |d| {
        d["restoredSeconds"].is_i64()
    })
    .await;
    assert_eq!(restored["failed"], 2, "{restored}");
    assert_eq!(
        restored["failedAt"],
        failed_at.to_string(),
        "the first failure, as its Ready condition says"
    );
    assert_eq!(
        restored["restoredSeconds"],
        restored_at.duration_since(failed_at).as_secs(),
        "from the first failure to the last copy ready again: {restored}"
    );
    // The other ring saw none of it.
    let other = until(&p, &first, &newest, "the other ring", |_| true).await;
    assert_eq!(other["failed"], 0, "{other}");
}
