//! Collectors sharing a simulated fleet through a real NATS JetStream server, and readers that
//! see it without any connection to a cluster: the view equals the simulator's truth; a
//! collector killed has its clusters taken over; restarted, it takes its share back and no
//! cluster is watched twice; a reader started later sees what changed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::bus::{Running, start_collector, until_truth};
use common::nats::NatsServer;
use fluxfleet::bus;

mod collectors;
mod commands;
mod connecting;
mod own_kubeconfigs;
mod sharing;
mod stale;
mod tui;

fn options(nats: &NatsServer) -> bus::Options {
    bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    }
}

/// A small simulated fleet published by one collector, once a reader sees all of it.
async fn one_collector() -> (
    NatsServer,
    bus::Options,
    common::Sim,
    fluxfleet::inventory::Inventory,
    Running,
) {
    let nats = NatsServer::start();
    let options = options(&nats);
    let sim = common::start().await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let only = start_collector("only", &options, &inventory);
    let within = Duration::from_secs(30);
    until_truth("the view equals the truth", &options, &sim, &names, within).await;
    (nats, options, sim, inventory, only)
}
