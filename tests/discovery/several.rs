//! More than one management cluster: nested ones followed (a cycle caught), and two adding clusters
//! at once, every object filed under its own cluster.

use super::*;

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
