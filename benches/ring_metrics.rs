//! Ring metrics' CPU on a day of a 2,000-cluster fleet's history: 30 Kustomizations per cluster
//! in 12 rings, four releases rolled out ring by ring (240,000 revision changes), and churn at
//! one health change a second for the day (86,400, each failure followed by its recovery):
//! `deliveries` is `rollout --metrics` over it, the history read aside. It prints once how many
//! changes the history holds and their size as the bus stores them (JSON), which is what the
//! reader holds while it works them out.
//!
//! `cargo bench --bench ring_metrics`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{Criterion, criterion_group, criterion_main};
use fluxfleet::fleet::history::Change;
use fluxfleet::fleet::rollouts::metrics::deliveries;
use fluxfleet::fleet::{FluxKind, ObjectKey};
use jiff::{SignedDuration, Timestamp};

const CLUSTERS: usize = 2_000;
const THINGS: usize = 30;
const RINGS: usize = 12;

fn history() -> Vec<Change> {
    let start: Timestamp = "2026-11-21T00:00:00Z".parse().unwrap();
    let at = |s: i64| start + SignedDuration::from_secs(s);
    let key = |t: usize| {
        ObjectKey::new(
            FluxKind::Kustomization,
            "flux-system",
            &format!("app-{t:02}"),
        )
    };
    let cluster = |c: usize| format!("ring{:02}-cluster-{c:04}", c % RINGS);
    let mut changes = Vec::new();
    for release in 0..4i64 {
        let revision = format!("main@sha1:{release:040}");
        for c in 0..CLUSTERS {
            // Ring by ring, ten minutes apart, a second between clusters of a ring.
            let ring = (c % RINGS) as i64;
            let when = release * 6 * 3600 + ring * 600 + (c / RINGS) as i64;
            for t in 0..THINGS {
                let mut change =
                    Change::of_object(at(when), &cluster(c), "ws".into(), "revision", &key(t));
                change.to = Some(revision.clone());
                changes.push(change);
            }
        }
    }
    // Churn: a failure a second, somewhere, recovered 30 s later.
    for s in (0..86_400i64).step_by(2) {
        let c = (s as usize * 7919) % CLUSTERS;
        let t = (s as usize * 31) % THINGS;
        for (offset, to) in [(0, "failed"), (30, "ready")] {
            let mut change =
                Change::of_object(at(s + offset), &cluster(c), "ws".into(), "health", &key(t));
            change.to = Some(to.into());
            changes.push(change);
        }
    }
    changes.sort_by_key(|c| c.at);
    changes
}

fn metrics(c: &mut Criterion) {
    let changes = history();
    let bytes: usize = changes
        .iter()
        .map(|c| serde_json::to_vec(c).unwrap().len())
        .sum();
    eprintln!(
        "{} changes, {} MiB as the bus stores them",
        changes.len(),
        bytes >> 20
    );
    let ring_of = |cluster: &str| cluster.get(..6).map(str::to_string);
    let copies = |_: &str, _: &ObjectKey| Some(CLUSTERS / RINGS);
    let window = SignedDuration::from_mins(10);
    let mut group = c.benchmark_group("ring_metrics");
    group.sample_size(10);
    group.bench_function("deliveries", |b| {
        b.iter(|| deliveries(&changes, &ring_of, &copies, window))
    });
    group.finish();
}

criterion_group!(benches, metrics);
criterion_main!(benches);
