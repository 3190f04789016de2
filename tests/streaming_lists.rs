//! Streaming lists against the simulated fleet over real HTTPS: each kind listed by one watch
//! with `sendInitialEvents=true` where the server serves it, exact while objects change; a
//! Kubernetes before 1.27, one with the `WatchList` gate off, one whose watch cache fails them
//! (an old etcd) and a proxy that drops the parameters each listed in pages and said so; `engine.lists = "paged"` never streams; what
//! `get -o json` says of each cluster.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::engine::until_truth;

use std::time::Duration;

use fluxfleet::fleet::{Lists, Phase};
use fluxfleet::session::Session;
use fluxfleet_sim::Faults;

use common::{Sim, engine_settings, fleet_of};

/// Pumps until every cluster is live and has said how its kinds were listed.
async fn until_listed(live: &mut Session, names: &[String], within: Duration) {
    let deadline = std::time::Instant::now() + within;
    loop {
        live.pump(Duration::from_millis(200)).await;
        let said = names.iter().all(|n| {
            live.index
                .cluster_named(n)
                .is_some_and(|c| c.connection.phase == Phase::Live && c.connection.lists.is_some())
        });
        if said {
            return;
        }
        let states: Vec<_> = names
            .iter()
            .map(|n| live.index.cluster_named(n).map(|c| c.connection.clone()))
            .collect();
        assert!(
            std::time::Instant::now() < deadline,
            "not every cluster listed: {states:#?}"
        );
    }
}

fn count(stats: &serde_json::Value, cluster: &str, what: &str) -> u64 {
    stats["clusters"][cluster][what].as_u64().unwrap()
}

/// The lists a cluster answers besides its kinds': where the Flux Operator runs, its FluxReport
/// and FluxInstance, one object each, read by name before the report is watched.
fn reads_of_the_report(truth: &[fluxfleet_sim::TruthCluster], name: &str) -> u64 {
    let cluster = truth.iter().find(|c| c.name == name).unwrap();
    if cluster.operator { 2 } else { 0 }
}

