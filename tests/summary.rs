//! The summary tier (`engine.watch = "summary"`) against the simulated fleet over real HTTPS:
//! every cluster counted from its FluxReport (or, without the Flux Operator, from a list of its
//! objects) with no connection held between looks; opening a cluster watches its objects, and
//! the least recently opened one lets them go.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::truth::seen;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use fluxfleet::config::{self, Config, WatchMode};
use fluxfleet::fleet::{ClusterEntry, Counted, FluxKind, Health, HealthCounts, ObjectKey, Phase};
use fluxfleet::session::Session;
use fluxfleet_sim::TruthCluster;

use common::{Sim, fleet_of, until};

fn settings() -> config::EngineSection {
    let mut engine = common::engine_settings();
    engine.kinds = Config::defaults().engine.kinds;
    engine.watch = WatchMode::Summary;
    engine.report_interval = Duration::from_millis(300);
    engine.warm_clusters = 1;
    engine
}

/// What the cluster counts as far as a report can tell: failing, suspended, all.
fn coarse(h: &HealthCounts) -> (u32, u32, u32) {
    (h.failing(), h.get(Health::Suspended), h.total())
}

fn true_counts(cluster: &TruthCluster, kinds: &[FluxKind]) -> HealthCounts {
    let mut counts = HealthCounts::default();
    for o in &cluster.objects {
        if FluxKind::from_kind(&o.kind).is_some_and(|k| kinds.contains(&k)) {
            counts.add(seen(o.health));
        }
    }
    counts
}

/// Where `entry` differs from the truth for a summarized cluster, in words.
fn summarized_wrongly(
    entry: &ClusterEntry,
    truth: &TruthCluster,
    kinds: &[FluxKind],
) -> Option<String> {
    let want = true_counts(truth, kinds);
    let name = &truth.name;
    if entry.connection.phase != Phase::Summary {
        return Some(format!("{name}: {:?}", entry.connection));
    }
    if truth.operator {
        if entry.counted != Counted::Report || !entry.held {
            return Some(format!("{name}: counted by {:?}", entry.counted));
        }
        if let Some(wrong) = held_wrongly(entry, truth, kinds) {
            return Some(wrong);
        }
        // A report does not tell progressing from ready: compare what it does tell.
        (coarse(&entry.health) != coarse(&want))
            .then(|| format!("{name}: {:?} against {:?}", entry.health, want))
    } else {
        (entry.counted != Counted::Objects || entry.health != want)
            .then(|| format!("{name} (listed): {:?} against {want:?}", entry.health))
    }
}

/// Where what a summarized cluster holds is not its failures and what they depend on.
fn held_wrongly(entry: &ClusterEntry, truth: &TruthCluster, kinds: &[FluxKind]) -> Option<String> {
    let key = |kind: &str, namespace: &str, name: &str| format!("{kind}/{namespace}/{name}");
    let want: BTreeSet<String> = truth
        .objects
        .iter()
        .filter(|o| o.health.is_failing())
        .filter(|o| FluxKind::from_kind(&o.kind).is_some_and(|k| kinds.contains(&k)))
        .map(|o| key(&o.kind, &o.namespace, &o.name))
        .collect();
    let objects = entry.objects.values();
    let held: BTreeSet<String> = objects
        .filter(|o| o.health.is_failing())
        .map(|o| key(o.key.kind.as_str(), &o.key.namespace, &o.key.name))
        .collect();
    if held != want {
        return Some(format!("{}: holds {held:?}, fails {want:?}", truth.name));
    }
    // Nothing more: every ready object held is what a not-ready one depends on.
    let needed: BTreeSet<&ObjectKey> = entry
        .objects
        .values()
        .filter(|o| o.health.is_not_ready())
        .flat_map(|o| entry.graph.upstream(&o.key))
        .collect();
    entry
        .objects
        .values()
        .find(|o| !o.health.is_not_ready() && !needed.contains(&o.key))
        .map(|o| format!("{}: holds {:?}, which nothing needs", truth.name, o.key))
}

/// Waits until every cluster is counted as the truth says ([`summarized_wrongly`]).
async fn until_summarized(live: &mut Session, truth: &[TruthCluster], kinds: &[FluxKind]) {
    until(live, Duration::from_secs(20), |live| {
        truth.iter().find_map(|t| {
            let entry = live.index.cluster_named(&t.name).unwrap();
            summarized_wrongly(entry, t, kinds)
        })
    })
    .await;
}

