//! The drift view's cost at 10,000 clusters × 20 objects (10 Kustomizations and 10
//! HelmReleases each, every one with its applied digest and how its last run went; 1 % of the
//! copies of each on another digest, 1 % slow, 0.5 % flapping, 0.1 % drifted live): the time of
//! one rebuild (`fleet::drift::drift` over the whole index, as `fluxfleet drift`, the MCP tool,
//! `gate` and the TUI's drift view make it), median and slowest of 20, and the memory what drift
//! reads costs the index — resident set after the index is built with the digests and the runs'
//! durations and intervals, and (`-- without`) with the same objects recording none of them.
//!
//! `cargo bench --bench drift` then `cargo bench --bench drift -- without`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{ClusterInfo, ClusterKey, FluxKind, FluxSummary, Index};
use serde_json::{Value, json};

const CLUSTERS: usize = 10_000;
const EACH: usize = 10;

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn digest(seed: &str) -> String {
    // A digest's length and spread, without a hash crate.
    let mut h: u64 = 1469598103934665603;
    for b in seed.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(1099511628211);
    }
    format!(
        "sha256:{h:016x}{:016x}{:016x}{:016x}",
        h.rotate_left(7),
        h.rotate_left(21),
        h.rotate_left(42)
    )
}

fn ks(c: usize, i: usize, with: bool) -> Value {
    let revision = format!("main@sha1:{:040x}", i + 1);
    let odd = (c * 31 + i).is_multiple_of(100);
    let d = digest(&format!("ks-{i}-{}", if odd { c } else { 0 }));
    let slow = (c * 13 + i).is_multiple_of(100);
    let flapping = (c * 11 + i).is_multiple_of(200);
    let run = |status: &str, at: &str| {
        let mut entry = json!({"firstReconciled": "2026-12-01T00:00:00Z",
            "lastReconciledStatus": status, "totalReconciliations": 12,
            "metadata": {"revision": revision}});
        if with {
            entry["digest"] = json!(d);
            entry["lastReconciled"] = json!(at);
            entry["lastReconciledDuration"] = json!(if slow { "300s" } else { "1.2s" });
        }
        entry
    };
    let mut history = vec![run("ReconciliationSucceeded", "2026-12-01T01:00:00Z")];
    if flapping {
        history.push(run("ReconciliationFailed", "2026-12-01T00:50:00Z"));
        history.push(run("ReconciliationSucceeded", "2026-12-01T00:40:00Z"));
        history.push(run("ReconciliationFailed", "2026-12-01T00:30:00Z"));
    }
    let mut spec = json!({"sourceRef": {"kind": "GitRepository", "name": "flux-system"}});
    if with {
        spec["interval"] = json!("10m");
    }
    json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": format!("app-{i:02}"), "namespace": "flux-system", "generation": 1},
        "spec": spec,
        "status": {"observedGeneration": 1, "lastAppliedRevision": revision, "lastAttemptedRevision": revision,
            "history": history,
            "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                "message": format!("Applied revision: {revision}"), "lastTransitionTime": "2026-12-01T00:00:00Z"}]}})
}

fn hr(c: usize, i: usize, with: bool) -> Value {
    let odd = (c * 17 + i).is_multiple_of(100);
    let mut entry = json!({"chartName": format!("chart-{i}"), "chartVersion": "1.2.3",
        "firstDeployed": "2026-12-01T00:00:00Z", "status": "deployed", "version": 3});
    let mut status = json!({"observedGeneration": 1});
    let mut spec = json!({"chart": {"spec": {"chart": format!("chart-{i}"), "sourceRef": {"kind": "HelmRepository", "name": "charts"}}}});
    if with {
        entry["configDigest"] = json!(digest(&format!("hr-{i}-{}", if odd { c } else { 0 })));
        let slow = (c * 19 + i).is_multiple_of(100);
        status["lastAttemptedReleaseActionDuration"] = json!(if slow { "240s" } else { "3.5s" });
        spec["interval"] = json!("5m");
    }
    let mut conditions = vec![
        json!({"type": "Ready", "status": "True", "reason": "UpgradeSucceeded",
        "message": "Helm upgrade succeeded", "lastTransitionTime": "2026-12-01T00:00:00Z"}),
    ];
    if (c * 7 + i).is_multiple_of(1000) {
        conditions.push(
            json!({"type": "Drifted", "status": "True", "reason": "DriftDetected",
            "message": "Cluster state of release has drifted from the desired state"}),
        );
    }
    status["history"] = json!([entry]);
    status["conditions"] = json!(conditions);
    json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": format!("release-{i:02}"), "namespace": "apps", "generation": 1},
        "spec": spec,
        "status": status})
}

fn main() {
    let with = !std::env::args().any(|a| a == "without");
    let before = rss_kib();
    let started = Instant::now();
    let mut index = Index::new();
    for c in 0..CLUSTERS {
        let name = format!("cluster-{c:05}");
        let key = ClusterKey::new(name.clone());
        index.add_cluster(ClusterInfo {
            key: key.clone(),
            ..ClusterInfo::new(&name, &format!("ws-{}", c % 12))
        });
        for (kind, make) in [
            (
                FluxKind::Kustomization,
                ks as fn(usize, usize, bool) -> Value,
            ),
            (FluxKind::HelmRelease, hr),
        ] {
            let objects = (0..EACH)
                .map(|i| FluxSummary::of(kind, &make(c, i, with)).unwrap())
                .collect();
            index.apply(Event {
                cluster: key.clone(),
                at: jiff::Timestamp::from_second(1_790_000_000).unwrap(),
                change: Change::Replaced(kind, objects),
            });
        }
    }
    let built = started.elapsed();
    let after = rss_kib();
    println!(
        "index of {CLUSTERS} clusters x {} objects ({}): built in {built:.1?}, {} MiB resident over the start",
        2 * EACH,
        if with {
            "with digests"
        } else {
            "without digests"
        },
        (after - before) >> 10
    );
    // How its last run went is held inline in each copy's record, recorded or not.
    println!(
        "each copy's record of its runs: {} bytes ({} MiB over the index)",
        std::mem::size_of::<fluxfleet::fleet::pace::Pace>(),
        (std::mem::size_of::<fluxfleet::fleet::pace::Pace>() * CLUSTERS * 2 * EACH) >> 20
    );
    if !with {
        return;
    }
    // Five minutes after the copies last ran: none is stuck.
    let now: jiff::Timestamp = "2026-12-01T01:05:00Z".parse().unwrap();
    let mut times = Vec::new();
    let mut found = None;
    for _ in 0..20 {
        let t = Instant::now();
        found = Some(fluxfleet::fleet::drift::drift(
            index.entries().map(|(_, c)| c),
            |_| true,
            now,
        ));
        times.push(t.elapsed());
    }
    times.sort();
    let found = found.unwrap();
    println!(
        "drift: median {:.1?}, slowest {:.1?} of 20; {} objects differ ({} copies off the norm), {} agree, {} live; {} slow, {} flapping, {} stuck; {} MiB resident after",
        times[10],
        times[19],
        found.differ.len(),
        found.differ.iter().map(|d| d.differing()).sum::<usize>(),
        found.agree,
        found.live.len(),
        found.reconciles.iter().map(|r| r.slow.len()).sum::<usize>(),
        found
            .reconciles
            .iter()
            .map(|r| r.flapping.len())
            .sum::<usize>(),
        found
            .reconciles
            .iter()
            .map(|r| r.stuck.len())
            .sum::<usize>(),
        (rss_kib() - before) >> 10
    );
}
