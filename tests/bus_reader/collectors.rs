//! What collectors put on the bus for readers: a few clusters of many read with what they
//! held, and summarizing collectors naming every failure and watching what a reader opens.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::bus::start_collector;
use common::nats::NatsServer;
use common::truth::breakable_of;
use fluxfleet::bus::{self, reader::Bus};
use fluxfleet::fleet::{Counted, Index, Phase};
use fluxfleet::session::Session;
use fluxfleet::source::Source;
use fluxfleet_sim::facts::FluxKind;

use super::{cluster, holds_the_truth, options, published, until_index};

/// A collector taking a few clusters of a large bucket reads only theirs (listed, then read by
/// key), and still knows what they held: a Kustomization that failed while no collector
/// watched shows in the history as the change it was, `ready → failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_taking_a_few_clusters_of_many_reads_what_they_held() {
    let nats = NatsServer::start();
    let (sim, _, first) = published(&nats, 60, 5).await;
    first.stop.cancel();
    first.task.await.unwrap().unwrap();
    // Twelve of the sixty (more than a few, far less than the bucket), one failing meanwhile.
    let mut inventory = common::fleet_of(&sim);
    inventory.clusters.truncate(12);
    let name = inventory.clusters[3].name.clone();
    let truth = sim.handle.truth();
    let ks = breakable_of(truth.iter().find(|c| c.name == name).unwrap());
    let started = jiff::Timestamp::now();
    assert!(sim.handle.set_ready(
        &name,
        FluxKind::Kustomization,
        &ks.namespace,
        &ks.name,
        false
    ));
    let second = start_collector("c2", &options(&nats), &inventory);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let within = Duration::from_secs(60);
    common::bus::until("the failure in the history", within, || async {
        let history = bus::history::since(&options(&nats), started, Some(&name))
            .await
            .unwrap_or_default();
        let seen = history.iter().any(|c| {
            c.what == "health"
                && c.name.as_deref() == Some(&*ks.name)
                && c.from.as_deref() == Some("ready")
                && c.to.as_deref().is_some_and(|to| to != "ready")
        });
        (!seen).then(|| format!("{history:?}"))
    })
    .await;
    let view = common::bus::read(&options(&nats)).await.unwrap();
    let truth = common::bus::truth(&sim, &names);
    for name in &names {
        assert_eq!(view.get(name), truth.get(name), "{name}");
    }
    second.stop.cancel();
    second.task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}

/// Counted by its collector's report, holding exactly the truth's failing objects among its
/// not-ready ones.
fn held_by_report(index: &Index, sim: &common::Sim, name: &str) -> Option<String> {
    let truth = sim.handle.truth();
    let of = truth.iter().find(|c| c.name == name).unwrap();
    let want: BTreeSet<String> = of
        .objects
        .iter()
        .filter(|o| o.health.is_failing())
        .map(|o| format!("{}/{}/{}", o.kind, o.namespace, o.name))
        .collect();
    let c = cluster(index, name);
    let held: BTreeSet<String> = c
        .objects
        .values()
        .filter(|o| o.health.is_failing())
        .map(|o| format!("{}/{}/{}", o.key.kind.as_str(), o.key.namespace, o.key.name))
        .collect();
    let failing = want.len() as u32;
    let good = c.counted == Counted::Report
        && c.held
        && c.connection.phase == Phase::Summary
        && held == want
        && c.health.failing() == failing
        && c.health.total() == of.objects.len() as u32;
    (!good).then(|| {
        format!(
            "{name}: {:?} held {} {}, {} failing of {}, holds {held:?}, fails {want:?}",
            c.counted,
            c.held,
            c.connection.phase,
            c.health.failing(),
            c.health.total()
        )
    })
}

