//! A reader of the bus that streams, and one that summarizes: the first objects reach the
//! session while the bus still holds values not yet sent; a summarizing reader shows every
//! cluster by its collector's counts (equal to the truth) holding no object, reads the objects
//! of the clusters opened by key prefix, follows them, and lets the least recently opened go.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::bus::{start_collector, until_truth};
use common::nats::NatsServer;
use common::truth::seen;
use fluxfleet::bus;
use fluxfleet::fleet::{ClusterEntry, Counted, Health, Index};
use fluxfleet::session::Session;

mod collectors;
mod streaming;
mod summarizing;

fn options(nats: &NatsServer) -> bus::Options {
    bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    }
}

/// A bus holding a simulated fleet, published whole by one collector.
async fn published(
    nats: &NatsServer,
    clusters: usize,
    objects: usize,
) -> (common::Sim, BTreeSet<String>, common::bus::Running) {
    let sim = common::start_with(|c| {
        c.clusters = clusters;
        c.workspaces = 3;
        c.objects = objects;
    })
    .await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let collector = start_collector("c1", &options(nats), &inventory);
    let within = Duration::from_secs(120);
    until_truth("published", &options(nats), &sim, &names, within).await;
    (sim, names, collector)
}

/// Applies the session's changes until `check` finds nothing wrong, or fails saying what.
async fn until_index(what: &str, session: &mut Session, check: impl Fn(&Index) -> Option<String>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let Some(wrong) = check(&session.index) else {
            return;
        };
        assert!(Instant::now() < deadline, "{what}: {wrong}");
        session.pump(Duration::from_millis(300)).await;
    }
}

fn cluster<'a>(index: &'a Index, name: &str) -> &'a ClusterEntry {
    index
        .clusters()
        .iter()
        .find(|c| c.info.name == name)
        .unwrap()
}

/// Whether a cluster holds exactly the truth's objects (by name and health).
fn holds_the_truth(index: &Index, sim: &common::Sim, name: &str) -> Option<String> {
    let truth = sim.handle.truth();
    let of = truth.iter().find(|c| c.name == name).unwrap();
    let want: BTreeSet<(String, Health)> = of
        .objects
        .iter()
        .map(|o| {
            (
                format!("{}/{}/{}", o.kind, o.namespace, o.name),
                seen(o.health),
            )
        })
        .collect();
    let c = cluster(index, name);
    let held: BTreeSet<(String, Health)> = c
        .objects
        .values()
        .map(|o| {
            let k = &o.key;
            (
                format!("{}/{}/{}", k.kind.as_str(), k.namespace, k.name),
                o.health,
            )
        })
        .collect();
    (held != want || c.counted != Counted::Objects).then(|| {
        format!(
            "{name}: holds {} objects ({:?}), the truth {}",
            held.len(),
            c.counted,
            want.len()
        )
    })
}
