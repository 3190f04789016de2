//! Fleet trace and tree, measured: the `apps` Deployment of the story fleet traced on every
//! cluster, as `fluxfleet trace deploy apps -n apps` traces it, and the flux-system
//! Kustomization's tree grown on every cluster, as `fluxfleet tree ks flux-system` grows it —
//! once from a fleet watched whole, once from a summarized one (each cluster reached over a
//! connection of its own). Wall time per read and the GETs the clusters answered (the simulator's `/sim/stats`, discovery and
//! watches aside); the simulator runs in-process on the same cores.
//!
//! `cargo bench --bench trace [-- CLUSTERS [ROUNDS]]` (default 1000 clusters, 3 rounds);
//! `TRACE_SCENARIO=uniform` for a fleet without the story's flaky and unreachable clusters,
//! `TRACE_WATCH=all` or `summary` for one of the two.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/story.rs"]
mod story;

use std::time::{Duration, Instant};

use fluxfleet::config::{Config, WatchMode};
use fluxfleet::export::Filter;
use fluxfleet::fleet::trace::ClusterUnread;
use fluxfleet::fleet::trace::{Asked, resource::Resource};
use fluxfleet::fleet::{FluxKind, ObjectKey};
use fluxfleet::session::Session;
use fluxfleet::session::evidence::Gather;
use fluxfleet::session::traced::{gather, grow, in_scope};
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

/// Why clusters were not read, each reason once.
fn reasons(unread: &[ClusterUnread]) -> String {
    let mut why: Vec<&str> = unread.iter().map(|u| u.error.word()).collect();
    why.sort();
    why.dedup();
    why.join(", ")
}

/// `read` `rounds` times: each round's time, what it said and the GETs the clusters answered;
/// then the median.
async fn rounds<F, Fut>(
    what: &str,
    rounds: usize,
    sim: &fluxfleet_sim::Handle,
    clusters: usize,
    read: F,
) where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let mut times = Vec::new();
    for round in 0..rounds {
        let before = gets(sim);
        let started = Instant::now();
        let said = read().await;
        let took = started.elapsed();
        let requests = gets(sim) - before;
        times.push(took);
        println!(
            "{what} round {round}: {:.0} ms, {said}, {requests} GETs ({:.1} per cluster)",
            took.as_secs_f64() * 1000.0,
            requests as f64 / clusters.max(1) as f64,
        );
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{what} of {clusters} clusters: median {:.0} ms, min {:.0} ms, max {:.0} ms",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1])
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with('-'));
    let clusters: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let rounds_of: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
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
    let root = ObjectKey::new(FluxKind::Kustomization, "flux-system", "flux-system");
    let watches = match std::env::var("TRACE_WATCH").as_deref() {
        Ok("all") => vec![WatchMode::All],
        Ok("summary") => vec![WatchMode::Summary],
        _ => vec![WatchMode::All, WatchMode::Summary],
    };
    for watch in watches {
        let mut engine = Config::defaults().engine;
        engine.watch = watch;
        let mut live = Session::kube(&inventory, &engine);
        live.settle(Duration::from_secs(180)).await;
        let scope = in_scope(&live.index, &Filter::default());
        let reader = live.reader();
        let what = format!("{watch:?} trace");
        rounds(&what, rounds_of, &sim, scope.len(), || async {
            let trace = gather(&reader, &scope, &asked, Gather::default()).await;
            let found: usize = trace.shapes.iter().map(|g| g.clusters.len()).sum();
            let why = reasons(&trace.unread);
            format!(
                "{found} of {} clusters traced, {} not read ({why}), {} shapes",
                trace.clusters,
                trace.unread.len(),
                trace.shapes.len(),
            )
        })
        .await;
        let what = format!("{watch:?} tree");
        rounds(&what, rounds_of, &sim, scope.len(), || async {
            let tree = grow(&reader, &scope, &root, Gather::default()).await;
            let why = reasons(&tree.unread);
            format!(
                "{} of {} clusters grown, {} not read ({why}), {} nodes, differs: {}",
                tree.found.len(),
                tree.clusters,
                tree.unread.len(),
                tree.nodes.len(),
                tree.differs(),
            )
        })
        .await;
        live.shutdown().await;
    }
    sim.shutdown().await;
}
