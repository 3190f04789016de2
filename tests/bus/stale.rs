//! Clusters whose collector died or lost the bus: shown stale, since when, with what it last
//! published, until it is back.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::bus::{TTL, start_collector, until_truth};
use common::nats::NatsServer;
use fluxfleet::bus;
use fluxfleet::session::Session;

use super::{one_collector, options};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_whose_collector_died_shows_so_with_what_it_last_published() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let (_nats, options, sim, _inventory, only) = one_collector().await;
    // A reader that is open when the collector dies, and one that starts after.
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let mut open = Session::start(vec![Box::new(bus)]);
    open.settle(Duration::from_secs(10)).await;
    // Events and YAML are on the cluster, which a reader does not connect to: it says so.
    let entry = &open.index.clusters()[0];
    let key = entry.objects.keys().next().unwrap().clone();
    let why = open
        .reader()
        .events(&entry.info, std::slice::from_ref(&key))
        .await
        .unwrap_err();
    assert!(
        matches!(&why, fluxfleet::fleet::read::ReadError::NoKubeconfig(text) if text.contains("comes from collectors through NATS")),
        "{why:?}"
    );
    only.task.abort();
    let gone = |s: &Session| {
        let wrong: Vec<String> = s
            .index
            .clusters()
            .iter()
            .filter(|c| {
                c.connection.phase != fluxfleet::fleet::Phase::TimedOut
                    || !c
                        .connection
                        .error
                        .as_deref()
                        .unwrap_or("")
                        .contains("its collector only stopped announcing itself")
                    || c.objects.is_empty()
            })
            .map(|c| format!("{}: {:?}", c.info.name, c.connection.phase))
            .collect();
        (!wrong.is_empty()).then(|| format!("{wrong:?}"))
    };
    common::until(&mut open, TTL * 4 + Duration::from_secs(5), gone).await;
    // The reader that saw it go says since when its clusters are stale.
    for c in open.index.clusters() {
        let since = c.connection.since.expect("stale since the collector went");
        let said = c.connection.error.as_deref().unwrap_or("");
        assert!(
            said.contains(&format!("stopped announcing itself at {since:.0}")),
            "{said}"
        );
    }
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let mut later = Session::start(vec![Box::new(bus)]);
    later.settle(Duration::from_secs(10)).await;
    assert_eq!(gone(&later), None);
    // One that started after cannot know when.
    assert!(
        later
            .index
            .clusters()
            .iter()
            .all(|c| c.connection.since.is_none())
    );
    open.shutdown().await;
    later.shutdown().await;
    sim.handle.shutdown().await;
}

/// Every object a session shows, by cluster: what "missing" is counted on.
fn shown_objects(s: &Session) -> BTreeSet<(String, String)> {
    s.index
        .clusters()
        .iter()
        .flat_map(|c| {
            let cluster = c.info.name.clone();
            c.objects.keys().map(move |k| {
                (
                    cluster.clone(),
                    format!("{}/{}/{}", k.kind.as_str(), k.namespace, k.name),
                )
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_loses_the_bus_has_its_clusters_shown_stale_until_it_is_back() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let nats = NatsServer::start();
    let options = options(&nats);
    // The collector reaches the server through a relay that can be cut; the reader directly.
    let relay = common::freeze::Freezer::start(&nats.url).await;
    let through = bus::Options {
        url: relay.url("nats"),
        ..options.clone()
    };
    let sim = common::start().await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let only = start_collector("only", &through, &inventory);
    let within = Duration::from_secs(30);
    until_truth("the view equals the truth", &options, &sim, &names, within).await;
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let mut reader = Session::start(vec![Box::new(bus)]);
    reader.settle(Duration::from_secs(10)).await;
    let all = shown_objects(&reader);
    assert!(!all.is_empty());
    relay.cut();
    // A change the collector sees while it cannot say it.
    let (cluster, namespace, name) = sim
        .handle
        .truth()
        .into_iter()
        .find_map(|c| {
            let cluster = c.name.clone();
            c.objects
                .into_iter()
                .find(common::truth::breakable)
                .map(|o| (cluster, o.namespace, o.name))
        })
        .expect("an object that can be made not ready");
    sim.handle.set_ready(
        &cluster,
        fluxfleet_sim::facts::FluxKind::Kustomization,
        &namespace,
        &name,
        false,
    );
    // Its announcement expires: every cluster says its collector stopped announcing itself, and
    // since when, with every object still shown.
    let stale = |s: &Session| {
        let shown = shown_objects(s);
        let missing: Vec<_> = all.difference(&shown).take(3).collect();
        assert!(
            missing.is_empty(),
            "objects gone while the collector is away: {missing:?}"
        );
        let fresh: Vec<String> = s
            .index
            .clusters()
            .iter()
            .filter(|c| {
                c.connection.phase != fluxfleet::fleet::Phase::TimedOut
                    || c.connection.since.is_none()
                    || !c
                        .connection
                        .error
                        .as_deref()
                        .unwrap_or("")
                        .contains("its collector only stopped announcing itself at")
            })
            .map(|c| format!("{}: {:?}", c.info.name, c.connection.phase))
            .collect();
        (!fresh.is_empty()).then(|| format!("not shown stale: {fresh:?}"))
    };
    common::until(&mut reader, TTL * 4 + Duration::from_secs(5), stale).await;
    // Back on the bus, it says what it saw meanwhile, and its clusters are live again.
    relay.restore();
    let truth_now = || common::bus::truth(&sim, &names);
    let back = |s: &Session| {
        let shown = shown_objects(s);
        let missing: Vec<_> = all.difference(&shown).take(3).collect();
        assert!(
            missing.is_empty(),
            "objects gone as the collector comes back: {missing:?}"
        );
        let stale: Vec<&str> = s
            .index
            .clusters()
            .iter()
            .filter(|c| c.connection.phase == fluxfleet::fleet::Phase::TimedOut)
            .map(|c| c.info.name.as_str())
            .collect();
        if !stale.is_empty() {
            return Some(format!("still stale: {stale:?}"));
        }
        common::bus::difference(&common::bus::view_of(&s.index), &truth_now())
            .map(|d| format!("not the truth: {d}"))
    };
    common::until(&mut reader, Duration::from_secs(60), back).await;
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    reader.shutdown().await;
    sim.handle.shutdown().await;
}
