//! Collectors started with their NATS cluster, before it has a JetStream leader: they keep
//! trying to make their buckets (not ready meanwhile, saying why on their probes) and publish
//! every object once the cluster has elected one. The fault: two of the three nodes start only
//! after both collectors have failed, so no leader can be elected before that (a majority is
//! needed) — the election delayed for as long as the collectors take to fail, on a machine as
//! loaded as the test binary makes it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::bus::{Running, one_at_a_time, start_collector_with, until, until_truth};
use common::nats::NatsCluster;
use fluxfleet::bus::{self, collector::status::NotReady};

/// How long the collectors may take to fail their first try (a try asks eight times, each
/// waiting up to five seconds for an answer), and the view to equal the truth once the cluster
/// has a leader (the collectors' pause between tries is at most 30 s).
const WITHIN: Duration = Duration::from_secs(150);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collectors_started_before_their_cluster_has_a_leader_publish_every_object_once_it_has() {
    let _turn = one_at_a_time().await;
    // One node of three: no majority, no leader.
    let mut cluster = NatsCluster::start_some(3, 1);
    let options = bus::Options {
        url: cluster.url.clone(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    };
    let sim = common::start_with(|c| {
        c.clusters = 12;
        c.workspaces = 2;
        c.objects = 8;
    })
    .await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let running: Vec<Running> = ["c1", "c2"]
        .into_iter()
        .map(|id| start_collector_with(id, &options, &inventory, 3))
        .collect();

    // Both tried and failed, and say so where a probe looks: not ready, the bus's why.
    until(
        "both collectors say the bus is not ready for them",
        WITHIN,
        || async {
            let probes: Vec<_> = running
                .iter()
                .map(|r| r.status.readyz(tokio::time::Instant::now()))
                .collect();
            let failed = |p: &Result<(), NotReady>| matches!(p, Err(NotReady::Bus(_)));
            (!probes.iter().all(failed)).then(|| format!("{probes:?}"))
        },
    )
    .await;
    for (id, collector) in ["c1", "c2"].iter().zip(&running) {
        assert!(
            !collector.task.is_finished(),
            "collector {id} gave up while the cluster had no leader: {:?}",
            collector.status.readyz(tokio::time::Instant::now())
        );
        let said = collector
            .status
            .readyz(tokio::time::Instant::now())
            .unwrap_err()
            .to_string();
        assert!(said.contains("fleet"), "names what it cannot make: {said}");
    }

    // The rest of the cluster comes up and elects a leader: every object is published.
    cluster.restart(1);
    cluster.restart(2);
    until_truth(
        "the view equals the truth once the cluster has a leader",
        &options,
        &sim,
        &names,
        WITHIN,
    )
    .await;
    for (id, collector) in ["c1", "c2"].iter().zip(&running) {
        assert!(!collector.task.is_finished(), "collector {id} stopped");
        collector.stop.cancel();
    }
    for collector in running {
        collector.task.await.unwrap().unwrap();
    }
}
