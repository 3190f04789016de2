//! The Flux Operator's reports, read from the simulated fleet over real HTTPS: every cluster
//! running the operator shows its FluxReport with the cluster's true counts, the others none,
//! and a report written again is read again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::Duration;

use fluxfleet::config::{self, Config};
use fluxfleet::fleet::FluxKind;
use fluxfleet::session::Session;
use fluxfleet_sim::{Faults, TruthCluster};

use common::{Sim, fleet_of};

fn settings() -> config::EngineSection {
    let mut engine = common::engine_settings();
    engine.kinds = Config::defaults().engine.kinds;
    engine.report_interval = Duration::from_millis(200);
    engine
}

/// Running, failing and suspended objects of the watched kinds, counted as the operator counts
/// them: suspended ones apart, failing ones among the running.
fn true_counts(cluster: &TruthCluster, kinds: &[FluxKind]) -> (u64, u64, u64) {
    let mut counts = (0, 0, 0);
    for o in &cluster.objects {
        let watched = FluxKind::from_kind(&o.kind).is_some_and(|k| kinds.contains(&k));
        if !watched {
            continue;
        }
        if o.suspended {
            counts.2 += 1;
        } else {
            counts.0 += 1;
            // The Flux Operator leaves what only waits on a dependency out of `failing`.
            let waits = o.reason.as_deref() == Some("DependencyNotReady");
            counts.1 += u64::from(o.health.is_failing() && !waits);
        }
    }
    counts
}

/// Pumps until every cluster's report says what the simulator's truth says, or fails naming
/// the first cluster that does not.
async fn until_reports_match(live: &mut Session, sim: &Sim, within: Duration) {
    let kinds = FluxKind::ALL.to_vec();
    common::until(live, within, |live| {
        let truth = sim.handle.truth();
        truth.iter().filter(|c| !c.management).find_map(|c| {
            let entry = live.index.cluster_named(&c.name)?;
            let seen = entry.report.as_ref().map(|r| {
                let watched = r
                    .reconcilers
                    .iter()
                    .filter(|k| FluxKind::from_kind(&k.kind).is_some_and(|k| kinds.contains(&k)));
                watched.fold((0, 0, 0), |(a, b, c), k| {
                    let n = u64::from;
                    (a + n(k.running), b + n(k.failing), c + n(k.suspended))
                })
            });
            let wanted = c.operator.then(|| true_counts(c, &kinds));
            (seen != wanted).then(|| {
                format!(
                    "the reports never matched the truth: {}: seen {seen:?}, truth {wanted:?}",
                    c.name
                )
            })
        })
    })
    .await;
}

/// A simulated fleet of `clusters`, a share `operator` of them running the Flux Operator, which
/// writes its report every 300 ms.
async fn reporting(clusters: usize, operator: f64) -> Sim {
    common::start_with(|c| {
        c.clusters = clusters;
        c.operator = operator;
        c.report_every = Duration::from_millis(300);
    })
    .await
}

