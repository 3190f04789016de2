//! A whole fleet, as fluxfleet sees it: the engine (or the summary tier) on every cluster of a
//! running `fluxfleet sim`, from start to a complete view, then clusters opened one by one until
//! each shows its objects. Reports times, this process's peak memory and the sockets it holds.
//!
//! ```sh
//! cargo run --release -- sim --clusters 20000 --workspaces 40 --objects 20 --out /tmp/f20k &
//! cargo bench --bench fleet_scale -- --dir /tmp/f20k [--watch-mode all|summary|auto] [--open 10]
//! ```
//!
//! With `--nats URL` instead of `--dir`, the fleet is read from collectors, as `fluxfleet --nats`
//! reads it: a summarizing reader (`--watch-mode summary`) opening clusters its collectors
//! summarize measures warming — the reader asks the cluster's collector to watch it, and the
//! objects reach the reader through the bus (`benches/bus_reader.sh` with `OPEN=10` runs this).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a measuring tool, not product code

use std::time::{Duration, Instant};

/// The allocator of the `fluxfleet` binary (see `src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use fluxfleet::config::{Config, WatchMode};
use fluxfleet::fleet::{Counted, Phase};
use fluxfleet::inventory;
use fluxfleet::session::Session;
use fluxfleet::session::open::open;
use fluxfleet::session::resolve::Sources;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// `VmHWM` (peak) and `VmRSS` of this process, in MiB.
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Sockets this process holds.
fn sockets() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| {
                    std::fs::read_link(e.path())
                        .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
                })
                .count()
        })
        .unwrap_or(0)
}

fn main() {
    let (dir, nats) = (arg("--dir"), arg("--nats"));
    if dir.is_none() == nats.is_none() {
        eprintln!(
            "usage: cargo bench --bench fleet_scale -- --dir SIM_OUT | --nats URL [--watch-mode MODE] [--open N]"
        );
        return;
    }
    let watch = arg("--watch-mode")
        .map(|m| WatchMode::parse(&m).expect("all, summary or auto"))
        .unwrap_or(WatchMode::Auto);
    let opens: usize = arg("--open").map_or(10, |n| n.parse().unwrap());
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let started = Instant::now();
        let (mut live, clusters) = match (dir, nats) {
            (Some(dir), _) => {
                let mut config = Config::defaults();
                config.engine.watch = watch;
                let request = inventory::Lookup {
                    dirs: vec![std::path::Path::new(&dir).join("kubeconfigs")],
                    ..inventory::Lookup::default()
                };
                let inventory = inventory::load(&request, &config);
                (Session::kube(&inventory, &config.engine), inventory.clusters.len())
            }
            (None, url) => {
                // As the TUI opens the bus: the clusters' counts suffice until one is opened.
                let sources = Sources {
                    nats: Some(fluxfleet::bus::Options {
                        url: url.unwrap(),
                        bucket: fluxfleet::bus::DEFAULT_BUCKET.into(),
                        ..Default::default()
                    }),
                    watch: Some(watch),
                    counts_suffice: true,
                    ..Sources::default()
                };
                let opened = open(&sources).await.unwrap();
                let clusters = opened.fleet.clusters().len();
                let settings = opened.config.engine.clone();
                (Session::start(opened.fleet.sources(&settings, true)), clusters)
            }
        };
        println!(
            "{clusters} clusters read in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        // Batch by batch, so that the time is when the last cluster came up (not the end of a
        // polling window), with the times the fleet was half, 90% and 99% seen on the way.
        let deadline = Instant::now() + Duration::from_secs(600);
        let mut marks = Vec::new();
        let seen = |live: &Session| {
            let phases = live.index.phases();
            phases.up() + phases.failed()
        };
        let total = clusters as u32;
        for share in [50u32, 90, 99] {
            while seen(&live) * 100 < total * share && Instant::now() < deadline {
                if !live.apply_batch().await {
                    break;
                }
            }
            marks.push(format!("{share}% {:.2} s", started.elapsed().as_secs_f64()));
        }
        let complete = |live: &Session| {
            live.index
                .entries()
                .all(|(_, c)| c.connection.phase.is_up() || c.connection.phase.is_failure())
        };
        while !complete(&live) && Instant::now() < deadline {
            if !live.apply_batch().await {
                break;
            }
        }
        let settled = live.index.settled();
        println!("seen: {}", marks.join(", "));
        let (peak, now) = memory();
        let phases: Vec<String> = live
            .index
            .phases()
            .iter()
            .map(|(p, n)| format!("{p} {n}"))
            .collect();
        println!(
            "complete view in {:.2} s (settled: {settled}; {}), {} objects counted; peak {peak:.0} MiB, now {now:.0} MiB, {} sockets",
            started.elapsed().as_secs_f64(),
            phases.join(", "),
            live.index.object_count(),
            sockets(),
        );

        // Drill-downs: clusters spread over the fleet, one at a time.
        let reader = live.reader();
        let step = (clusters / opens.max(1)).max(1);
        let picks: Vec<_> = live
            .index
            .entries()
            .step_by(step)
            .take(opens)
            .map(|(_, c)| c.info.clone())
            .collect();
        let mut times = Vec::new();
        let (mut objects, mut summarized) = (0, 0);
        for info in picks {
            // Every object its counts (its report's, or its collector's) say it has.
            let before = live.index.cluster_named(&info.name);
            let expected = before.map_or(0, |c| c.health.total() as usize);
            summarized += usize::from(before.is_some_and(|c| c.counted != Counted::Objects));
            let opened = Instant::now();
            reader.open(&info);
            let shown = |live: &Session| {
                live.index.cluster_named(&info.name).is_some_and(|c| {
                    c.connection.phase == Phase::Live
                        && c.counted == Counted::Objects
                        && c.objects.len() >= expected
                })
            };
            while !shown(&live) && opened.elapsed() < Duration::from_secs(30) {
                live.pump(Duration::from_millis(5)).await;
            }
            times.push(opened.elapsed().as_secs_f64() * 1000.0);
            objects += live
                .index
                .cluster_named(&info.name)
                .map_or(0, |c| c.objects.len());
        }
        times.sort_by(f64::total_cmp);
        if !times.is_empty() {
            println!(
                "opened {} clusters ({summarized} summarized): their {objects} objects shown after {:.0} ms median, {:.0} ms at most; {} sockets now",
                times.len(),
                times[times.len() / 2],
                times[times.len() - 1],
                sockets(),
            );
        }
        let (peak, now) = memory();
        println!("peak {peak:.0} MiB, now {now:.0} MiB");
        live.shutdown().await;
    });
}
