//! Each injectable fault looks to a client the way that failure looks on a real cluster.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::time::Duration;

use common::*;
use fluxfleet_sim::Faults;
use fluxfleet_sim::faults::Spec;
use futures::StreamExt;
use kube::api::{ListParams, WatchEvent, WatchParams};

#[tokio::test]
async fn an_unreachable_cluster_refuses_connections() {
    let sim = start_with(|c| c.faults = Spec::parse("unreachable=20%").unwrap()).await;
    let name = cluster_where(&sim, |c| c.faults.iter().any(|f| f == "unreachable"));
    let client = client(&sim.handle.files.fleet, &name).await;
    let err = api(&client, &kustomizations(), None)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(
        api_code(&err),
        None,
        "a transport error, not an API answer: {err}"
    );
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn expired_tokens_get_401_and_error5xx_gets_503() {
    let sim = start().await;
    let (name, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), None);
    assert!(ks.list(&ListParams::default()).await.is_ok());
    sim.handle.set_faults(
        &name,
        Faults {
            expired_token: Some(Duration::ZERO),
            ..Faults::default()
        },
    );
    assert_eq!(
        api_code(&ks.list(&ListParams::default()).await.unwrap_err()),
        Some(401)
    );
    sim.handle.set_faults(
        &name,
        Faults {
            error5xx: Some(1.0),
            ..Faults::default()
        },
    );
    let err = ks.list(&ListParams::default()).await.unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected a Status")
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (503, "ServiceUnavailable")
    );
    sim.handle.set_faults(&name, Faults::default());
    assert!(
        ks.list(&ListParams::default()).await.is_ok(),
        "the cluster recovers"
    );
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn a_slow_cluster_answers_late_and_a_flapping_one_cuts_watches() {
    let sim = start().await;
    let (name, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), None);
    sim.handle.set_faults(
        &name,
        Faults {
            slow: Some(Duration::from_millis(300)),
            ..Faults::default()
        },
    );
    let started = std::time::Instant::now();
    ks.list(&ListParams::default()).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the response waited for the fault's delay"
    );

    sim.handle.set_faults(
        &name,
        Faults {
            flap: Some(Duration::from_millis(100)),
            ..Faults::default()
        },
    );
    let rv = ks
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = ks
        .watch(&WatchParams::default().disable_bookmarks().timeout(60), &rv)
        .await
        .unwrap()
        .boxed();
    // The stream ends early with a transport error instead of running for its 60 s timeout.
    let end = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.next().await {
                None => return "ended",
                Some(Err(_)) => return "error",
                Some(Ok(WatchEvent::Error(e))) => panic!("unexpected API error {e:?}"),
                Some(Ok(_)) => {}
            }
        }
    })
    .await
    .expect("the flap cuts the watch");
    assert!(end == "ended" || end == "error");
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn port_per_cluster_serves_each_cluster_on_its_own_port() {
    let sim = start_with(|c| c.port_per_cluster = true).await;
    let kc = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let servers: Vec<String> = kc
        .clusters
        .iter()
        .map(|c| c.cluster.as_ref().unwrap().server.clone().unwrap())
        .collect();
    let mut ports: Vec<&str> = servers
        .iter()
        .map(|s| s.rsplit(':').next().unwrap())
        .collect();
    ports.sort();
    ports.dedup();
    assert_eq!(
        ports.len(),
        servers.len(),
        "a port per cluster: {servers:?}"
    );
    let (_, client) = first_cluster(&sim).await;
    assert!(
        !api(&client, &kustomizations(), None)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    sim.handle.shutdown().await;
}

/// A client for the server's root (no cluster prefix) with `token`.
async fn root_client(sim: &Sim, token: &str) -> kube::Client {
    let mut kc = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let context = kc.current_context.clone().unwrap();
    for c in &mut kc.clusters {
        c.cluster.as_mut().unwrap().server = Some(sim.handle.base_url.clone());
    }
    for user in &mut kc.auth_infos {
        user.auth_info.as_mut().unwrap().token = Some(token.to_string().into());
    }
    client_from(kc, &context).await
}

#[tokio::test]
async fn truth_and_stats_need_the_sim_token() {
    let sim = start().await;
    let name = sim.handle.cluster_names()[0].clone();
    let get = |path: String| http::Request::get(path).body(Vec::new()).unwrap();
    let kc = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let admin = kc.auth_infos[0].auth_info.clone().unwrap().token.unwrap();
    let admin = root_client(&sim, secrecy::ExposeSecret::expose_secret(&admin)).await;
    let err = admin
        .request::<serde_json::Value>(get("/sim/truth".into()))
        .await
        .unwrap_err();
    assert_eq!(
        api_code(&err),
        Some(401),
        "a cluster token does not open /sim"
    );

    let token = std::fs::read_to_string(&sim.handle.files.sim_token).unwrap();
    assert_eq!(token, sim.handle.sim_token());
    let observer = root_client(&sim, &token).await;
    let truth: serde_json::Value = observer
        .request(get(format!("/sim/truth?cluster={name}")))
        .await
        .unwrap();
    assert_eq!(truth["clusters"].as_array().unwrap().len(), 1);
    assert_eq!(
        truth["clusters"][0]["objects"].as_array().unwrap().len(),
        30
    );
    let stats: serde_json::Value = observer.request(get("/sim/stats".into())).await.unwrap();
    assert_eq!(stats["mutatingTotal"], 0);
    assert!(stats["clusters"][&name]["list"].as_u64().is_some());
    sim.handle.shutdown().await;
}