/// Makes a ready Kustomization of `cluster` that nothing depends on fail; how many of its
/// objects failed before. (Breaking one with dependants would turn a dependant failing for
/// its own reason into one waiting on it — DependencyNotReady, which the report does not count
/// — and the count need not rise.)
fn break_a_kustomization(sim: &Sim, cluster: &TruthCluster) -> u64 {
    let leaf = |name: &str| name == "flux-system" || name.starts_with("cluster-vars");
    let ks = cluster
        .objects
        .iter()
        .find(|o| {
            o.kind == "Kustomization" && leaf(&o.name) && !o.suspended && !o.health.is_failing()
        })
        .expect("a ready Kustomization nothing depends on");
    let failing_before = true_counts(cluster, &FluxKind::ALL).1;
    assert!(sim.handle.set_ready(
        &cluster.name,
        fluxfleet_sim::facts::FluxKind::Kustomization,
        &ks.namespace,
        &ks.name,
        false
    ));
    failing_before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_running_the_operator_show_their_report_with_the_true_counts() {
    let sim = reporting(8, 0.5).await;
    let truth = sim.handle.truth();
    let with: Vec<&TruthCluster> = truth.iter().filter(|c| c.operator).collect();
    assert!(
        !with.is_empty() && with.len() < 8,
        "some clusters run the operator, some do not"
    );
    let mut live = Session::kube(&fleet_of(&sim), &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    until_reports_match(&mut live, &sim, Duration::from_secs(20)).await;

    let entry = live.index.cluster_named(&with[0].name).unwrap();
    let report = entry.report.as_ref().unwrap();
    assert!(report.flux_version().unwrap().starts_with("v2."));
    assert!(report.healthy(), "{report:?}");
    assert_eq!(report.components_ready(), (4, 4));
    let instance = report.instance.as_ref().expect("its FluxInstance is read");
    assert_eq!(&*instance.name, "flux");
    assert!(report.sync.is_some(), "the cluster's own sync");

    // A Kustomization breaks: the operator's next report counts it, and fluxfleet reads it.
    let cluster = with[0];
    let failing_before = break_a_kustomization(&sim, cluster);
    until_reports_match(&mut live, &sim, Duration::from_secs(20)).await;
    let after = sim.handle.truth();
    let now = after.iter().find(|c| c.name == cluster.name).unwrap();
    assert!(true_counts(now, &FluxKind::ALL).1 > failing_before);
    live.shutdown().await;
}

/// A watched cluster watches its FluxReport: with `report_interval` an hour, a report the
/// operator writes again still arrives, because the watch brings it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_written_again_arrives_through_its_watch_without_reading_it_again() {
    let sim = reporting(4, 1.0).await;
    let mut settings = settings();
    settings.report_interval = Duration::from_secs(3600);
    let mut live = Session::kube(&fleet_of(&sim), &settings);
    assert!(live.settle(Duration::from_secs(20)).await);
    until_reports_match(&mut live, &sim, Duration::from_secs(20)).await;

    let truth = sim.handle.truth();
    let cluster = truth.iter().find(|c| c.operator).unwrap();
    let failing_before = break_a_kustomization(&sim, cluster);
    until_reports_match(&mut live, &sim, Duration::from_secs(20)).await;
    let entry = live.index.cluster_named(&cluster.name).unwrap();
    let failing: u64 = entry.report.as_ref().unwrap().totals().1;
    assert!(
        failing > failing_before,
        "{failing} failing, {failing_before} before"
    );
    live.shutdown().await;
}

/// A report watch the server answers 410 Gone to (its history compacted again and again) and
/// cuts every few hundred milliseconds still brings each rewrite: read again, watched again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_watch_sent_back_by_410_and_cut_still_brings_each_rewrite() {
    let sim = reporting(3, 1.0).await;
    let mut live = Session::kube(&fleet_of(&sim), &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    until_reports_match(&mut live, &sim, Duration::from_secs(20)).await;
    let truth = sim.handle.truth();
    let cluster = truth.iter().find(|c| c.operator).unwrap();
    sim.handle.set_faults(
        &cluster.name,
        Faults {
            flap: Some(Duration::from_millis(400)),
            ..Faults::default()
        },
    );
    for _ in 0..4 {
        sim.handle.compact(&cluster.name);
        live.pump(Duration::from_millis(250)).await;
    }
    let failing_before = break_a_kustomization(&sim, cluster);
    for _ in 0..4 {
        sim.handle.compact(&cluster.name);
        live.pump(Duration::from_millis(250)).await;
    }
    until_reports_match(&mut live, &sim, Duration::from_secs(20)).await;
    let entry = live.index.cluster_named(&cluster.name).unwrap();
    assert!(entry.report.as_ref().unwrap().totals().1 > failing_before);
    live.shutdown().await;
}
