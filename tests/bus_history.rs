//! The history stream on a real NATS JetStream server: it keeps its cap in bytes (the oldest
//! changes go first), and a stream made before with another retention takes the one given now.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::Duration;

use common::bus::TTL;
use common::nats::NatsServer;
use fluxfleet::bus;

fn options(nats: &NatsServer) -> bus::Options {
    bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    }
}

fn retention(max_bytes: u64) -> bus::Retention {
    bus::Retention {
        history: Duration::from_secs(3600),
        history_max_bytes: max_bytes,
        ttl: TTL,
        replicas: 1,
    }
}

async fn opened(nats: &NatsServer, max_bytes: u64) -> bus::Stores {
    let options = options(nats);
    let client = bus::connect(&options, "test").await.unwrap();
    bus::open(client, &options, Some(retention(max_bytes)))
        .await
        .unwrap()
}

/// Records of about 1 KiB, numbered, on one cluster's history subject.
async fn record(stores: &bus::Stores, n: usize) {
    let subject = stores.names.history_subject("prod-eu-1");
    let value = format!("{{\"n\":{n},\"pad\":\"{}\"}}", "x".repeat(1000));
    stores
        .js
        .publish(subject, value.into())
        .await
        .unwrap()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_keeps_its_cap_in_bytes_and_lets_the_oldest_go() {
    let nats = NatsServer::start();
    let cap = 1 << 20;
    let mut stores = opened(&nats, cap).await;
    // Three times the cap.
    for n in 0..3 * 1024 {
        record(&stores, n).await;
    }
    let info = stores.history.info().await.unwrap().clone();
    assert!(
        info.state.bytes <= cap,
        "{} bytes held, cap {cap}",
        info.state.bytes
    );
    assert!(
        info.state.messages > 500,
        "most of the cap is used: {info:?}"
    );
    // The newest is kept, the oldest went.
    assert_eq!(info.state.last_sequence, 3 * 1024);
    assert!(info.state.first_sequence > 2000, "{:?}", info.state);
}

/// A stream made without a cap (an older collector) takes the cap of the collector that opens
/// it now, and drops to it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_made_before_takes_the_cap_given_now() {
    let nats = NatsServer::start();
    let stores = opened(&nats, 1 << 30).await;
    for n in 0..2 * 1024 {
        record(&stores, n).await;
    }
    let cap = 1 << 20;
    let mut stores = opened(&nats, cap).await;
    let info = stores.history.info().await.unwrap().clone();
    assert_eq!(info.config.max_bytes, cap as i64);
    assert!(info.state.bytes <= cap, "{:?}", info.state);
    assert_eq!(info.state.last_sequence, 2 * 1024);
}
