//! What one management cluster yields: the fleet with its lifecycles and a broken Secret, Kommander's
//! workspaces, a cluster Cluster API cannot reach, and the management source of a config file.

use super::*;

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
