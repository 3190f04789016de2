//! Criterion benchmarks of the engine's hot paths: summary extraction (per watch event) and index
//! updates (per summary). DESIGN.md budget: ≥ 200,000 index updates per second.
//!
//! `cargo bench --bench engine`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{ClusterInfo, ClusterKey, FluxKind, FluxSummary, Index};
use serde_json::Value;

fn sample(file: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn extraction(c: &mut Criterion) {
    let mut group = c.benchmark_group("summary");
    group.throughput(Throughput::Elements(1));
    for (name, file, kind) in [
        (
            "kustomization",
            "kustomization-health-check-failed.yaml",
            FluxKind::Kustomization,
        ),
        (
            "helmrelease",
            "helmrelease-upgrade-failed-rolled-back.yaml",
            FluxKind::HelmRelease,
        ),
        (
            "gitrepository",
            "gitrepository-ready.yaml",
            FluxKind::GitRepository,
        ),
    ] {
        let object = sample(file);
        group.bench_function(name, |b| {
            b.iter(|| FluxSummary::of(kind, black_box(&object)))
        });
    }
    group.finish();
}

/// 2,000 clusters × 30 objects, as in the reference load: chains of five Kustomizations, each
/// on the one before (`ks-1` on `ks-0`, …), every fifth failing.
fn fleet() -> (Index, Vec<FluxSummary>) {
    let mut index = Index::new();
    for i in 0..2_000 {
        index.add_cluster(ClusterInfo::new(&format!("c{i}"), &format!("w{}", i % 12)));
    }
    let ready = sample("kustomization-ready.yaml");
    let failed = sample("kustomization-health-check-failed.yaml");
    let summaries = (0..30)
        .map(|j| {
            let mut o = if j % 5 == 0 {
                failed.clone()
            } else {
                ready.clone()
            };
            o["metadata"]["name"] = Value::from(format!("ks-{j}"));
            o["spec"]["dependsOn"] = match j % 5 {
                0 => serde_json::json!([]),
                _ => serde_json::json!([{"name": format!("ks-{}", j - 1)}]),
            };
            FluxSummary::of(FluxKind::Kustomization, &o).unwrap()
        })
        .collect();
    (index, summaries)
}

fn index_updates(c: &mut Criterion) {
    let (mut index, summaries) = fleet();
    let keys: Vec<ClusterKey> = (0..2_000)
        .map(|i| ClusterKey::new(format!("c{i}")))
        .collect();
    for key in &keys {
        for s in &summaries {
            index.apply(Event {
                cluster: key.clone(),
                at: jiff::Timestamp::UNIX_EPOCH,
                change: Change::Applied(s.clone()),
            });
        }
    }
    let mut group = c.benchmark_group("index");
    group.throughput(Throughput::Elements(1));
    let mut n = 0u32;
    group.bench_function("apply-modified", |b| {
        b.iter_batched(
            || {
                n = n.wrapping_add(7919);
                Event {
                    cluster: keys[(n % 2_000) as usize].clone(),
                    at: jiff::Timestamp::UNIX_EPOCH,
                    change: Change::Applied(summaries[(n % 30) as usize].clone()),
                }
            },
            |e| index.apply(e),
            BatchSize::SmallInput,
        )
    });
    // The head of a chain turning ready or failing: the four behind it change root cause.
    let ready = sample("kustomization-ready.yaml");
    let heads: Vec<FluxSummary> = (0..6)
        .map(|j| {
            let mut o = ready.clone();
            o["metadata"]["name"] = Value::from(format!("ks-{}", j * 5));
            o["spec"]["dependsOn"] = serde_json::json!([]);
            FluxSummary::of(FluxKind::Kustomization, &o).unwrap()
        })
        .collect();
    let mut flips = 0u64;
    group.bench_function("apply-root-flipping", |b| {
        b.iter_batched(
            || {
                n = n.wrapping_add(7919);
                flips += 1;
                let head = (n % 6) as usize;
                let summary = if flips.is_multiple_of(2) {
                    heads[head].clone()
                } else {
                    summaries[head * 5].clone()
                };
                Event {
                    cluster: keys[(n % 2_000) as usize].clone(),
                    at: jiff::Timestamp::UNIX_EPOCH,
                    change: Change::Applied(summary),
                }
            },
            |e| index.apply(e),
            BatchSize::SmallInput,
        )
    });
    group.throughput(Throughput::Elements(30));
    group.bench_function("relist-30", |b| {
        b.iter_batched(
            || {
                n = n.wrapping_add(7919);
                Event {
                    cluster: keys[(n % 2_000) as usize].clone(),
                    at: jiff::Timestamp::UNIX_EPOCH,
                    change: Change::Replaced(FluxKind::Kustomization, summaries.clone()),
                }
            },
            |e| index.apply(e),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, extraction, index_updates);
criterion_main!(benches);
