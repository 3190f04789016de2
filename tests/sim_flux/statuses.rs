//! What the simulated fleet serves means what Flux means: statuses as its truth says, the same
//! fleet for the same seed, failure reasons each controller really emits, and the simulator's Flux
//! facts agreeing with the client's tables.

use super::*;

#[tokio::test]
async fn served_statuses_mean_what_the_truth_says() {
    let sim = start_with(|c| c.clusters = 12).await;
    let truth = sim.handle.truth();
    let mut seen = std::collections::BTreeMap::<Health, usize>::new();
    for cluster in truth.iter().filter(|c| !c.management) {
        let client = client(&sim.handle.files.fleet, &cluster.name).await;
        let mut listed = 0;
        for (group, version, kind, plural) in FLUX_KINDS {
            let items = api(&client, &resource(group, version, kind, plural), None)
                .list(&ListParams::default())
                .await
                .unwrap()
                .items;
            for obj in items {
                let value = serde_json::to_value(&obj).unwrap();
                let name = obj.metadata.name.clone().unwrap();
                let t = cluster
                    .objects
                    .iter()
                    .find(|o| o.kind == kind && o.name == name)
                    .expect("listed object is in the truth");
                let computed = health_of(FluxKind::from_kind(kind).unwrap(), &value);
                assert_eq!(
                    computed,
                    meant(t.health),
                    "{}/{kind}/{name}: served status disagrees with the truth",
                    cluster.name
                );
                *seen.entry(computed).or_default() += 1;
                listed += 1;
            }
        }
        assert_eq!(
            listed,
            cluster.objects.len(),
            "{}: every object is listed",
            cluster.name
        );
    }
    for h in [Health::Ready, Health::Failed, Health::Suspended] {
        assert!(
            seen.get(&h).copied().unwrap_or(0) > 0,
            "the fleet shows some {h} objects: {seen:?}"
        );
    }
    assert!(
        seen[&Health::Ready] > seen.values().sum::<usize>() / 2,
        "mostly ready: {seen:?}"
    );
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn the_same_seed_gives_the_same_fleet() {
    let a = start().await;
    let b = start().await;
    // Cluster, kind, name and health of every object: the fleet's content without versions.
    let strip = |t: Vec<fluxfleet_sim::TruthCluster>| -> Vec<String> {
        t.into_iter()
            .flat_map(|c| {
                let cluster = c.name;
                c.objects
                    .into_iter()
                    .map(move |o| format!("{cluster}/{}/{}={}", o.kind, o.name, o.health))
            })
            .collect()
    };
    assert_eq!(strip(a.handle.truth()), strip(b.handle.truth()));
    a.handle.shutdown().await;
    b.handle.shutdown().await;
}

/// Every failure the simulator produces carries a reason the controller of that kind really
/// emits (FACTS §3.1): no Kustomization reason on a GitRepository, no Helm rollback on a source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failure_has_a_reason_its_own_controller_emits() {
    use fluxfleet::config::Config;
    use std::collections::BTreeSet;

    let _large = crate::common::one_large_fleet_at_a_time().await;
    let sim = start_with(|c| {
        c.clusters = 120;
        c.workspaces = 8;
    })
    .await;
    let inventory = fluxfleet::inventory::load(
        &fluxfleet::inventory::Lookup {
            kubeconfigs: vec![sim.handle.files.fleet.clone()],
            ..Default::default()
        },
        &Config::defaults(),
    );
    let mut engine = Config::defaults().engine;
    engine.kinds = FluxKind::ALL.to_vec();
    let mut live = fluxfleet::session::Session::kube(&inventory, &engine);
    assert!(live.settle(Duration::from_secs(60)).await);
    let source = [
        "GitOperationFailed",
        "AuthenticationFailed",
        "OCIArtifactPullFailed",
        "IndexationFailed",
        "ChartPullError",
        "InvalidChartReference",
        "BucketOperationFailed",
        "URLInvalid",
        "StatOperationFailed",
        "ReconciliationFailed",
    ];
    let allowed = |kind: FluxKind| -> Vec<&str> {
        match kind {
            FluxKind::Kustomization => vec![
                "BuildFailed",
                "HealthCheckFailed",
                "DependencyNotReady",
                "InvalidCELExpression",
                "ArtifactFailed",
                "ReconciliationFailed",
            ],
            FluxKind::HelmRelease => vec![
                "InstallFailed",
                "UpgradeFailed",
                "RollbackSucceeded",
                "RetriesExceeded",
                "DependencyNotReady",
                "ArtifactFailed",
                "InvalidCELExpression",
                "ReconciliationFailed",
            ],
            _ => source.to_vec(),
        }
    };
    let mut failing_kinds = BTreeSet::new();
    for c in live.index.clusters() {
        for o in c.objects.values() {
            if !o.health.is_failing() {
                continue;
            }
            let reason = o.reason.as_deref().unwrap_or("");
            assert!(
                allowed(o.key.kind).contains(&reason),
                "{} on {}: {} {reason}: {}",
                o.key.kind,
                c.info.name,
                o.key.name,
                o.message.as_deref().unwrap_or("")
            );
            failing_kinds.insert(o.key.kind);
        }
    }
    // The fleet is seeded: these kinds fail somewhere in it, so each was checked.
    for kind in [
        FluxKind::GitRepository,
        FluxKind::HelmRepository,
        FluxKind::Kustomization,
        FluxKind::HelmRelease,
    ] {
        assert!(
            failing_kinds.contains(&kind),
            "{kind} never fails: {failing_kinds:?}"
        );
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

/// The simulator states the Flux facts it serves on its own (`fluxfleet_sim::facts`, from Flux's
/// documents); the client has its tables (`fluxfleet::fleet`). If either is wrong, the two
/// disagree here — not silently, by agreeing on the same mistake, in every other test.
#[test]
fn the_simulator_and_the_client_agree_on_flux() {
    use fluxfleet::fleet::{FluxRelease, annotations, compare_versions};
    use fluxfleet_sim::facts;

    assert_eq!(facts::FluxKind::ALL.len(), FluxKind::ALL.len());
    for served in facts::FluxKind::ALL {
        let ours = FluxKind::from_kind(served.as_str())
            .unwrap_or_else(|| panic!("the client does not know {served}"));
        assert_eq!(served.group(), ours.group(), "{served}");
        assert_eq!(served.plural(), ours.plural(), "{served}");
        assert_eq!(served.short_names(), ours.short_names(), "{served}");
        assert_eq!(served.categories(), ours.categories(), "{served}");
        assert_eq!(served.is_static(), ours.is_static(), "{served}");
        for release in 0..=facts::FluxRelease::LATEST.0 {
            let mut theirs: Vec<_> = served
                .served_versions(facts::FluxRelease(release))
                .iter()
                .map(|v| (v.version, v.storage, v.deprecated))
                .collect();
            let mut mine: Vec<_> = ours
                .served_versions(FluxRelease(release))
                .iter()
                .map(|v| (v.version, v.storage, v.deprecated))
                .collect();
            theirs.sort_unstable();
            mine.sort_unstable();
            assert_eq!(theirs, mine, "{served} in Flux 2.{release}");
        }
    }
    assert_eq!(facts::FluxRelease::LATEST.0, FluxRelease::LATEST.0);

    let versions = [
        "v1beta2", "v2", "v1", "v1alpha3", "v10", "x1", "v2beta1", "v1beta10",
    ];
    let (mut served, mut read) = (versions, versions);
    served.sort_by(|a, b| facts::compare_versions(a, b));
    read.sort_by(|a, b| compare_versions(a, b));
    assert_eq!(served, read, "discovery's version order");

    for (theirs, mine) in [
        (facts::annotations::REQUESTED_AT, annotations::REQUESTED_AT),
        (facts::annotations::FORCE_AT, annotations::FORCE_AT),
        (facts::annotations::RESET_AT, annotations::RESET_AT),
    ] {
        assert_eq!(theirs, mine);
    }

    // dependsOn: what the simulator counts as a ready dependency is what the client shows as
    // ready, on every Flux sample with a status that is not suspended.
    let dir = format!("{}/tests/fixtures/samples", env!("CARGO_MANIFEST_DIR"));
    let mut judged = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(object) = serde_saphyr::from_str::<Value>(&text) else {
            continue;
        };
        let Some(kind) = object["kind"].as_str().and_then(FluxKind::from_kind) else {
            continue;
        };
        if kind.is_static() || object["spec"]["suspend"] == json!(true) {
            continue;
        }
        assert_eq!(
            facts::is_ready(&object),
            health_of(kind, &object) == Health::Ready,
            "{}",
            path.display()
        );
        judged += 1;
    }
    assert!(judged >= 15, "only {judged} samples judged");
}
