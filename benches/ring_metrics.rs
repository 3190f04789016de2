//! Ring metrics' CPU on a day of a 2,000-cluster fleet's history: 30 Kustomizations per cluster
//! in 12 rings, four releases rolled out ring by ring (240,000 revision changes), and churn at
//! one health change a second for the day (86,400, each failure followed by its recovery):
//! `held` is the history read, then worked out (what the TUI's matrix does); `streamed` works
//! it out as it streams in, each change parsed from its JSON as the bus stores it (what the
//! collectors and `rollout --metrics` do). `held` prints once how many changes the history holds
//! and their size as the bus stores them.
//!
//! `cargo bench --bench ring_metrics`; peak memory of each alone:
//! `/usr/bin/time -v target/release/deps/ring_metrics-* --bench --profile-time 2 held` (or
//! `streamed`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{Criterion, criterion_group, criterion_main};
use fluxfleet::fleet::history::RecordedChange;
use fluxfleet::fleet::rollouts::metrics::{Deliveries, deliveries};
use fluxfleet::fleet::{FluxKind, ObjectKey};
use jiff::{SignedDuration, Timestamp};

const CLUSTERS: usize = 2_000;
const THINGS: usize = 30;
const RINGS: usize = 12;

/// The day's changes in the order the bus holds them, made one at a time.
fn history() -> impl Iterator<Item = RecordedChange> {
    let start: Timestamp = "2026-11-21T00:00:00Z".parse().unwrap();
    let at = move |s: i64| start + SignedDuration::from_secs(s);
    let key = |t: usize| {
        ObjectKey::new(
            FluxKind::Kustomization,
            "flux-system",
            &format!("app-{t:02}"),
        )
    };
    let cluster = |c: usize| format!("ring{:02}-cluster-{c:04}", c % RINGS);
    let health = move |s: i64, to: &str| {
        let (c, t) = ((s as usize * 7919) % CLUSTERS, (s as usize * 31) % THINGS);
        let mut change =
            RecordedChange::of_object(at(s), &cluster(c), "ws".into(), "health", &key(t));
        change.to = Some(to.into());
        change
    };
    (0..86_400i64 + 30).flat_map(move |s| {
        // Four releases, six hours apart, rolled out ring by ring, ten minutes apart, a second
        // between clusters of a ring: the clusters that apply one this second.
        let (release, into) = (s / (6 * 3600), s % (6 * 3600));
        let (ring, nth) = ((into / 600) as usize, (into % 600) as usize);
        let c = nth * RINGS + ring;
        let applying = (release < 4 && ring < RINGS && c < CLUSTERS).then(|| {
            let revision = format!("main@sha1:{release:040}");
            (0..THINGS).map(move |t| {
                let mut change =
                    RecordedChange::of_object(at(s), &cluster(c), "ws".into(), "revision", &key(t));
                change.to = Some(revision.clone());
                change
            })
        });
        // Churn: a failure every other second, somewhere, recovered 30 s later.
        let recovered = (s >= 30 && s % 2 == 0).then(|| health(s - 30, "ready"));
        let failed = (s < 86_400 && s % 2 == 0).then(|| health(s, "failed"));
        applying
            .into_iter()
            .flatten()
            .chain(recovered)
            .chain(failed)
    })
}

fn metrics(c: &mut Criterion) {
    let ring_of = |cluster: &str| cluster.get(..6).map(str::to_string);
    let copies = |_: &str, _: &ObjectKey| Some(CLUSTERS / RINGS);
    let window = SignedDuration::from_mins(10);
    let mut group = c.benchmark_group("ring_metrics");
    group.sample_size(10);
    // The history read, then worked out (the TUI's matrix).
    group.bench_function("held", |b| {
        let changes: Vec<RecordedChange> = history().collect();
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            let bytes: usize = changes
                .iter()
                .map(|c| serde_json::to_vec(c).unwrap().len())
                .sum();
            eprintln!(
                "{} changes, {} MiB as the bus stores them",
                changes.len(),
                bytes >> 20
            );
        });
        b.iter(|| deliveries(&changes, &ring_of, &copies, window))
    });
    // Worked out as the history streams in, each change parsed from the bus's JSON (the
    // collectors, `rollout --metrics`).
    group.bench_function("streamed", |b| {
        b.iter(|| {
            let mut delivering = Deliveries::new(ring_of, window);
            for change in history() {
                let json = serde_json::to_vec(&change).unwrap();
                delivering.add(&serde_json::from_slice(&json).unwrap());
            }
            delivering.finish(&copies)
        })
    });
    group.finish();
}

criterion_group!(benches, metrics);
criterion_main!(benches);
