//! A reader that summarizes: every cluster counted by its collector as the truth is, holding
//! only what is opened, and past `engine.summary_above` counts summarized, listings whole.

use crate::common;

use std::time::Duration;

use common::nats::NatsServer;
use common::truth::{breakable_of, seen};
use fluxfleet::bus::reader::Bus;
use fluxfleet::fleet::{Counted, Health, Index, Phase};
use fluxfleet::session::Session;
use fluxfleet_sim::facts::FluxKind;

use super::{cluster, holds_the_truth, options, published, until_index};

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
