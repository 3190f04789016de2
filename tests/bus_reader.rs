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
use common::truth::{breakable_of, seen};
use fluxfleet::bus::{self, reader::Bus};
use fluxfleet::fleet::index::Change;
use fluxfleet::fleet::{ClusterEntry, Counted, Health, Index, Phase, SourceId};
use fluxfleet::session::Session;
use fluxfleet::source::{Sink, Source};
use fluxfleet_sim::facts::FluxKind;

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

/// Where a cluster's counts differ from the truth's, if they do.
fn counts_differ(index: &Index, sim: &common::Sim, name: &str) -> Option<String> {
    let truth = sim.handle.truth();
    let of = truth.iter().find(|c| c.name == name).unwrap();
    let c = cluster(index, name);
    for health in Health::ALL {
        let want = of
            .objects
            .iter()
            .filter(|o| seen(o.health) == health)
            .count() as u32;
        if c.health.get(health) != want {
            return Some(format!(
                "{name}: {} {health:?}, the truth {want}",
                c.health.get(health)
            ));
        }
    }
    None
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

/// Summarized: counted by its collector's summary, holding only its not-ready objects.
fn summarized(index: &Index, name: &str) -> Option<String> {
    let c = cluster(index, name);
    let only_failures = c.held && c.objects.values().all(|o| o.health.is_not_ready());
    (c.counted != Counted::Report || !only_failures || c.connection.phase != Phase::Summary).then(
        || {
            format!(
                "{name}: {:?}, {} objects, {}",
                c.counted,
                c.objects.len(),
                c.connection.phase
            )
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summarizing_reader_counts_every_cluster_and_holds_only_what_is_opened() {
    let nats = NatsServer::start();
    let (sim, names, collector) = published(&nats, 12, 10).await;
    let bus = Bus::connect(&options(&nats)).await.unwrap().summarizing(2);
    let mut session = Session::start(vec![Box::new(bus)]);
    assert!(session.settle(Duration::from_secs(30)).await);
    let names: Vec<String> = names.into_iter().collect();
    until_index(
        "every cluster counted as the truth",
        &mut session,
        |index| {
            names
                .iter()
                .find_map(|n| summarized(index, n).or_else(|| counts_differ(index, &sim, n)))
        },
    )
    .await;

    // Opened: its objects read from the bus and held; two opened at most.
    let info = |session: &Session, name: &str| cluster(&session.index, name).info.clone();
    let (a, b, c) = (&names[0], &names[1], &names[2]);
    session.reader().open(&info(&session, a));
    until_index(
        "the opened cluster holds its objects",
        &mut session,
        |index| {
            holds_the_truth(index, &sim, a).or_else(|| {
                (cluster(index, a).connection.phase != Phase::Live).then(|| "not live".into())
            })
        },
    )
    .await;
    session.reader().open(&info(&session, b));
    session.reader().open(&info(&session, c));
    until_index("the least recently opened let go", &mut session, |index| {
        summarized(index, a)
            .or_else(|| counts_differ(index, &sim, a))
            .or_else(|| holds_the_truth(index, &sim, b))
            .or_else(|| holds_the_truth(index, &sim, c))
    })
    .await;

    // The fleet changes: an opened cluster's object, and a summarized cluster's counts.
    let truth = sim.handle.truth();
    let ready_ks = |name: &str| breakable_of(truth.iter().find(|t| t.name == name).unwrap());
    for name in [c, &names[5]] {
        let ks = ready_ks(name);
        let kind = FluxKind::Kustomization;
        assert!(
            sim.handle
                .set_ready(name, kind, &ks.namespace, &ks.name, false)
        );
    }
    until_index("changes followed", &mut session, |index| {
        holds_the_truth(index, &sim, c).or_else(|| counts_differ(index, &sim, &names[5]))
    })
    .await;
    session.shutdown().await;
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

/// Past `engine.summary_above`, what needs only counts summarizes (`get --summary`, the TUI),
/// and what lists objects reads every one (`get`): a large bus is never half-listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_summary_above_counts_are_summarized_and_listings_are_whole() {
    let nats = NatsServer::start();
    let (sim, names, collector) = published(&nats, 6, 5).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("fluxfleet.toml");
    std::fs::write(&config, "[engine]\nsummary_above = 2\n").unwrap();
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let run = |args: &'static [&'static str]| {
        let mut cmd = common::bus::command(&kubeconfigs);
        cmd.env("FLUXFLEET_CONFIG", &config)
            .args(["--nats", &nats.url])
            .args(args);
        async move {
            let out = cmd.output().await.unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
        }
    };
    let summary = run(&["get", "--summary", "-o", "json", "--timeout", "20s"]).await;
    assert_eq!(
        summary["fleet"]["states"]["summary"],
        names.len(),
        "{summary}"
    );
    let listed = run(&["get", "-o", "json", "--timeout", "20s"]).await;
    let objects: usize = sim
        .handle
        .truth()
        .iter()
        .filter(|c| names.contains(&c.name))
        .map(|c| c.objects.len())
        .sum();
    let items = listed["objects"].as_array().map_or(0, Vec::len);
    assert_eq!(items, objects, "get lists every object");
    collector.stop.cancel();
    collector.task.await.unwrap().unwrap();
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
    settings.watch = fluxfleet::config::Watch::Summary;
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
