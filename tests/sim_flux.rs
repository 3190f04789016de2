//! The simulated fleet behaves like Flux: what it serves means what its ground truth says, and
//! its controller handles reconcile, suspend, resume, force and reset as FACTS §2 describes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use common::truth::seen as meant;
use std::time::Duration;

use base64::Engine;
use common::*;
use fluxfleet::fleet::{FluxKind, Health, health_of};
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::{Value, json};

const FLUX_KINDS: [(&str, &str, &str, &str); 7] = [
    (
        "source.toolkit.fluxcd.io",
        "v1",
        "GitRepository",
        "gitrepositories",
    ),
    (
        "source.toolkit.fluxcd.io",
        "v1",
        "OCIRepository",
        "ocirepositories",
    ),
    (
        "source.toolkit.fluxcd.io",
        "v1",
        "HelmRepository",
        "helmrepositories",
    ),
    ("source.toolkit.fluxcd.io", "v1", "HelmChart", "helmcharts"),
    ("source.toolkit.fluxcd.io", "v1", "Bucket", "buckets"),
    (
        "kustomize.toolkit.fluxcd.io",
        "v1",
        "Kustomization",
        "kustomizations",
    ),
    (
        "helm.toolkit.fluxcd.io",
        "v2",
        "HelmRelease",
        "helmreleases",
    ),
];

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

fn status_str<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    v.pointer(path).and_then(Value::as_str)
}

