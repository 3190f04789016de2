//! Discovering the fleet from the simulated management cluster (Cluster API): every workload
//! cluster with its workspace and labels, lifecycle states instead of connection errors, and a
//! broken kubeconfig Secret reported for that cluster alone — never its contents.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeMap;

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::process::Command;

async fn fluxfleet(args: &[&str], management: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .args(args)
        .arg("--kubeconfig")
        .arg(management)
        .args(["--management", "management"])
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}

fn capi_clusters() -> ApiResource {
    common::resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_management_cluster_yields_the_fleet_with_lifecycles_and_one_broken_secret() {
    let sim = common::start().await;
    let truth = sim.handle.truth();
    let workloads: BTreeMap<String, String> = truth
        .iter()
        .filter(|c| !c.management)
        .map(|c| (c.name.clone(), c.workspace.clone()))
        .collect();
    let names: Vec<&String> = workloads.keys().collect();
    let (broken, paused, provisioning) = (names[0].clone(), names[1].clone(), names[2].clone());
    let client = common::client(&sim.handle.files.management, "management").await;
    let ns = |name: &str| workloads[name].clone();
    let secrets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &ns(&broken),
        &ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    let leaked = "c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw=="; // "secret-token-that-must-not-leak"
    secrets
        .patch(
            &format!("{broken}-kubeconfig"),
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"value": leaked}})),
        )
        .await
        .unwrap();
    let clusters = |name: &str| -> Api<DynamicObject> {
        Api::namespaced_with(client.clone(), &ns(name), &capi_clusters())
    };
    clusters(&paused)
        .patch(
            &paused,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await
        .unwrap();
    clusters(&provisioning)
        .patch_status(
            &provisioning,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Provisioning",
                "initialization": {"controlPlaneInitialized": false}}})),
        )
        .await
        .unwrap();

    let management = sim.handle.files.management.clone();
    let out = fluxfleet(&["inventory", "-o", "json"], &management).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "a problem to report: {stderr}");
    assert!(
        stderr.contains(&broken) && stderr.contains("is not a kubeconfig"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!stdout.contains("secret-token") && !stderr.contains("secret-token"));
    assert!(!stdout.contains(leaked) && !stderr.contains(leaked));
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let listed: BTreeMap<String, &Value> = doc["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["cluster"].as_str().unwrap().to_string(), c))
        .collect();
    assert!(
        listed.contains_key("management"),
        "the management cluster stays in the fleet"
    );
    for (name, workspace) in &workloads {
        if *name == broken {
            assert!(!listed.contains_key(name), "{name} has a broken Secret");
            continue;
        }
        let c = listed
            .get(name)
            .unwrap_or_else(|| panic!("{name} discovered"));
        assert_eq!(c["workspace"], workspace.as_str(), "{c}");
        assert_eq!(c["labels"]["cluster.x-k8s.io/cluster-name"], name.as_str());
        assert_eq!(c["discovered"]["management"], json!(["management"]));
    }
    assert_eq!(
        listed[&paused]["discovered"]["lifecycle"]["state"],
        "paused"
    );
    assert_eq!(
        listed[&provisioning]["discovered"]["lifecycle"]["state"],
        "provisioning"
    );

    // Watching them: lifecycle states instead of connection errors; the rest live.
    let out = fluxfleet(
        &["get", "--summary", "-o", "json", "--timeout", "20s"],
        &management,
    )
    .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let states: BTreeMap<String, String> = doc["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cluster"].as_str().unwrap().to_string(),
                c["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(states[&paused], "paused");
    assert_eq!(states[&provisioning], "provisioning");
    for (name, state) in &states {
        if *name != paused && *name != provisioning {
            assert_eq!(state, "live", "{name}");
        }
    }
    assert_eq!(
        states.len(),
        workloads.len() - 1 + 1,
        "every cluster but the broken one, and the management cluster"
    );
    sim.handle.shutdown().await;
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kommander_management_cluster_names_the_workspaces() {
    let sim = common::start_with(|c| c.kommander = true).await;
    let config = fluxfleet::config::Config::defaults();
    let request = fluxfleet::inventory::Lookup {
        kubeconfigs: vec![sim.handle.files.management.clone()],
        ..Default::default()
    };
    let mut inventory = fluxfleet::inventory::load(&request, &config);
    let managements = [fluxfleet::k8s::management::Management {
        context: "management".into(),
        workspace_label: None,
        depth: 1,
    }];
    fluxfleet::k8s::management::extend(&mut inventory, &config.engine, &managements).await;
    assert_eq!(inventory.problems, []);
    let truth = sim.handle.truth();
    let workloads: Vec<_> = truth.iter().filter(|c| !c.management).collect();
    for c in &workloads {
        let spec = inventory
            .clusters
            .iter()
            .find(|s| s.name == c.name)
            .unwrap_or_else(|| panic!("{} discovered", c.name));
        let mut display = c.workspace.clone();
        display[..1].make_ascii_uppercase();
        assert_eq!(spec.workspace, format!("{display} workspace"), "{}", c.name);
    }
    assert_eq!(inventory.clusters.len(), workloads.len() + 1);
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_management_clusters_are_followed_and_the_cycle_is_caught() {
    let sim = common::start_with(|c| c.nested = true).await;
    let management = sim.handle.files.management.clone();
    let workloads: Vec<String> = sim.handle.cluster_names();
    let paths = |out: &std::process::Output| -> BTreeMap<String, Value> {
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["cluster"].as_str().unwrap().to_string(),
                    c["discovered"]["management"].clone(),
                )
            })
            .collect()
    };
    // One level: the second management cluster and the clusters it holds directly are not read.
    let out = fluxfleet(&["inventory", "-o", "json"], &management).await;
    let one = paths(&out);
    assert_eq!(one["management-eu"], json!(["management"]));
    assert!(workloads.iter().any(|w| !one.contains_key(w)), "{one:?}");

    let out = fluxfleet(
        &["inventory", "-o", "json", "--management-depth", "3"],
        &management,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains("a cycle: management ▸ management-eu ▸ management"),
        "{stderr}"
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "the cycle is a problem to report"
    );
    let all = paths(&out);
    for w in &workloads {
        let path = all
            .get(w)
            .unwrap_or_else(|| panic!("{w} discovered: {all:?}"));
        assert!(
            *path == json!(["management"]) || *path == json!(["management", "management-eu"]),
            "{w}: {path}"
        );
    }
    let below = workloads
        .iter()
        .filter(|w| all[*w] == json!(["management", "management-eu"]))
        .count();
    assert!(
        below > 0 && below < workloads.len(),
        "both levels hold clusters"
    );
    // Every cluster once: the cycle did not add the top cluster again.
    assert_eq!(all.len(), workloads.len() + 2);
    // Watching them: each cluster knows its management path, all are live.
    let out = fluxfleet(
        &[
            "get",
            "--summary",
            "-o",
            "json",
            "--management-depth",
            "3",
            "--timeout",
            "20s",
        ],
        &management,
    )
    .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for c in doc["clusters"].as_array().unwrap() {
        let name = c["cluster"].as_str().unwrap();
        assert_eq!(c["state"], "live", "{c}");
        match all.get(name).filter(|p| !p.is_null()) {
            Some(path) => assert_eq!(&c["management"], path, "{name}"),
            // The top management cluster comes from the kubeconfig.
            None => assert_eq!(c["management"], json!([]), "{name}"),
        }
    }
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_cluster_says_cluster_api_cannot_reach_it_either() {
    let sim = common::start_with(|c| {
        c.faults = fluxfleet_sim::faults::Spec::parse("unreachable=1%").unwrap();
    })
    .await;
    let down = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| c.faults.iter().any(|f| f == "unreachable"))
        .unwrap()
        .name;
    let management = sim.handle.files.management.clone();
    let out = fluxfleet(
        &["get", "--summary", "-o", "json", "--timeout", "10s"],
        &management,
    )
    .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = doc["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cluster"] == down.as_str())
        .unwrap()
        .clone();
    assert_eq!(c["state"], "unreachable", "{c}");
    assert!(
        c["error"]
            .as_str()
            .unwrap()
            .contains("RemoteConnectionProbe is False"),
        "{c}"
    );
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_management_source_in_the_config_file_discovers_the_fleet() {
    let sim = common::start().await;
    let file = sim.handle.files.management.display().to_string();
    let user = format!(
        "[[sources]]\nkubeconfig = \"{file}\"\nmanagement = \"management\"\nworkspace_label = \"env\"\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, user).unwrap();
    let sources = fluxfleet::session::resolve::Sources {
        config: Some(path),
        ..Default::default()
    };
    let resolved = fluxfleet::session::resolve::resolve(&sources).await;
    assert_eq!(resolved.warnings, Vec::<String>::new());
    assert!(resolved.clean);
    let inventory = resolved.inventory;
    let truth = sim.handle.truth();
    for c in truth.iter().filter(|c| !c.management) {
        let spec = inventory
            .clusters
            .iter()
            .find(|s| s.name == c.name)
            .unwrap();
        // The workspace comes from the label named in the source.
        assert_eq!(Some(&spec.workspace), spec.labels.get("env"), "{}", c.name);
    }
    sim.handle.shutdown().await;
}

/// Two management clusters followed at once, each gaining clusters at the same moment: every
/// object is filed under its own cluster. (Followers name clusters by key; only the index gives
/// ids, so one follower's cluster can never take the id another one's was waiting for.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_management_clusters_adding_clusters_at_once_file_every_object_under_its_own() {
    use fluxfleet::k8s::management::{Management, extend};
    use fluxfleet::session::Session;
    use std::time::Duration;

    // Nested: the top management cluster holds the even clusters, the other one the odd.
    let sim = common::start_with(|c| c.nested = true).await;
    let mut config = fluxfleet::config::Config::defaults();
    config.engine.connect_timeout = Duration::from_secs(5);
    config.engine.max_backoff = Duration::from_millis(500);
    config.engine.discovery_interval = Duration::from_millis(100);
    let mut kubeconfigs = vec![sim.handle.files.management.clone()];
    kubeconfigs.extend(sim.handle.files.managements_below.iter().cloned());
    let request = fluxfleet::inventory::Lookup {
        kubeconfigs,
        ..Default::default()
    };
    let mut inventory = fluxfleet::inventory::load(&request, &config);
    let managements = ["management", "management-eu"].map(|context| Management {
        context: context.into(),
        workspace_label: None,
        depth: 1,
    });
    extend(&mut inventory, &config.engine, &managements).await;
    let kube = fluxfleet::k8s::Kube::new(&inventory, &config.engine).following(&managements);
    let mut live = Session::start(vec![Box::new(kube)]);
    assert!(live.settle(Duration::from_secs(20)).await);

    let names = sim.handle.cluster_names();
    let (top, below) = (&names[0], &names[1]);
    let objects = |live: &Session, name: &str| {
        let c = live.index.cluster_named(name)?;
        (c.connection.is_complete()).then(|| c.objects.clone())
    };
    assert!(objects(&live, top).is_some() && objects(&live, below).is_some());
    assert_ne!(
        objects(&live, top),
        objects(&live, below),
        "the two templates must be told apart by their objects"
    );
    // Both management clusters gain clusters at the same moment, three times over; each new
    // cluster reaches the same server as its template.
    let mut joined = Vec::new();
    for round in 0..3 {
        for (template, on) in [(top, "top"), (below, "eu")] {
            let name = format!("joined-{on}-{round}");
            assert!(sim.handle.copy_capi_cluster(template, &name), "{name}");
            joined.push((name, template.clone()));
        }
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        live.pump(Duration::from_millis(200)).await;
        let filed = joined.iter().all(|(name, template)| {
            objects(&live, name).is_some() && objects(&live, name) == objects(&live, template)
        });
        if filed {
            break;
        }
        if std::time::Instant::now() > deadline {
            for (name, template) in &joined {
                let c = live.index.cluster_named(name);
                eprintln!(
                    "{name} (copy of {template}): {:?}, {} objects, same as its template: {}",
                    c.map(|c| c.connection.phase),
                    c.map_or(0, |c| c.objects.len()),
                    objects(&live, name) == objects(&live, template)
                );
            }
            panic!("a joined cluster never showed its own objects");
        }
    }
    // The templates still hold their own.
    assert_ne!(objects(&live, top), objects(&live, below));
    live.shutdown().await;
    sim.handle.shutdown().await;
}
