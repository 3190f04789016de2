//! The simulated controllers handle requests as Flux does (FACTS §2): reconcile, suspend and
//! resume, HelmRelease force and reset, and a Kustomization's history of what it reconciled.

use super::*;

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