#[tokio::test]
async fn a_reconcile_request_is_handled_and_suspend_freezes_the_object() {
    let sim = start().await;
    let name = cluster_where(&sim, |c| {
        c.objects
            .iter()
            .any(|o| o.kind == "Kustomization" && o.name == "infra-controllers" && !o.suspended)
    });
    let client = client(&sim.handle.files.fleet, &name).await;
    let ks = api(&client, &kustomizations(), Some("flux-system"));
    let request = |token: &str| json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": token}}});
    ks.patch(
        "infra-controllers",
        &PatchParams::default(),
        &Patch::Merge(&request("2026-11-21T10:00:00.1+00:00")),
    )
    .await
    .unwrap();
    eventually("lastHandledReconcileAt equals the token", || async {
        let obj = ks.get("infra-controllers").await.unwrap();
        let v = serde_json::to_value(&obj).unwrap();
        status_str(&v, "/status/lastHandledReconcileAt") == Some("2026-11-21T10:00:00.1+00:00")
    })
    .await;

    // Suspend (the flux CLI's exact patch), then ask again: nothing is handled.
    ks.patch(
        "infra-controllers",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"suspend": true}})),
    )
    .await
    .unwrap();
    let truth = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap();
    assert!(truth.objects.iter().any(|o| o.name == "infra-controllers"
        && o.kind == "Kustomization"
        && meant(o.health) == Health::Suspended));
    ks.patch(
        "infra-controllers",
        &PatchParams::default(),
        &Patch::Merge(&request("second")),
    )
    .await
    .unwrap();
    // Resume ({"spec":{"suspend":null}}) bumps the generation; the controller then handles the
    // pending request and observes the new generation.
    let resumed = ks
        .patch(
            "infra-controllers",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"suspend": null}})),
        )
        .await
        .unwrap();
    let generation = resumed.metadata.generation.unwrap();
    let v = serde_json::to_value(&resumed).unwrap();
    assert_ne!(
        status_str(&v, "/status/lastHandledReconcileAt"),
        Some("second"),
        "not handled while suspended"
    );
    eventually(
        "the resumed object observes its generation and handles the request",
        || async {
            let v = serde_json::to_value(ks.get("infra-controllers").await.unwrap()).unwrap();
            v.pointer("/status/observedGeneration")
                .and_then(Value::as_i64)
                == Some(generation)
                && status_str(&v, "/status/lastHandledReconcileAt") == Some("second")
        },
    )
    .await;
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn helmrelease_force_and_reset_are_honoured_only_with_the_matching_request() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let hrs = api(&client, &helmreleases(), None)
        .list(&ListParams::default())
        .await
        .unwrap();
    let hr = hrs
        .items
        .iter()
        .find(|o| o.data["spec"]["suspend"] != json!(true))
        .expect("an active HelmRelease");
    let (ns, hr_name) = (
        hr.metadata.namespace.clone().unwrap(),
        hr.metadata.name.clone().unwrap(),
    );
    let api = api(&client, &helmreleases(), Some(&ns));
    // forceAt different from requestedAt: ignored (FACTS §2.5).
    let mismatched = json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": "t1", "reconcile.fluxcd.io/forceAt": "t0"}}});
    api.patch(
        &hr_name,
        &PatchParams::default(),
        &Patch::Merge(&mismatched),
    )
    .await
    .unwrap();
    eventually("t1 handled", || async {
        let v = serde_json::to_value(api.get(&hr_name).await.unwrap()).unwrap();
        status_str(&v, "/status/lastHandledReconcileAt") == Some("t1")
    })
    .await;
    let v = serde_json::to_value(api.get(&hr_name).await.unwrap()).unwrap();
    assert_eq!(
        v.pointer("/status/lastHandledForceAt"),
        None,
        "a forceAt that differs from requestedAt is not handled"
    );
    // The flux CLI's --force --reset: the same token on all three annotations.
    let both = json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": "t2", "reconcile.fluxcd.io/forceAt": "t2", "reconcile.fluxcd.io/resetAt": "t2"}}});
    api.patch(&hr_name, &PatchParams::default(), &Patch::Merge(&both))
        .await
        .unwrap();
    eventually("force and reset handled", || async {
        let v = serde_json::to_value(api.get(&hr_name).await.unwrap()).unwrap();
        status_str(&v, "/status/lastHandledForceAt") == Some("t2")
            && status_str(&v, "/status/lastHandledResetAt") == Some("t2")
    })
    .await;
    let v = serde_json::to_value(api.get(&hr_name).await.unwrap()).unwrap();
    assert_eq!(
        health_of(FluxKind::HelmRelease, &v),
        Health::Ready,
        "a forced upgrade succeeds"
    );
    assert_eq!(
        v.pointer("/status/failures"),
        None,
        "reset clears the failure counters"
    );
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn a_workload_cluster_is_reachable_through_its_management_secret() {
    let sim = start().await;
    let mgmt = client(&sim.handle.files.management, fluxfleet_sim::MANAGEMENT).await;
    let capi = resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters");
    let clusters = api(&mgmt, &capi, None)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(clusters.items.len(), sim.handle.cluster_names().len());
    let first = &clusters.items[0];
    let (ns, name) = (
        first.metadata.namespace.clone().unwrap(),
        first.metadata.name.clone().unwrap(),
    );
    assert_eq!(
        first.metadata.labels.as_ref().unwrap()["cluster.x-k8s.io/cluster-name"],
        name
    );
    // v1beta1 is served too, converted.
    let old = api(
        &mgmt,
        &resource("cluster.x-k8s.io", "v1beta1", "Cluster", "clusters"),
        Some(&ns),
    )
    .get(&name)
    .await
    .unwrap();
    assert_eq!(old.data["status"]["phase"], "Provisioned");
    assert_eq!(old.data["status"]["controlPlaneReady"], true);

    let secret_api: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(mgmt.clone(), &ns);
    let list = secret_api
        .list(&ListParams::default().labels(&format!("cluster.x-k8s.io/cluster-name={name}")))
        .await
        .unwrap();
    let secret = list
        .items
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some(&format!("{name}-kubeconfig")))
        .expect("the kubeconfig secret");
    assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    let bytes = &secret.data.as_ref().unwrap()["value"].0;
    let kc = kube::config::Kubeconfig::from_yaml(std::str::from_utf8(bytes).unwrap()).unwrap();
    let workload = client_from(kc, &name).await;
    let ks = api(&workload, &kustomizations(), Some("flux-system"))
        .get("flux-system")
        .await
        .unwrap();
    assert_eq!(ks.data["spec"]["path"], format!("./clusters/{ns}/{name}"));
    // The viewer may not read secrets.
    let viewer_kc = kube::config::Kubeconfig::read_from(&sim.handle.files.viewer).unwrap();
    let viewer = client_from(viewer_kc, &name).await;
    let err = kube::Api::<k8s_openapi::api::core::v1::Secret>::all(viewer)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(403));
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn http2_multiplexes_a_clusters_requests_over_one_connection() {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::rt::TokioIo;
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};

    let sim = start().await;
    let name = sim.handle.cluster_names()[0].clone();
    let kc = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let entry = kc
        .clusters
        .iter()
        .find(|c| c.name == name)
        .unwrap()
        .cluster
        .clone()
        .unwrap();
    let ca_pem = base64::engine::general_purpose::STANDARD
        .decode(entry.certificate_authority_data.unwrap())
        .unwrap();
    let token = kc
        .auth_infos
        .iter()
        .find(|a| a.name == format!("{name}-admin"))
        .unwrap()
        .auth_info
        .clone()
        .unwrap()
        .token
        .unwrap();
    let token = secrecy::ExposeSecret::expose_secret(&token).to_string();

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(&ca_pem).unwrap())
        .unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let tcp = tokio::net::TcpStream::connect(sim.handle.addr)
        .await
        .unwrap();
    let stream = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls))
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(
        stream.get_ref().1.alpn_protocol(),
        Some(&b"h2"[..]),
        "the server picks h2"
    );
    let (sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);

    let base = format!(
        "https://127.0.0.1:{}/clusters/{name}",
        sim.handle.addr.port()
    );
    let request = |path: &str| {
        http::Request::get(format!("{base}{path}"))
            .header("authorization", format!("Bearer {token}"))
            .body(Empty::<bytes::Bytes>::new())
            .unwrap()
    };
    // Seven watches (one per kind) and a list, all at once, on one connection.
    let mut watches = Vec::new();
    for (group, version, _, plural) in FLUX_KINDS {
        let mut s = sender.clone();
        let resp = s
            .send_request(request(&format!(
                "/apis/{group}/{version}/{plural}?watch=1&timeoutSeconds=30"
            )))
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        watches.push(resp);
    }
    let mut s = sender.clone();
    let list = s
        .send_request(request(
            "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations",
        ))
        .await
        .unwrap();
    let body = list.into_body().collect().await.unwrap().to_bytes();
    assert!(
        serde_json::from_slice::<Value>(&body).unwrap()["items"]
            .as_array()
            .is_some()
    );

    let stats = sim.handle.stats();
    assert_eq!(
        stats["clusters"][&name]["connections"], 1,
        "one connection for the cluster: {stats}"
    );
    assert_eq!(stats["clusters"][&name]["openWatches"], 7);
    assert_eq!(stats["h2ConnectionsOpen"], 1);
    assert_eq!(stats["h2OpenStreams"], 7);
    drop(watches);
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn churn_makes_objects_fail_and_recover() {
    let sim = start_with(|c| {
        c.churn = 200.0;
        c.rollout_interval = Duration::from_secs(3600);
    })
    .await;
    let health =
        |t: Vec<fluxfleet_sim::TruthCluster>| -> std::collections::HashMap<String, Health> {
            t.into_iter()
                .flat_map(|c| {
                    let cluster = c.name;
                    c.objects.into_iter().map(move |o| {
                        (
                            format!("{cluster}/{}/{}/{}", o.kind, o.namespace, o.name),
                            meant(o.health),
                        )
                    })
                })
                .collect()
        };
    let before = health(sim.handle.truth());
    eventually(
        "a ready object fails and a failing one recovers",
        || async {
            let now = health(sim.handle.truth());
            let moved = |from: Health, to: Health| {
                before
                    .iter()
                    .any(|(k, h)| *h == from && now.get(k) == Some(&to))
            };
            moved(Health::Ready, Health::Failed) && moved(Health::Failed, Health::Ready)
        },
    )
    .await;
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn a_rollout_moves_workspaces_to_a_new_revision_ring_by_ring() {
    // The first ring moves at once; the second waits a rollout step (30 s, longer than the test).
    let sim = start_with(|c| {
        c.churn = 0.001;
        c.rollout_interval = Duration::from_millis(200);
        c.rollout_step = Duration::from_secs(30);
    })
    .await;
    let names = sim.handle.cluster_names();
    let git = resource(
        "source.toolkit.fluxcd.io",
        "v1",
        "GitRepository",
        "gitrepositories",
    );
    let mut repos = Vec::new();
    for name in &names[..2] {
        let client = client(&sim.handle.files.fleet, name).await;
        repos.push(api(&client, &git, Some("flux-system")));
    }
    let revision = |v: Value| {
        status_str(&v, "/status/artifact/revision")
            .unwrap()
            .to_string()
    };
    let first = revision(serde_json::to_value(repos[0].get("flux-system").await.unwrap()).unwrap());
    let second =
        revision(serde_json::to_value(repos[1].get("flux-system").await.unwrap()).unwrap());
    assert!(first.starts_with("main@sha1:"));
    assert_ne!(
        first, second,
        "a rollout is already under way: the rings run different revisions"
    );
    eventually("the first ring gets a new revision", || async {
        let v = serde_json::to_value(repos[0].get("flux-system").await.unwrap()).unwrap();
        revision(v) != first
    })
    .await;
    let later = revision(serde_json::to_value(repos[1].get("flux-system").await.unwrap()).unwrap());
    assert_eq!(later, second, "the next ring waits for its step");
    sim.handle.shutdown().await;
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

#[tokio::test]
async fn kustomizations_keep_a_history_from_flux_2_7_and_a_revision_keeps_its_first_time() {
    let sim = start().await;
    let name = cluster_where(&sim, |c| {
        c.objects.iter().any(|o| {
            o.kind == "Kustomization"
                && o.name == "infra-controllers"
                && meant(o.health) == Health::Ready
        })
    });
    let admin = client(&sim.handle.files.fleet, &name).await;
    let ks = api(&admin, &kustomizations(), Some("flux-system"));
    let history = |v: &Value| v.pointer("/status/history/0").cloned().unwrap();
    let before = serde_json::to_value(ks.get("infra-controllers").await.unwrap()).unwrap();
    let newest = history(&before);
    assert_eq!(
        newest["metadata"]["revision"], before["status"]["lastAppliedRevision"],
        "the newest entry is the revision applied"
    );
    assert_eq!(newest["lastReconciledStatus"], "ReconciliationSucceeded");
    let request =
        json!({"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": "again"}}});
    ks.patch(
        "infra-controllers",
        &PatchParams::default(),
        &Patch::Merge(&request),
    )
    .await
    .unwrap();
    eventually("the request handled", || async {
        let v = serde_json::to_value(ks.get("infra-controllers").await.unwrap()).unwrap();
        status_str(&v, "/status/lastHandledReconcileAt") == Some("again")
    })
    .await;
    let after = serde_json::to_value(ks.get("infra-controllers").await.unwrap()).unwrap();
    let entry = history(&after);
    // The same revision reconciled once more: one entry, counted, first time kept.
    assert_eq!(entry["firstReconciled"], newest["firstReconciled"]);
    assert_eq!(
        entry["totalReconciliations"].as_i64().unwrap(),
        newest["totalReconciliations"].as_i64().unwrap() + 1
    );
    assert_eq!(
        after["status"]["history"].as_array().unwrap().len(),
        before["status"]["history"].as_array().unwrap().len()
    );
    // What the rollout view reads: since when this revision runs.
    let summary = fluxfleet::fleet::FluxSummary::from_object(&after).unwrap();
    assert_eq!(
        summary.rollout.unwrap().since.unwrap().to_string(),
        newest["firstReconciled"].as_str().unwrap()
    );
    sim.handle.shutdown().await;

    // Flux 2.6 keeps no history.
    let old = common::start_with(|c| {
        c.faults = fluxfleet_sim::faults::Spec::parse("old-flux=100%:2.6").unwrap();
    })
    .await;
    for c in old.handle.truth().iter().filter(|c| !c.management) {
        let admin = client(&old.handle.files.fleet, &c.name).await;
        let ks = api(&admin, &kustomizations(), Some("flux-system"));
        for o in ks.list(&Default::default()).await.unwrap() {
            let v = serde_json::to_value(o).unwrap();
            assert!(v.pointer("/status/history").is_none(), "{}: {v}", c.name);
        }
    }
    old.handle.shutdown().await;
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
