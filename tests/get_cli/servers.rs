//! The API servers a one-shot `get` reads: one answering garbage is named, throttling ones are
//! read exactly, and each connection is let go once its cluster is listed.

use crate::common;

use std::time::Duration;

use serde_json::Value;

use super::{run, shown_rows, text, truth_rows};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_answering_garbage_is_named_and_the_others_are_unaffected() {
    // Something that speaks HTTP but is not a Kubernetes API server.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    let body = "<html>It works!</html>";
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if socket.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let sim = common::start_with(|c| c.clusters = 2).await;
    let odd = sim.dir.path().join("kubeconfigs/odd/web.yaml");
    std::fs::create_dir_all(odd.parent().unwrap()).unwrap();
    std::fs::write(
        &odd,
        format!(
            "clusters:\n- name: web\n  cluster:\n    server: http://127.0.0.1:{port}\n\
             contexts:\n- name: webserver\n  context:\n    cluster: web\n"
        ),
    )
    .unwrap();
    let out = run(&["get", "-o", "json", "--timeout", "20s"], sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clusters = doc["clusters"].as_array().unwrap();
    let web = clusters
        .iter()
        .find(|c| c["cluster"] == "webserver")
        .unwrap();
    assert_eq!(web["state"], "server-error");
    assert!(
        web["error"]
            .as_str()
            .unwrap()
            .contains("not from a Kubernetes API server"),
        "{web}"
    );
    assert_eq!(clusters.iter().filter(|c| c["state"] == "live").count(), 2);
    sim.handle.shutdown().await;
}

/// A one-shot read lets each cluster's connection go once its kinds are listed: holding 2,000
/// connections (their TLS state and buffers) until the last cluster answers was a third of
/// `get`'s memory. A cluster still listing keeps its own; a watching session keeps every one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_read_closes_each_connection_once_its_cluster_is_listed() {
    let sim = common::start_with(|c| c.clusters = 5).await;
    let inventory = common::fleet_of(&sim);
    let open = |sim: &common::Sim| -> u64 {
        let stats = sim.handle.stats();
        let clusters = stats["clusters"].as_object().unwrap();
        clusters
            .values()
            .map(|c| c["connections"].as_u64().unwrap())
            .sum()
    };
    let mut engine = common::engine_settings();
    engine.list_only = true;
    let mut listed = fluxfleet::session::Session::kube(&inventory, &engine);
    assert!(listed.settle(Duration::from_secs(20)).await);
    let live = |s: &fluxfleet::session::Session| {
        let clusters = s.index.clusters();
        clusters
            .iter()
            .filter(|c| c.connection.phase == fluxfleet::fleet::Phase::Live)
            .count()
    };
    assert_eq!(live(&listed), inventory.clusters.len());
    // The server sees each connection end (it learns of it a moment after the client lets go);
    // the clusters stay shown live, as listed.
    common::until(&mut listed, Duration::from_secs(10), |_| {
        let n = open(&sim);
        (n > 0).then(|| format!("{n} connections still open after every cluster was listed"))
    })
    .await;
    assert_eq!(live(&listed), inventory.clusters.len());
    drop(listed);
    let mut watching = fluxfleet::session::Session::kube(&inventory, &common::engine_settings());
    assert!(watching.settle(Duration::from_secs(20)).await);
    common::until(&mut watching, Duration::from_secs(10), |_| {
        let n = open(&sim);
        (n != inventory.clusters.len() as u64).then(|| {
            format!(
                "{n} connections open for {} watched clusters",
                inventory.clusters.len()
            )
        })
    })
    .await;
    sim.handle.shutdown().await;
}

/// 60 contexts on servers that throttle as API Priority and Fairness does: two seats each, every
/// request held a while, the rest answered 429 with `Retry-After: 1`. A one-shot `get` still
/// reads every object exactly: it asks again when the server says, instead of backing off ever
/// further until the timeout (a real kube-apiserver v1.26 once left 6 of 60 contexts syncing
/// that way after 120 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_read_of_throttling_servers_finishes_exact() {
    let sim = common::start_with(|c| {
        c.clusters = 60;
        c.workspaces = 3;
        c.objects = 12;
        c.faults = fluxfleet_sim::faults::Spec::parse("throttle=100%:2,slow=100%:20ms").unwrap();
    })
    .await;
    let out = run(&["get", "-o", "json", "--timeout", "5m"], sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stats = sim.handle.stats();
    let throttled: u64 = stats["clusters"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c["throttled"].as_u64().unwrap())
        .sum();
    eprintln!("the servers turned {throttled} requests away");
    assert!(throttled > 100, "the servers throttled: {throttled}");
    let truth = sim.handle.truth();
    let fleet: Vec<_> = truth.iter().filter(|c| !c.management).collect();
    let clusters = doc["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), fleet.len());
    for c in clusters {
        assert_eq!(c["state"], "live", "{c}");
    }
    // Every object of the default kinds, once, with the truth's health.
    assert_eq!(shown_rows(&doc), truth_rows(fleet.into_iter()));
    sim.handle.shutdown().await;
}
