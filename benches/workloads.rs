//! What broke inside, measured: the evidence of the story's bad revision (`infra-controllers`
//! failing on ~50 clusters) read from every cluster of its group and folded, as `w` on triage's
//! first group reads it. Wall time per gathering (DESIGN.md budget: ≤ 2 s for 50 clusters) and
//! requests per cluster; the simulator runs in-process on the same cores.
//!
//! `cargo bench --bench workloads [-- CLUSTERS [ROUNDS]]` (default 850 clusters, 5 rounds).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/story.rs"]
mod story;

use std::time::{Duration, Instant};

use fluxfleet::config::Config;
use fluxfleet::export::Filter;
use fluxfleet::export::workloads::targets;
use fluxfleet::fleet::FluxKind;
use fluxfleet::session::Session;
use fluxfleet::session::evidence::{Gather, gather};
use fluxfleet_sim::Scenario;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with('-'));
    let clusters: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(850);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let (_dir, sim, inventory) = story::fleet(clusters, Scenario::Story).await;
    let mut live = Session::kube(&inventory, &Config::defaults().engine);
    live.settle(Duration::from_secs(120)).await;
    let filter = Filter {
        kind: Some(FluxKind::Kustomization),
        name: Some("infra-controllers".into()),
        ..Filter::default()
    };
    let (key, group) = targets(&live.index, &filter, false).remove(0);
    let reader = live.reader();
    println!(
        "{clusters} clusters; the group: {} {}/{} not ready on {} clusters",
        key.kind,
        key.namespace,
        key.name,
        group.len()
    );
    let mut times = Vec::new();
    for round in 0..rounds {
        let started = Instant::now();
        let folded = gather(&reader, &group, &key, Gather::default()).await;
        let took = started.elapsed();
        times.push(took);
        println!(
            "round {round}: {:.0} ms, {} of {} clusters read, {} requests ({:.1} per cluster), {} lines",
            took.as_secs_f64() * 1000.0,
            folded.read,
            folded.clusters,
            folded.requests,
            folded.requests as f64 / folded.read.max(1) as f64,
            folded.lines.len()
        );
    }
    times.sort();
    println!(
        "evidence of {} clusters: median {:.0} ms, min {:.0} ms, max {:.0} ms",
        group.len(),
        times[times.len() / 2].as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0,
        times[times.len() - 1].as_secs_f64() * 1000.0
    );
    live.shutdown().await;
    sim.shutdown().await;
}
