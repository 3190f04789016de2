//! A NATS failover as it happens to a team: a JetStream cluster of three keeping everything
//! three times, a collector given one node's URL, a reader following another's, and one-shot
//! reads (`get --nats`) one after another beside it. Each node in turn is killed while the fleet
//! changes; the followed view is compared with the truth every half second and every one-shot
//! read's answer as it comes: no object may ever be missing from either (one may be stale for a
//! moment, its cluster saying so), no read may come back empty, and the view equals the truth
//! again once the bus has settled.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::bus::{Running, start_collector_with, truth, until_truth};
use common::nats::NatsCluster;
use fluxfleet::bus;
use fluxfleet::session::Session;
use fluxfleet_sim::facts::FluxKind;

/// Every object the view shows, without its health: what "missing" is counted on.
fn keys(session: &Session) -> BTreeSet<(String, String, String, String)> {
    session
        .index
        .clusters()
        .iter()
        .filter(|c| !c.retired)
        .flat_map(|c| {
            c.objects.values().map(|o| {
                (
                    c.info.name.clone(),
                    o.key.kind.as_str().to_string(),
                    o.key.namespace.to_string(),
                    o.key.name.to_string(),
                )
            })
        })
        .collect()
}

fn view(session: &Session) -> common::bus::View {
    common::bus::view_of(&session.index)
}

/// One read as `get --nats` makes it, given as long as `get`'s default timeout: how many of
/// `all` it lacked, or why it gave no answer.
async fn one_shot(
    url: &str,
    all: &BTreeSet<(String, String, String, String)>,
) -> Result<usize, String> {
    let bus = bus::reader::Bus::connect(&options(url))
        .await
        .map_err(|e| e.to_string())?;
    let mut session = Session::start(vec![Box::new(bus)]);
    let settled = session.settle(Duration::from_secs(120)).await;
    let shown = keys(&session);
    let lacking: Vec<_> = all.difference(&shown).collect();
    let lacked = lacking.len();
    if lacked > 0 {
        let clusters: BTreeSet<&String> = lacking.iter().map(|k| &k.0).collect();
        eprintln!(
            "a one-shot read lacked {lacked} objects of {clusters:?}, e.g. {:?}",
            lacking.first()
        );
        for c in session
            .index
            .clusters()
            .iter()
            .filter(|c| clusters.contains(&c.info.name))
        {
            eprintln!(
                "  {}: {} objects shown, {:?}, retired {}",
                c.info.name,
                c.objects.len(),
                c.connection.phase,
                c.retired
            );
        }
    }
    session.shutdown().await;
    match settled {
        true => Ok(lacked),
        false => Err(format!(
            "not settled within 120 s, {lacked} objects lacking"
        )),
    }
}

/// One-shot reads through `url`, one begun every half second until `stop`, each running as long
/// as it takes: for each, how many of `all` it lacked, or why it gave no answer.
fn one_shot_reads(
    url: String,
    all: BTreeSet<(String, String, String, String)>,
    stop: tokio_util::sync::CancellationToken,
) -> tokio::task::JoinHandle<Vec<Result<usize, String>>> {
    tokio::spawn(async move {
        let all = std::sync::Arc::new(all);
        let mut reads = Vec::new();
        let mut every = tokio::time::interval(Duration::from_millis(500));
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = every.tick() => {
                    let (url, all) = (url.clone(), all.clone());
                    reads.push(tokio::spawn(async move { one_shot(&url, &all).await }));
                }
            }
        }
        let mut answers = Vec::new();
        for read in reads {
            answers.push(read.await.unwrap());
        }
        answers
    })
}