/// The fleet with one cluster of each kind of server that does not stream lists.
async fn mixed_fleet() -> (Sim, Vec<String>) {
    let sim = common::start_with(|c| {
        c.clusters = 7;
        c.churn = 30.0;
        // A proxy that dropped the parameters is found at the first plain bookmark.
        c.bookmark_interval = Duration::from_millis(300);
    })
    .await;
    let names = sim.handle.cluster_names();
    let faults = [
        Faults {
            old_kube: true,
            ..Faults::default()
        },
        Faults {
            no_watch_list: true,
            ..Faults::default()
        },
        Faults {
            strips_watch_list: true,
            ..Faults::default()
        },
        Faults {
            old_etcd: true,
            ..Faults::default()
        },
    ];
    for (name, f) in names.iter().zip(faults) {
        assert!(sim.handle.set_faults(name, f));
    }
    (sim, names)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kinds_are_streamed_where_served_paged_where_not_and_exact_either_way() {
    let (sim, names) = mixed_fleet().await;
    let mut live = Session::kube(&fleet_of(&sim), &engine_settings());
    until_listed(&mut live, &names, Duration::from_secs(30)).await;
    live.pump(Duration::from_secs(1)).await;
    sim.handle.set_churn(0.0);
    until_truth(&mut live, &sim, Duration::from_secs(20)).await;
    let lists = |n: &str| live.index.cluster_named(n).unwrap().connection.lists;
    assert_eq!(lists(&names[0]), Some(Lists::Refused), "before 1.27");
    assert_eq!(lists(&names[1]), Some(Lists::Refused), "WatchList gate off");
    assert_eq!(
        lists(&names[2]),
        Some(Lists::Unmarked),
        "parameters dropped"
    );
    assert_eq!(lists(&names[3]), Some(Lists::Refused), "failed by an ERROR");
    let stats = sim.handle.stats();
    let kinds = live
        .index
        .cluster_named(&names[4])
        .unwrap()
        .connection
        .watching
        .len() as u64;
    assert!(kinds >= 5, "{kinds} kinds watched");
    let truth = sim.handle.truth();
    for name in &names[4..] {
        assert_eq!(lists(name), Some(Lists::Streaming), "{name}");
        // One request a kind: the streaming list is the watch; nothing is listed in pages.
        assert_eq!(count(&stats, name, "streamed"), kinds, "{name}: {stats:#}");
        assert_eq!(
            count(&stats, name, "list"),
            reads_of_the_report(&truth, name),
            "{name}: {stats:#}"
        );
    }
    for name in &names[..4] {
        // Asked once a kind by streaming where the server took it (and failed it).
        let streamed = if name == &names[3] { kinds } else { 0 };
        assert_eq!(
            count(&stats, name, "streamed"),
            streamed,
            "{name}: {stats:#}"
        );
        assert!(count(&stats, name, "list") >= kinds, "{name}: {stats:#}");
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_kind_relists_by_streaming_after_410_gone() {
    let sim = common::start_with(|c| {
        c.clusters = 2;
        c.churn = 20.0;
    })
    .await;
    let names = sim.handle.cluster_names();
    let mut live = Session::kube(&fleet_of(&sim), &engine_settings());
    until_listed(&mut live, &names, Duration::from_secs(20)).await;
    let streamed = |sim: &Sim| -> u64 {
        let stats = sim.handle.stats();
        names.iter().map(|n| count(&stats, n, "streamed")).sum()
    };
    let before = streamed(&sim);
    for _ in 0..3 {
        for name in &names {
            sim.handle.compact(name);
        }
        live.pump(Duration::from_millis(300)).await;
    }
    sim.handle.set_churn(0.0);
    until_truth(&mut live, &sim, Duration::from_secs(20)).await;
    assert!(
        streamed(&sim) > before,
        "watches sent back to list listed again by streaming"
    );
    let (stats, truth) = (sim.handle.stats(), sim.handle.truth());
    for name in &names {
        let reads = reads_of_the_report(&truth, name);
        assert_eq!(count(&stats, name, "list"), reads, "{stats:#}");
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_configured_paged_are_never_streamed() {
    let sim = common::start_with(|c| c.clusters = 3).await;
    let names = sim.handle.cluster_names();
    let mut settings = engine_settings();
    settings.streaming_lists = false;
    let mut live = Session::kube(&fleet_of(&sim), &settings);
    until_listed(&mut live, &names, Duration::from_secs(20)).await;
    until_truth(&mut live, &sim, Duration::from_secs(20)).await;
    let stats = sim.handle.stats();
    for name in &names {
        let c = live.index.cluster_named(name).unwrap();
        assert_eq!(c.connection.lists, Some(Lists::Paged));
        assert_eq!(count(&stats, name, "streamed"), 0, "{stats:#}");
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_says_how_each_cluster_was_listed() {
    use tokio::io::AsyncBufReadExt;
    let (sim, names) = mixed_fleet().await;
    sim.handle.set_churn(0.0);
    let mut child = common::fluxfleet()
        .args([
            "get",
            "--watch",
            "--summary",
            "-o",
            "ndjson",
            "--kubeconfig-dir",
        ])
        .arg(sim.dir.path().join("kubeconfigs"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // The last line said of each cluster, until every one is live and says how it was listed.
    let mut said = std::collections::BTreeMap::new();
    let all_said = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["type"] == "cluster" {
                let name = v["cluster"].as_str().unwrap().to_string();
                said.insert(name, v);
            }
            let done = names.iter().all(|n| {
                said.get(n)
                    .is_some_and(|c| c["state"] == "live" && c["lists"].is_string())
            });
            if done {
                return;
            }
        }
    })
    .await;
    let _ = child.kill().await;
    assert!(all_said.is_ok(), "{said:#?}");
    let of = |name: &str| {
        let c = &said[name];
        (c["lists"].as_str(), c["listsWhy"].as_str())
    };
    let refused = Some("the server refused streaming lists");
    assert_eq!(of(&names[0]), (Some("paged"), refused));
    assert_eq!(of(&names[1]), (Some("paged"), refused));
    assert_eq!(of(&names[3]), (Some("paged"), refused));
    assert_eq!(
        of(&names[2]),
        (
            Some("paged"),
            Some("the server did not mark the end of the initial events")
        )
    );
    for name in &names[4..] {
        assert_eq!(of(name), (Some("streaming"), None), "{name}");
    }
    // Read once, every cluster is listed in pages, as kubectl lists: no watch is opened.
    let out = common::fluxfleet()
        .args(["get", "-o", "json", "--kubeconfig-dir"])
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for c in json["clusters"].as_array().unwrap() {
        assert_eq!(c["lists"], "paged", "{c}");
    }
    sim.handle.shutdown().await;
}
