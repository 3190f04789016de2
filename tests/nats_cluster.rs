//! Collectors and readers on a JetStream cluster of three nats-servers (`--nats` listing all
//! three), the buckets and the history kept three times (`collect --replicas 3`): whichever node
//! is lost, nothing is — a reader's view stays the simulator's truth as the fleet changes, and
//! the collectors and readers carry on through the node that is left to them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::bus::{Running, start_collector_with, until_truth};
use common::nats::NatsCluster;
use fluxfleet::bus;
use fluxfleet_sim::facts::FluxKind;

/// The state bucket, the collectors' bucket and the history of bucket "fleet".
const STREAMS: [&str; 3] = ["KV_fleet", "KV_fleet-collectors", "fleet-history"];

/// Waits (bounded) until every store has all its replicas current: a node that came back has
/// caught up.
async fn until_current(options: &bus::Options) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let client = bus::connect(options, "test").await.unwrap();
    let js = async_nats::jetstream::new(client);
    loop {
        let mut behind = Vec::new();
        for stream in STREAMS {
            let info = match js.get_stream(stream).await {
                Ok(s) => s.get_info().await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            let current = info.as_ref().is_ok_and(|i| {
                i.cluster.as_ref().is_some_and(|c| {
                    c.leader.is_some()
                        && c.replicas.len() == 2
                        && c.replicas.iter().all(|p| p.current)
                })
            });
            if !current {
                behind.push(stream);
            }
        }
        if behind.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not replicated: {behind:?}"
        );
        // Polling interval, not synchronisation: the stream information decides.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "issue 35, in progress: the first and second node are lost and found again with nothing \
            lost; losing the third after them, readers time out (`reading >: timed out`) for a \
            minute — cause not yet found"]
async fn a_cluster_of_three_loses_any_one_node_and_nothing_is_lost() {
    let mut cluster = NatsCluster::start(3).await;
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
    let within = Duration::from_secs(60);
    until_truth("the view equals the truth", &options, &sim, &names, within).await;

    // Every store is kept on all three nodes.
    let client = bus::connect(&options, "test").await.unwrap();
    let js = async_nats::jetstream::new(client);
    for stream in STREAMS {
        let info = js
            .get_stream(stream)
            .await
            .unwrap()
            .get_info()
            .await
            .unwrap();
        assert_eq!(info.config.num_replicas, 3, "{stream}");
    }
    drop(js);

    // Each node in turn is lost while the fleet changes, and comes back.
    let truth = sim.handle.truth();
    let workload = truth.iter().find(|c| names.contains(&c.name)).unwrap();
    let ks = workload
        .objects
        .iter()
        .find(|o| o.kind == "Kustomization" && !o.suspended && !o.health.is_failing())
        .unwrap()
        .clone();
    for node in 0..3 {
        cluster.stop(node);
        let broken = node % 2 == 0;
        let kind = FluxKind::Kustomization;
        assert!(
            sim.handle
                .set_ready(&workload.name, kind, &ks.namespace, &ks.name, !broken)
        );
        let what = format!("node {} lost: the view equals the truth", node + 1);
        until_truth(&what, &options, &sim, &names, within).await;
        cluster.restart(node);
        cluster.until_jetstream().await;
        // Back with all it missed before the next goes: two lost at once is a lost quorum.
        until_current(&options).await;
    }
    for collector in &running {
        assert!(!collector.task.is_finished(), "a collector stopped");
    }
    for collector in running {
        collector.stop.cancel();
        collector.task.await.unwrap().unwrap();
    }
    sim.handle.shutdown().await;
}
