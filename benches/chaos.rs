//! Chaos at full scale, as a measurement: 2,000 clusters × 30 objects with every fault kind the
//! simulator has, churn and rollouts for several minutes; then the faults and the churn stop and
//! the index must equal the simulator's truth exactly. Prints the report and the process's peak
//! resident memory (engine and simulator share it).
//!
//! `cargo bench --bench chaos -- [--clusters 2000] [--objects 30] [--active 300] [--churn 200]
//! [--faults SPEC] [--faults-stay] [--observe SECONDS]` — with `--faults-stay` the faults go on
//! while the index is compared (only the churn stops); `--observe` watches it that long after it
//! agreed, and the report says the most objects seen on clusters not shown live.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/chaos/harness.rs"]
mod chaos;
#[path = "../tests/common/truth.rs"]
mod truth;

use std::time::{Duration, Instant};

use chaos::{EVERY_FAULT, Plan};
use fluxfleet::config::Config;
use fluxfleet::fleet::FluxKind;
use fluxfleet_sim::faults::Spec;

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a number, not {v:?}"))
        })
}

/// Peak resident memory of this process, in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

fn main() {
    // `cargo bench` passes --bench to every bench target; anything else here is ours.
    let args: Vec<String> = std::env::args().collect();
    let faults = args
        .iter()
        .position(|a| a == "--faults")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| EVERY_FAULT.to_string());
    let plan = Plan {
        clusters: arg("--clusters", 2000.0) as usize,
        objects: arg("--objects", 30.0) as usize,
        faults: Spec::parse(&faults).unwrap_or_else(|e| panic!("--faults {faults:?}: {e}")),
        churn: arg("--churn", 200.0),
        rollout_interval: Duration::from_secs(60),
        rollout_step: Duration::from_secs(3),
        active: Duration::from_secs_f64(arg("--active", 300.0)),
        settle_within: Duration::from_secs(180),
        seed: 1,
        faults_stay: flag("--faults-stay"),
        observe: Duration::from_secs_f64(arg("--observe", 0.0)),
    };
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let mut engine = Config::defaults().engine;
    engine.kinds = FluxKind::ALL.to_vec();
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let started = Instant::now();
    println!(
        "chaos: {} clusters × {} objects, faults {faults}, churn {}/s, rollouts every {:?}, active {:?}",
        plan.clusters, plan.objects, plan.churn, plan.rollout_interval, plan.active
    );
    let report = runtime
        .block_on(chaos::run(&plan, dir.path(), &engine))
        .unwrap();
    println!(
        "compared {} clusters, {} objects after {} writes: lost {}, duplicated {}, extra {}, wrong health {}",
        report.clusters,
        report.objects,
        report.changes,
        report.lost,
        report.duplicated,
        report.extra,
        report.wrong_health
    );
    println!(
        "at the end: {} of {} objects on clusters not shown live ({:.2} %), {} clusters shown with watch restarts",
        report.not_live,
        report.objects,
        100.0 * report.not_live as f64 / report.objects.max(1) as f64,
        report.restarted
    );
    match report.agreed_after {
        Some(t) => println!("the index agreed with the truth {t:.1?} after the stop"),
        None => println!("the index never agreed: {:#?}", report.examples),
    }
    println!(
        "wall {:.0?}, peak resident memory {:.0} MiB",
        started.elapsed(),
        peak_rss_mib()
    );
    if !report.exact() {
        std::process::exit(1);
    }
}