fn options(url: &str) -> bus::Options {
    bus::Options {
        url: url.to_string(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_never_loses_an_object_while_each_node_in_turn_is_killed() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let mut cluster = NatsCluster::start(3).await;
    let urls: Vec<String> = cluster.url.split(',').map(str::to_string).collect();
    let sim = common::start_with(|c| {
        c.clusters = 50;
        c.workspaces = 2;
        c.objects = 30;
        c.bookmark_interval = Duration::from_secs(5);
    })
    .await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    // The collector knows node 1 only, the reader node 2 only: each learns the others from
    // the servers, as NATS clients do.
    let collector: Running = start_collector_with("c1", &options(&urls[0]), &inventory, 3);
    let published = "the collector has published the fleet";
    until_truth(
        published,
        &options(&urls[1]),
        &sim,
        &names,
        Duration::from_secs(60),
    )
    .await;
    // Every store is kept on all three nodes (`collect --replicas 3`).
    let js = async_nats::jetstream::new(bus::connect(&options(&urls[1]), "test").await.unwrap());
    for stream in common::nats::STREAMS {
        let info = js.get_stream(stream).await.unwrap().get_info().await;
        assert_eq!(info.unwrap().config.num_replicas, 3, "{stream}");
    }
    drop(js);
    let mut reader = Session::start(vec![Box::new(
        bus::reader::Bus::connect(&options(&urls[1])).await.unwrap(),
    )]);
    let truth_now = || truth(&sim, &names);
    let deadline = Instant::now() + Duration::from_secs(60);
    while view(&reader) != truth_now() {
        assert!(Instant::now() < deadline, "the reader never saw the fleet");
        reader.pump(Duration::from_millis(500)).await;
    }
    let all = keys(&reader);
    let breakable: Vec<(String, String, String)> = sim
        .handle
        .truth()
        .into_iter()
        .flat_map(|c| {
            let cluster = c.name.clone();
            c.objects
                .into_iter()
                .filter(common::truth::breakable)
                .map(move |o| (cluster.clone(), o.namespace, o.name))
        })
        .take(6)
        .collect();
    for node in 0..3 {
        // One-shot reads through a node that stays up, from before the node goes until the view
        // has agreed again.
        let stop_reading = tokio_util::sync::CancellationToken::new();
        let one_shots = one_shot_reads(
            urls[(node + 1) % 3].clone(),
            all.clone(),
            stop_reading.clone(),
        );
        cluster.stop(node);
        let started = Instant::now();
        let mut agreed = None;
        // Changes while the node is down: some of them sent as it went.
        for (i, (c, ns, name)) in breakable.iter().enumerate() {
            let ready = (i + node) % 2 == 0;
            sim.handle
                .set_ready(c, FluxKind::Kustomization, ns, name, ready);
        }
        sim.handle.set_churn(10.0);
        while started.elapsed() < Duration::from_secs(60) {
            reader.pump(Duration::from_millis(500)).await;
            if started.elapsed() > Duration::from_secs(8) {
                sim.handle.set_churn(0.0);
            }
            let shown = keys(&reader);
            let missing: Vec<_> = all.difference(&shown).take(5).collect();
            assert!(
                missing.is_empty(),
                "node {} lost, after {:?}: {} objects missing from the reader's view, {missing:?}",
                node + 1,
                started.elapsed(),
                all.len() - all.intersection(&shown).count()
            );
            if agreed.is_none() && view(&reader) == truth_now() {
                agreed = Some(started.elapsed());
                break;
            }
        }
        if agreed.is_none() {
            let fresh = common::bus::read(&options(&urls[(node + 1) % 3]))
                .await
                .unwrap();
            panic!(
                "node {} lost: the view never came back to the truth: {:?}; a new reader's: {:?}",
                node + 1,
                common::bus::difference(&view(&reader), &truth_now()),
                common::bus::difference(&fresh, &truth_now()),
            );
        }
        eprintln!("node {} lost: the view agreed after {agreed:?}", node + 1);
        stop_reading.cancel();
        let answers = one_shots.await.unwrap();
        // Every read answers, and answers whole.
        let short: Vec<_> = answers.iter().filter(|a| !matches!(a, Ok(0))).collect();
        eprintln!(
            "node {} lost: {} one-shot reads, {} short",
            node + 1,
            answers.len(),
            short.len()
        );
        assert!(
            !answers.is_empty(),
            "node {}: no one-shot read ended",
            node + 1
        );
        assert!(
            short.is_empty(),
            "node {} lost: one-shot reads that lacked objects (how many) or failed: {short:?}",
            node + 1
        );
        cluster.restart(node);
        cluster.until_jetstream().await;
        // Back with all it missed before the next goes: two lost at once is a lost quorum.
        common::nats::until_current(&options(&cluster.url)).await;
    }
    assert!(
        !collector.task.is_finished(),
        "the collector stopped by itself"
    );
    collector.stop.cancel();
    collector.task.await.unwrap().unwrap();
    reader.shutdown().await;
    sim.handle.shutdown().await;
}
