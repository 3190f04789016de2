//! The alert loop's CPU, network aside, at 60,000 objects (2,000 clusters × 30, 12 workspaces;
//! `benches/common/sixty.rs`): `1000_changes` applies a thousand changes (a Kustomization failing
//! on 1,000 clusters, then recovering) and takes one round — the root causes worked out again
//! and turned into alerts, what fires and resolves decided; `evaluate` is that round alone (the
//! root causes worked out again, no change applied); `unchanged` is a round when nothing changed
//! since the last one (every round between changes).
//!
//! `cargo bench --bench alert`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use fluxfleet::export::Filter;
use fluxfleet::export::alert::Rounds;
use fluxfleet::export::alert::state::{AlertTiming, Labels};
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{ClusterKey, FluxSummary};
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

#[path = "common/sixty.rs"]
mod sixty;

use sixty::{CLUSTERS, WORKSPACES, fleet, sample};

/// `app-01` on a thousand clusters, failing its health check or ready again.
fn batch(failing: bool) -> Vec<Event> {
    let file = match failing {
        true => "kustomization-health-check-failed.yaml",
        false => "kustomization-ready.yaml",
    };
    let mut object = sample(file);
    object["metadata"]["name"] = Value::from("app-01");
    let summary = FluxSummary::from_object(&object).unwrap();
    (0..1_000)
        .map(|i| {
            let c = (i * 2) % CLUSTERS;
            Event {
                cluster: ClusterKey::new(format!("ws{:02}-cluster-{c:04}", c % WORKSPACES)),
                at: "2026-11-21T10:00:00Z".parse().unwrap(),
                change: Change::Applied(summary.clone()),
            }
        })
        .collect()
}

fn rounds(c: &mut Criterion) {
    let mut index = fleet();
    let rules = AlertTiming {
        pending: Duration::ZERO,
        hold: Duration::from_secs(300),
        every: Duration::from_secs(30),
    };
    let window = SignedDuration::from_mins(10);
    let mut rounds = Rounds::new(Filter::default(), window, Labels::new(), rules);
    let mut now: Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
    let (fail, recover) = (batch(true), batch(false));
    let mut group = c.benchmark_group("alert_60k");
    let mut failing = false;
    group.bench_function("1000_changes", |b| {
        b.iter_batched(
            || {
                failing = !failing;
                if failing {
                    fail.clone()
                } else {
                    recover.clone()
                }
            },
            |events| {
                for event in events {
                    index.apply(event);
                }
                rounds.changed();
                now += SignedDuration::from_secs(30);
                rounds.round(&index, now)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("evaluate", |b| {
        b.iter(|| {
            rounds.changed();
            now += SignedDuration::from_secs(30);
            rounds.round(&index, now)
        })
    });
    group.bench_function("unchanged", |b| {
        b.iter(|| {
            now += SignedDuration::from_secs(30);
            rounds.round(&index, now)
        })
    });
    group.finish();
}

criterion_group!(benches, rounds);
criterion_main!(benches);
