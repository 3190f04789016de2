//! Collectors and readers on a JetStream cluster of three nats-servers (`--nats` listing all
//! three), the buckets and the history kept three times (`collect --replicas 3`): the whole
//! cluster stopped while the fleet changes, and started again, the collectors say what changed
//! meanwhile. (Each node lost in turn while the fleet changes is `nats_failover`'s.)
//! `FLUXFLEET_TEST_NATS_LOG=1` shows the servers' logs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::bus::{Running, start_collector_with, until_truth};
use common::nats::NatsCluster;
use fluxfleet::bus;
use fluxfleet_sim::facts::FluxKind;

/// A simulated fleet of 30 clusters, two collectors keeping the stores three times on a
/// three-node cluster, and a reader's view equal to the truth.
struct Setup {
    cluster: NatsCluster,
    options: bus::Options,
    sim: common::Sim,
    names: BTreeSet<String>,
    running: Vec<Running>,
}

/// How long the view may take to equal the truth again: a node lost means new stream leaders
/// and the collectors' publishes sent again, which on two loaded cores (the CI's, every test
/// binary at once) once took longer than a minute.
const WITHIN: Duration = Duration::from_secs(120);

impl Setup {
    async fn start() -> Setup {
        let cluster = NatsCluster::start(3).await;
        let options = bus::Options {
            url: cluster.url.clone(),
            bucket: "fleet".into(),
            ..bus::Options::default()
        };
        let sim = common::start_with(|c| {
            c.clusters = 30;
            c.workspaces = 3;
            c.objects = 10;
            c.bookmark_interval = Duration::from_secs(5);
        })
        .await;
        let inventory = common::fleet_of(&sim);
        let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
        let running: Vec<Running> = ["c1", "c2"]
            .into_iter()
            .map(|id| start_collector_with(id, &options, &inventory, 3))
            .collect();
        until_truth("the view equals the truth", &options, &sim, &names, WITHIN).await;
        for (id, collector) in ["c1", "c2"].iter().zip(&running) {
            assert!(
                !collector.task.is_finished(),
                "collector {id} stopped at its start"
            );
        }
        Setup {
            cluster,
            options,
            sim,
            names,
            running,
        }
    }

    /// Kustomizations of the fleet that are ready and not suspended: (cluster, namespace, name).
    fn healthy(&self, n: usize) -> Vec<(String, String, String)> {
        self.sim
            .handle
            .truth()
            .into_iter()
            .filter(|c| self.names.contains(&c.name))
            .flat_map(|c| {
                let cluster = c.name.clone();
                c.objects
                    .into_iter()
                    .filter(common::truth::breakable)
                    .map(move |o| (cluster.clone(), o.namespace, o.name))
            })
            .take(n)
            .collect()
    }

    fn set_ready(&self, (cluster, namespace, name): &(String, String, String), ready: bool) {
        let kind = FluxKind::Kustomization;
        assert!(
            self.sim
                .handle
                .set_ready(cluster, kind, namespace, name, ready)
        );
    }

    async fn until_truth(&self, what: &str) {
        until_truth(what, &self.options, &self.sim, &self.names, WITHIN).await;
    }

    /// Both collectors still running; then stopped cleanly.
    async fn stop(self) {
        let stopped: Vec<bool> = self.running.iter().map(|c| c.task.is_finished()).collect();
        for (collector, stopped) in self.running.into_iter().zip(stopped) {
            collector.stop.cancel();
            let result = collector.task.await.unwrap();
            assert!(!stopped, "a collector stopped by itself: {result:?}");
            result.unwrap();
        }
        self.sim.handle.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_cluster_stopped_and_started_again_loses_nothing() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let mut setup = Setup::start().await;
    let changed = setup.healthy(5);
    for node in 0..3 {
        setup.cluster.stop(node);
    }
    // The fleet changes while the bus is down: the collectors see it and cannot say it.
    for ks in &changed {
        setup.set_ready(ks, false);
    }
    for node in 0..3 {
        setup.cluster.restart(node);
    }
    setup.cluster.until_jetstream().await;
    setup
        .until_truth("the cluster back: the view equals the truth")
        .await;
    setup.stop().await;
}
