//! Fleet trace, measured: the `apps` Deployment of the story fleet traced on every cluster, as
//! `fluxfleet trace deploy apps -n apps` traces it — once from a fleet watched whole, once from
//! a summarized one (each cluster reached over a connection of its own). Wall time per
//! trace and the GETs the clusters answered (the simulator's `/sim/stats`, discovery and
//! watches aside); the simulator runs in-process on the same cores.
//!
//! `cargo bench --bench trace [-- CLUSTERS [ROUNDS]]` (default 1000 clusters, 3 rounds);
//! `TRACE_SCENARIO=uniform` for a fleet without the story's flaky and unreachable clusters,
//! `TRACE_WATCH=all` or `summary` for one of the two.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/story.rs"]
mod story;

use std::time::{Duration, Instant};

use fluxfleet::config::{Config, Watch};
use fluxfleet::export::Filter;
use fluxfleet::fleet::trace::{Asked, resource::Resource};
use fluxfleet::session::Session;
use fluxfleet::session::evidence::Gather;
use fluxfleet::session::traced::{gather, in_scope};
use fluxfleet_sim::Scenario;

/// GETs every cluster of the simulator has answered so far.
fn gets(sim: &fluxfleet_sim::Handle) -> u64 {
    let stats = sim.stats();
    stats["clusters"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c["get"].as_u64().unwrap_or(0))
        .sum()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with('-'));
    let clusters: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let scenario = match std::env::var("TRACE_SCENARIO").as_deref() {
        Ok("uniform") => Scenario::Uniform,
        _ => Scenario::Story,
    };
    let (_dir, sim, inventory) = story::fleet(clusters, scenario).await;
    let asked = Asked {
        kind: "deploy".into(),
        resource: Resource::named("deploy").unwrap(),
        namespace: "apps".into(),
        name: "apps".into(),
    };
    let watches = match std::env::var("TRACE_WATCH").as_deref() {
        Ok("all") => vec![Watch::All],
        Ok("summary") => vec![Watch::Summary],
        _ => vec![Watch::All, Watch::Summary],
    };
    for watch in watches {
        let mut engine = Config::defaults().engine;
        engine.watch = watch;
        let mut live = Session::kube(&inventory, &engine);
        live.settle(Duration::from_secs(180)).await;
        let scope = in_scope(&live.index, &Filter::default());
        let reader = live.reader();
        let mut times = Vec::new();
        for round in 0..rounds {
            let before = gets(&sim);
            let started = Instant::now();
            let trace = gather(&reader, &scope, &asked, Gather::default()).await;
            let took = started.elapsed();
            let requests = gets(&sim) - before;
            times.push(took);
            let found: usize = trace.shapes.iter().map(|g| g.clusters.len()).sum();
            let mut why: Vec<String> = trace
                .unread
                .iter()
                .map(|u| u.error.word().to_string())
                .collect();
            why.sort();
            why.dedup();
            println!(
                "{watch:?} round {round}: {:.0} ms, {found} of {} clusters traced, {} not read \
                 ({}), {} shapes, {requests} GETs ({:.1} per cluster)",
                took.as_secs_f64() * 1000.0,
                trace.clusters,
                trace.unread.len(),
                why.join(", "),
                trace.shapes.len(),
                requests as f64 / trace.clusters.max(1) as f64,
            );
        }
        times.sort();
        println!(
            "{watch:?}: a trace of {} clusters: median {:.0} ms, min {:.0} ms, max {:.0} ms",
            scope.len(),
            times[times.len() / 2].as_secs_f64() * 1000.0,
            times[0].as_secs_f64() * 1000.0,
            times[times.len() - 1].as_secs_f64() * 1000.0
        );
        live.shutdown().await;
    }
    sim.shutdown().await;
}