fn open_sockets(sim: &Sim, cluster: &str) -> u64 {
    sim.handle.stats()["clusters"][cluster]["connections"]
        .as_u64()
        .unwrap()
}

/// Waits until the simulator holds no connection from any of `clusters`.
async fn until_closed<'a>(sim: &Sim, clusters: impl Fn() -> Vec<&'a str>, why: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while clusters().into_iter().any(|c| open_sockets(sim, c) > 0) {
        assert!(Instant::now() < deadline, "{why}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A FluxReport counts what runs and what fails: it cannot tell ready from progressing, nor
/// from one held back by a dependency (which the operator does not count failing). The summary
/// tier says "running" for what the report counts running, and a full watch of the same fleet
/// is what tells ready: no summarized cluster counts an object ready that the watch does not
/// see ready, and what runs but is not ready is counted, not hidden in "ready".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_tier_never_counts_ready_what_a_full_watch_does_not_see_ready() {
    let sim = common::start_with(|c| {
        c.clusters = 150;
        c.operator = 1.0;
        c.report_every = Duration::from_millis(200);
    })
    .await;
    let kinds = Config::defaults().engine.kinds;
    let truth: Vec<TruthCluster> = common::workloads(&sim);
    let inventory = fleet_of(&sim);
    let mut summarized = Session::kube(&inventory, &settings());
    assert!(summarized.settle(Duration::from_secs(20)).await);
    until_summarized(&mut summarized, &truth, &kinds).await;
    let mut full_settings = settings();
    full_settings.watch = WatchMode::All;
    let mut watched = Session::kube(&inventory, &full_settings);
    assert!(watched.settle(Duration::from_secs(20)).await);

    // Clusters where counting "running" as ready would claim more ready than the watch sees.
    let mut overclaimed = Vec::new();
    for t in &truth {
        let (summary, watch) = (
            summarized.index.cluster_named(&t.name).unwrap(),
            watched.index.cluster_named(&t.name).unwrap(),
        );
        // What neither reads whole (a cluster the story makes unreachable) is compared by neither.
        if watch.connection.phase != Phase::Live || summary.counted != Counted::Report {
            continue;
        }
        let (by_report, seen) = (&summary.health, &watch.health);
        assert!(
            by_report.get(Health::Ready) <= seen.get(Health::Ready),
            "{}: the report's count says {} ready, the watch sees {}",
            t.name,
            by_report.get(Health::Ready),
            seen.get(Health::Ready)
        );
        assert_eq!(by_report.total(), seen.total(), "{}", t.name);
        if by_report.get(Health::Ready) + by_report.get(Health::Running) > seen.get(Health::Ready) {
            overclaimed.push(&t.name);
        }
    }
    assert!(
        !overclaimed.is_empty(),
        "the simulated fleet runs objects that are not ready (progressing, waiting on a \
         dependency) on clusters a report counts"
    );
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summarized_clusters_count_true_hold_no_socket_and_open_on_demand() {
    let sim = common::start_with(|c| {
        c.clusters = 8;
        c.operator = 0.5;
        c.report_every = Duration::from_millis(200);
    })
    .await;
    let kinds = Config::defaults().engine.kinds;
    let truth: Vec<TruthCluster> = common::workloads(&sim);
    let with: Vec<&TruthCluster> = truth.iter().filter(|c| c.operator).collect();
    assert!(with.len() >= 2 && with.len() < truth.len());
    let inventory = fleet_of(&sim);
    let mut live = Session::kube(&inventory, &settings());
    assert!(live.settle(Duration::from_secs(20)).await);

    // Every cluster counted as the truth says, by report or by list, with no socket held.
    until_summarized(&mut live, &truth, &kinds).await;
    let names = || truth.iter().map(|t| t.name.as_str()).collect();
    until_closed(&sim, names, "a summarized cluster keeps its connection").await;
    // Looking again resumes the TLS session: no certificate sent or verified.
    let deadline = Instant::now() + Duration::from_secs(10);
    while sim.handle.stats()["tlsResumed"].as_u64().unwrap() < truth.len() as u64 {
        assert!(Instant::now() < deadline, "{:#}", sim.handle.stats());
        live.pump(Duration::from_millis(100)).await;
    }

    // Opening a cluster watches its objects: live, counted by them, the truth's objects.
    let reader = live.reader();
    let info = |live: &Session, name: &str| live.index.cluster_named(name).unwrap().info.clone();
    let first = info(&live, &with[0].name);
    reader.open(&first);
    until(&mut live, Duration::from_secs(10), |live| {
        let entry = live.index.cluster_named(&first.name).unwrap();
        let want = true_counts(with[0], &kinds);
        let good = entry.connection.phase == Phase::Live
            && entry.counted == Counted::Objects
            && entry.health == want
            && entry.objects.len() as u32 == want.total();
        (!good).then(|| {
            format!(
                "opened {}: {:?} {:?}",
                first.name, entry.connection.phase, entry.health
            )
        })
    })
    .await;
    assert_eq!(
        open_sockets(&sim, &first.name),
        1,
        "watched over one connection"
    );

    // Opening another (one stays warm) lets the first go back to its report.
    let second = info(&live, &with[1].name);
    reader.open(&second);
    until(&mut live, Duration::from_secs(10), |live| {
        let one = live.index.cluster_named(&first.name).unwrap();
        let two = live.index.cluster_named(&second.name).unwrap();
        let good = summarized_wrongly(one, with[0], &kinds).is_none()
            && two.connection.phase == Phase::Live
            && two.counted == Counted::Objects;
        (!good).then(|| {
            format!(
                "{:?} {:?} / {:?}",
                one.connection.phase, one.counted, two.connection.phase
            )
        })
    })
    .await;
    let cold = || vec![first.name.as_str()];
    until_closed(&sim, cold, "the cold cluster keeps its connection").await;
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_cluster_forbidden_one_kind_shows_the_others_and_names_it() {
    let sim = common::start_with(|c| {
        c.clusters = 4;
        c.operator = 0.0;
        c.faults = fluxfleet_sim::faults::Spec::parse("forbidden=1%:HelmRelease").unwrap();
    })
    .await;
    let kinds = Config::defaults().engine.kinds;
    let truth = sim.handle.truth();
    let cluster = truth
        .iter()
        .find(|c| c.faults.iter().any(|f| f.starts_with("forbidden")))
        .unwrap();
    let mut live = Session::kube(&fleet_of(&sim), &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    let visible: Vec<FluxKind> = kinds
        .iter()
        .copied()
        .filter(|k| *k != FluxKind::HelmRelease)
        .collect();
    until(&mut live, Duration::from_secs(10), |live| {
        let entry = live.index.cluster_named(&cluster.name).unwrap();
        let conn = &entry.connection;
        let good = conn.phase == Phase::Summary
            && *conn.forbidden == [FluxKind::HelmRelease]
            && conn
                .error
                .as_deref()
                .is_some_and(|e| e.contains("forbidden to list HelmRelease"))
            && entry.health == true_counts(cluster, &visible);
        (!good).then(|| format!("{conn:?} {:?}", entry.health))
    })
    .await;
    live.shutdown().await;
}

/// `fluxfleet get --status failing --root-causes -o json` on the simulated fleet, the suspects
/// left out (they weigh the ready copies, which a summarized cluster does not hold).
async fn root_causes(sim: &Sim, mode: &str) -> serde_json::Value {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .args(["get", "--status", "failing", "--root-causes", "-o", "json"])
        .args(["--watch-mode", mode, "--kubeconfig-dir"])
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    common::root_causes_without_suspects(&out, mode)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summarized_fleet_names_every_failure_and_its_root_cause() {
    let sim = common::start_with(|c| {
        c.clusters = 16;
        c.operator = 1.0;
    })
    .await;
    // Every cluster counted by its report, holding its failures and what they depend on, and
    // nothing else.
    let kinds = Config::defaults().engine.kinds;
    let truth: Vec<TruthCluster> = common::workloads(&sim);
    let mut live = Session::kube(&fleet_of(&sim), &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    until_summarized(&mut live, &truth, &kinds).await;
    let held: usize = live.index.entries().map(|(_, c)| c.objects.len()).sum();
    let all: usize = truth.iter().map(|t| t.objects.len()).sum();
    assert!(held > 0 && held < all, "holds {held} of {all} objects");
    let names = || truth.iter().map(|t| t.name.as_str()).collect();
    until_closed(&sim, names, "a summarized cluster keeps its connection").await;
    live.shutdown().await;

    // The root causes of the summarized fleet are those of the watched one.
    let watched = root_causes(&sim, "all").await;
    let summarized = root_causes(&sim, "summary").await;
    let causes = watched["rootCauses"].as_array().unwrap();
    assert!(
        causes
            .iter()
            .any(|c| c["blocks"]["most"].as_u64() > Some(0)),
        "the simulated fleet has roots holding others back: {watched}"
    );
    assert_eq!(summarized, watched);
}
