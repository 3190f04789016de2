//! Chaos, small: every fault the simulator has, churn and rollouts on a small fleet; once the
//! faults and the churn stop, the index equals the simulator's truth exactly. The same harness
//! runs at 2,000 clusters in `cargo bench --bench chaos` (numbers in docs/simulator.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::harness as chaos;

use std::time::Duration;

use chaos::Plan;
use fluxfleet::config::Config;
use fluxfleet::fleet::FluxKind;
use fluxfleet_sim::faults::Spec;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_every_fault_churn_and_rollouts_the_index_equals_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let plan = Plan {
        clusters: 40,
        objects: 30,
        // Each kind on at least one cluster, with durations that fire within the active time.
        faults: Spec::parse(
            "unreachable=3%,slow=3%:4s,flap=5%:1s,gone=5%:1s,error5xx=5%:30%,\
             expired-token=3%:2s,no-flux=3%,old-flux=5%,forbidden=3%:HelmRelease,\
             drain=3%:2s,handover=5%:6s,silent=3%",
        )
        .unwrap(),
        churn: 60.0,
        rollout_interval: Duration::from_secs(2),
        rollout_step: Duration::from_millis(200),
        active: Duration::from_secs(8),
        settle_within: Duration::from_secs(45),
        seed: 11,
        faults_stay: false,
        observe: Duration::ZERO,
    };
    let mut engine = Config::defaults().engine;
    engine.kinds = FluxKind::ALL.to_vec();
    engine.connect_timeout = Duration::from_secs(3);
    engine.max_backoff = Duration::from_secs(2);
    let report = chaos::run(&plan, dir.path(), &engine).await.unwrap();
    eprintln!("{report:?}");
    assert!(report.exact(), "{report:#?}");
    assert!(report.agreed_after.is_some());
    // The fleet really moved while the faults ran: hundreds of objects changed.
    assert!(report.changes > 300, "{report:#?}");
    assert!(report.objects >= 30 * 35, "{report:#?}");
}

/// A fifth of the clusters have every watch cut 6 s after it opens, for the whole run, while the
/// fleet churns: each cut watch is resumed at once from where it stopped, so nothing is lost or
/// wrong, and those clusters stay live — shown with their restarts, not as unreachable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_whose_watches_keep_breaking_stay_live_and_exact() {
    let dir = tempfile::tempdir().unwrap();
    let plan = Plan {
        clusters: 30,
        objects: 20,
        faults: Spec::parse("flap=20%:6s").unwrap(),
        churn: 30.0,
        rollout_interval: Duration::from_secs(3),
        rollout_step: Duration::from_millis(200),
        active: Duration::from_secs(8),
        settle_within: Duration::from_secs(30),
        seed: 5,
        faults_stay: true,
        observe: Duration::from_secs(12),
    };
    let mut engine = Config::defaults().engine;
    engine.connect_timeout = Duration::from_secs(3);
    let report = chaos::run(&plan, dir.path(), &engine).await.unwrap();
    eprintln!("{report:?}");
    assert!(report.exact(), "{report:#?}");
    assert!(report.changes > 100, "{report:#?}");
    assert_eq!(report.not_live, 0, "{report:#?}");
    assert!(
        report.restarted >= 3,
        "the flapping clusters are shown restarting: {report:#?}"
    );
}