/// `get --status failing --root-causes -o json` as `args` read the fleet, suspects left out.
async fn root_causes(sim: &common::Sim, args: &[&str]) -> serde_json::Value {
    let out = common::bus::command(&sim.dir.path().join("kubeconfigs"))
        .args(["get", "--status", "failing", "--root-causes", "-o", "json"])
        .args(args)
        .output()
        .await
        .unwrap();
    common::root_causes_without_suspects(&out, &format!("{args:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summarizing_collectors_name_every_failure_and_watch_what_a_reader_opens() {
    let nats = NatsServer::start();
    let options = options(&nats);
    let sim = common::start_with(|c| {
        c.clusters = 8;
        c.workspaces = 2;
        c.operator = 1.0;
        c.report_every = Duration::from_millis(200);
    })
    .await;
    let inventory = common::fleet_of(&sim);
    let names: Vec<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let mut settings = common::engine_settings();
    settings.kinds = fluxfleet::config::Config::defaults().engine.kinds;
    settings.watch = fluxfleet::config::WatchMode::Summary;
    // Looked at once in the test: the first look alone must publish it whole.
    settings.report_interval = Duration::from_secs(600);
    settings.warm_clusters = 1;
    let collectors: Vec<_> = ["c1", "c2"]
        .iter()
        .map(|id| common::bus::start_collector_of(id, &options, &inventory, 1, settings.clone()))
        .collect();

    // A reader of every object: each cluster counted by its report, its failures held, and no
    // object of it on the bus.
    common::bus::until(
        "every cluster on the bus",
        Duration::from_secs(60),
        || async {
            match Bus::connect(&options).await {
                Ok(bus) => (bus.clusters().len() != names.len())
                    .then(|| format!("{} clusters", bus.clusters().len())),
                Err(e) => Some(e.to_string()),
            }
        },
    )
    .await;
    let bus = Bus::connect(&options).await.unwrap();
    let mut session = Session::start(vec![Box::new(bus)]);
    session.settle(Duration::from_secs(30)).await;
    until_index(
        "every cluster counted by its report",
        &mut session,
        |index| names.iter().find_map(|n| held_by_report(index, &sim, n)),
    )
    .await;
    let client = bus::connect(&options, "test").await.unwrap();
    let stores = bus::open(client, &options, None).await.unwrap();
    let objects = bus::last_values(&stores, "o.>").await.unwrap();
    assert!(objects.is_empty(), "{} objects on the bus", objects.len());

    // The root causes read from the bus are those of the fleet watched whole.
    let watched = root_causes(&sim, &["--watch-mode", "all"]).await;
    let read = root_causes(&sim, &["--nats", &nats.url]).await;
    assert!(
        !watched["rootCauses"].as_array().unwrap().is_empty(),
        "{watched}"
    );
    assert_eq!(read, watched);

    // Opened, a cluster is watched by its collector: its objects live on the reader.
    let info = |session: &Session, name: &str| cluster(&session.index, name).info.clone();
    let (a, b) = (&names[0], &names[1]);
    session.reader().open(&info(&session, a));
    until_index("the opened cluster watched", &mut session, |index| {
        holds_the_truth(index, &sim, a).or_else(|| {
            (cluster(index, a).connection.phase != Phase::Live).then(|| "not live".into())
        })
    })
    .await;
    // A summarizing reader opens another: its collector (one warm cluster each) lets the first
    // go back to its report unless both have the same collector.
    let summarizing = Bus::connect(&options).await.unwrap().summarizing(2);
    let mut other = Session::start(vec![Box::new(summarizing)]);
    other.settle(Duration::from_secs(30)).await;
    other.reader().open(&info(&other, b));
    until_index("opened by a summarizing reader", &mut other, |index| {
        holds_the_truth(index, &sim, b).or_else(|| {
            (cluster(index, b).connection.phase != Phase::Live).then(|| "not live".into())
        })
    })
    .await;
    // A change on it is followed.
    let truth = sim.handle.truth();
    let ks = breakable_of(truth.iter().find(|t| &t.name == b).unwrap());
    let kind = FluxKind::Kustomization;
    assert!(
        sim.handle
            .set_ready(b, kind, &ks.namespace, &ks.name, false)
    );
    until_index("a change on the opened cluster", &mut other, |index| {
        holds_the_truth(index, &sim, b)
    })
    .await;
    other.shutdown().await;
    session.shutdown().await;
    for c in collectors {
        c.stop.cancel();
        c.task.await.unwrap().unwrap();
    }
    sim.handle.shutdown().await;
}
