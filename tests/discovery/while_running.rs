//! Discovery while fluxfleet runs: clusters join, leave and reconnect with a rotated Secret.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_join_leave_and_reconnect_with_a_rotated_secret_while_running() {
    use fluxfleet::fleet::Phase;
    use fluxfleet::k8s::management::{Management, extend};
    use fluxfleet::session::Session;
    use std::time::Duration;

    let sim = common::start().await;
    let mut config = fluxfleet::config::Config::defaults();
    config.engine.connect_timeout = Duration::from_secs(5);
    config.engine.max_backoff = Duration::from_millis(500);
    config.engine.discovery_interval = Duration::from_millis(200);
    let request = fluxfleet::inventory::Lookup {
        kubeconfigs: vec![sim.handle.files.management.clone()],
        ..Default::default()
    };
    let mut inventory = fluxfleet::inventory::load(&request, &config);
    let managements = [Management {
        context: "management".into(),
        workspace_label: None,
        depth: 1,
    }];
    extend(&mut inventory, &config.engine, &managements).await;
    assert_eq!(inventory.problems, []);
    let kube = fluxfleet::k8s::Kube::new(&inventory, &config.engine).following(&managements);
    let mut live = Session::start(vec![Box::new(kube)]);
    assert!(live.settle(Duration::from_secs(20)).await);
    let names = sim.handle.cluster_names();
    let (template, leaving, rotated) = (&names[0], &names[1], &names[2]);
    let phase =
        |live: &Session, name: &str| live.index.cluster_named(name).map(|c| c.connection.phase);

    // Join: a new Cluster and Secret on the management cluster.
    assert!(sim.handle.copy_capi_cluster(template, "newcomer"));
    // Leave: a Cluster deleted there.
    assert!(sim.handle.remove_capi_cluster(leaving));
    // Rotate: the Secret of another one now holds a token the API server refuses.
    let client = common::client(&sim.handle.files.management, "management").await;
    let truth = sim.handle.truth();
    let ns = truth
        .iter()
        .find(|c| &c.name == rotated)
        .unwrap()
        .workspace
        .clone();
    let secrets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &ns,
        &ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    let secret = secrets.get(&format!("{rotated}-kubeconfig")).await.unwrap();
    let encoded = secret.data["data"]["value"].as_str().unwrap().to_string();
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let original = String::from_utf8(b64.decode(&encoded).unwrap()).unwrap();
    let wrong: String = original
        .lines()
        .map(|l| match l.split_once("token:") {
            Some((indent, _)) => format!("{indent}token: not-the-right-token"),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(wrong, original, "the kubeconfig has a token to rotate");
    let rotate = |text: &str| Patch::Merge(json!({"data": {"value": b64.encode(text)}}));
    let name = format!("{rotated}-kubeconfig");
    secrets
        .patch(&name, &PatchParams::default(), &rotate(&wrong))
        .await
        .unwrap();

    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        live.pump(Duration::from_millis(100)).await;
        let joined = phase(&live, "newcomer") == Some(Phase::Live);
        let left = live.index.cluster_named(leaving).is_none();
        let refused = phase(&live, rotated) == Some(Phase::Unauthorized);
        if joined && left && refused {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "joined {joined}, left {left}, rotated credentials refused {refused}"
        );
    }
    let newcomer = live.index.cluster_named("newcomer").unwrap();
    assert!(
        !newcomer.objects.is_empty(),
        "the newcomer's Flux objects are in the fleet"
    );
    // The right credentials again: the cluster reconnects.
    secrets
        .patch(&name, &PatchParams::default(), &rotate(&original))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while phase(&live, rotated) != Some(Phase::Live) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            phase(&live, rotated)
        );
        live.pump(Duration::from_millis(100)).await;
    }
    assert!(live.index.settled());
    live.shutdown().await;
    sim.handle.shutdown().await;
}
