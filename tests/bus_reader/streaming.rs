//! A reader that streams: its first objects reach the session while the bus still holds the
//! rest, and it knows every cluster while their states are rewritten.

use crate::common;

use std::time::Duration;

use common::nats::NatsServer;
use fluxfleet::bus::{self, reader::Bus};
use fluxfleet::fleet::index::Change;
use fluxfleet::fleet::{Phase, SourceId};
use fluxfleet::source::{Sink, Source};

use super::{options, published};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_has_its_first_objects_while_the_bus_still_holds_the_rest() {
    let nats = NatsServer::start();
    let (sim, _, collector) = published(&nats, 100, 20).await;
    let mut bus = Bus::connect(&options(&nats)).await.unwrap();
    assert_eq!(bus.clusters().len(), 100, "every cluster known at once");
    // A session that takes one change at a time, and has taken none yet.
    let (tx, mut events) = tokio::sync::mpsc::channel(1);
    bus.start(Sink::new(SourceId(0), tx));
    let first = events.recv().await.unwrap();
    assert!(
        matches!(first.change, Change::Applied(_)),
        "objects come first, as they arrive: {:?}",
        first.change
    );
    // The reader waits for the session: what it has not sent, the server still holds for it.
    let client = bus::connect(&options(&nats), "test").await.unwrap();
    let js = async_nats::jetstream::new(client);
    let stream = js.get_stream("KV_fleet").await.unwrap();
    let mut pending = 0;
    let mut consumers = stream.consumers();
    while let Some(info) = futures::StreamExt::next(&mut consumers).await {
        let info = info.unwrap();
        if info.config.filter_subject == "$KV.fleet.o.>" {
            pending += info.num_pending;
        }
    }
    assert!(
        pending > 1000,
        "2,000 objects, one taken by the session: {pending} still on the server"
    );
    bus.stop().await;
    collector.stop.cancel();
    collector.task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_knows_every_cluster_while_their_states_are_rewritten() {
    use fluxfleet::bus::wire::ClusterState;
    use fluxfleet::fleet::{ClusterInfo, Connection};
    let nats = NatsServer::start();
    let options = options(&nats);
    let client = bus::connect(&options, "test").await.unwrap();
    let retention = bus::Retention {
        history: Duration::from_secs(60),
        history_max_bytes: 1 << 30,
        ttl: Duration::from_secs(5),
        replicas: 1,
    };
    let stores = bus::open(client, &options, Some(retention)).await.unwrap();
    let state = |i: usize, phase: Phase| {
        let info = ClusterInfo::new(&format!("cluster-{i:03}"), "ws");
        let value = ClusterState::new(&info, &Connection::new(phase), "c1");
        (
            bus::keys::cluster(&info.name),
            serde_json::to_vec(&value).unwrap(),
        )
    };
    for i in 0..300 {
        let (key, value) = state(i, Phase::Live);
        stores.state.put(key, value.into()).await.unwrap();
    }
    // A collector rewriting its clusters' states all the time, as reports are read again.
    let writer = stores.state.clone();
    let rewriting = tokio::spawn(async move {
        for round in 0.. {
            for i in 0..300 {
                let phase = if round % 2 == 0 {
                    Phase::Syncing
                } else {
                    Phase::Live
                };
                let (key, value) = state(i, phase);
                let _ = writer.put(key, value.into()).await;
            }
        }
    });
    for read in 0..10 {
        let bus = Bus::connect(&options).await.unwrap();
        assert_eq!(bus.clusters().len(), 300, "read {read}");
    }
    rewriting.abort();
}
