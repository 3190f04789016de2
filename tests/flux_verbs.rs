//! Flux's own RBAC verbs: with `[actions] flux_verbs = "check"`, each target's cluster is asked
//! (a `SelfSubjectAccessReview` for `suspend`, `resume` or `reconcile` on the object, as the Flux
//! web UI asks) before anything is sent; a target whose Role lacks the verb is refused by name
//! and no patch reaches it, the others are sent. The Events of what was done carry Flux's audit
//! annotations: the action, and the identity the request ran as.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use common::fluxfleet;
use fluxfleet_sim::Faults;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_without_flux_s_verb_refuses_its_targets_and_nothing_reaches_them() {
    let sim = common::start_with(|c| c.clusters = 3).await;
    let names = sim.workload_clusters();
    let (allowed, lacking) = (names[0].clone(), names[1].clone());
    // The Roles of `lacking` grant `patch` on Kustomizations, not Flux's `suspend`.
    sim.handle.set_faults(
        &lacking,
        Faults {
            denied_verb: Some((
                "suspend".into(),
                Some(fluxfleet_sim::facts::FluxKind::Kustomization),
            )),
            ..Faults::default()
        },
    );
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("fluxfleet.toml");
    let suspend = |config: &std::path::Path| {
        let mut cmd = fluxfleet();
        cmd.env("FLUXFLEET_DATA_DIR", scratch.path().join("data"))
            .env("FLUXFLEET_CONFIG", config)
            .args(["suspend", "ks", "apps", "-n", "flux-system", "--cluster"])
            .arg(&allowed)
            .arg("--cluster")
            .arg(&lacking)
            .args(["--write", "--yes", "-o", "ndjson", "--reason", "freeze"])
            .arg("--kubeconfig-dir")
            .arg(sim.dir.path().join("kubeconfigs"));
        cmd
    };
    std::fs::write(&config, "[actions]\nflux_verbs = \"check\"\n").unwrap();
    let patches = |cluster: &str| {
        sim.handle.stats()["clusters"][cluster]["patch"]
            .as_u64()
            .unwrap()
    };
    let before = (patches(&allowed), patches(&lacking));
    let out = suspend(&config).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |cluster: &str| {
        lines
            .iter()
            .find(|l| l["cluster"] == cluster)
            .unwrap_or_else(|| panic!("{cluster}: {stdout} {stderr}"))
    };
    assert_eq!(of(&allowed)["outcome"], "done", "{stdout}");
    assert_eq!(of(&lacking)["outcome"], "refused", "{stdout}");
    // Who was asked is recorded, as for what was sent.
    assert_eq!(
        of(&lacking)["seenAs"],
        "system:serviceaccount:flux-system:fluxfleet-admin",
        "{stdout}"
    );
    let said = of(&lacking)["message"].as_str().unwrap();
    assert!(
        said.starts_with("forbidden by Flux's RBAC: User \"system:serviceaccount:flux-system:fluxfleet-admin\" cannot suspend Kustomization flux-system/apps")
            && said.contains("\"suspend\" on kustomizations.kustomize.toolkit.fluxcd.io"),
        "{said}"
    );
    assert_ne!(out.status.code(), Some(0), "a target was refused: {stderr}");
    // The summary counts it among the refused, though it was refused on its cluster.
    assert!(
        stderr.contains("1 done, 1 not done, on 2 objects (1 refused)"),
        "{stderr}"
    );
    // No patch reached the cluster that refused; one (the suspend) reached the other.
    assert_eq!(patches(&lacking), before.1, "nothing sent to {lacking}");
    assert_eq!(patches(&allowed), before.0 + 1);
    let suspended = |cluster: &str| {
        let cluster = cluster.to_string();
        let sim = &sim;
        async move {
            let client = common::client(&sim.handle.files.fleet, &cluster).await;
            let ks = common::api(&client, &common::kustomizations(), Some("flux-system"))
                .get("apps")
                .await
                .unwrap();
            ks.data["spec"]["suspend"] == true
        }
    };
    assert!(suspended(&allowed).await);
    assert!(!suspended(&lacking).await);

    // The Event on what was done speaks Flux's audit dialect: the action and who it ran as.
    let client = common::client(&sim.handle.files.fleet, &allowed).await;
    let events =
        Api::<Event>::namespaced(client, "flux-system")
            .list(&ListParams::default().fields(
                "involvedObject.kind=Kustomization,involvedObject.name=apps,reason=Suspended",
            ))
            .await
            .unwrap();
    let ours: Vec<_> = events
        .items
        .iter()
        .filter(|e| e.source.as_ref().and_then(|s| s.component.as_deref()) == Some("fluxfleet"))
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    let annotations = ours[0].metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations["event.toolkit.fluxcd.io/action"], "suspend");
    assert_eq!(
        annotations["event.toolkit.fluxcd.io/username"],
        "system:serviceaccount:flux-system:fluxfleet-admin"
    );
    assert_eq!(
        annotations["event.toolkit.fluxcd.io/groups"],
        "system:authenticated"
    );

    // Without the check the cluster's RBAC (patch) decides, as the flux CLI relies on.
    std::fs::write(&config, "[actions]\nflux_verbs = \"off\"\n").unwrap();
    let out = suspend(&config).output().await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(suspended(&lacking).await);

    // A typo in the guardrail is refused by name, never read as off.
    std::fs::write(&config, "[actions]\nflux_verbs = \"chek\"\n").unwrap();
    let out = suspend(&config).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("flux_verbs") && stderr.contains("chek"),
        "{stderr}"
    );
    sim.handle.shutdown().await;
}
