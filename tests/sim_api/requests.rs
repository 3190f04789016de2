//! The simulated API server's lists, patches, authentication and event selectors.

use super::*;

#[tokio::test]
async fn list_pages_with_limit_and_continue_and_filters_by_label() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let all_ns = api(&client, &kustomizations(), None);
    let full = all_ns.list(&ListParams::default()).await.unwrap();
    assert!(full.items.len() > 4);
    let mut paged = Vec::new();
    let mut lp = ListParams::default().limit(3);
    loop {
        let page = all_ns.list(&lp).await.unwrap();
        assert!(page.items.len() <= 3);
        paged.extend(page.items.into_iter().map(|o| o.metadata.name.unwrap()));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => lp = lp.continue_token(&token),
            None => break,
        }
    }
    let names: Vec<String> = full
        .items
        .iter()
        .map(|o| o.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(paged, names);

    let hr = api(&client, &helmreleases(), None);
    let every_hr = hr.list(&ListParams::default()).await.unwrap().items.len();
    let by_label = hr
        .list(&ListParams::default().labels("kustomize.toolkit.fluxcd.io/name=apps"))
        .await
        .unwrap();
    assert!(!by_label.items.is_empty() && by_label.items.len() < every_hr);
    let none = all_ns
        .list(&ListParams::default().labels("kustomize.toolkit.fluxcd.io/name in (nothing)"))
        .await
        .unwrap();
    assert!(none.items.is_empty());
    let one = api(&client, &kustomizations(), Some("flux-system"))
        .get("apps")
        .await
        .unwrap();
    assert_eq!(one.metadata.namespace.as_deref(), Some("flux-system"));
    let missing = api(&client, &kustomizations(), Some("flux-system"))
        .get("nope")
        .await
        .unwrap_err();
    let kube::Error::Api(status) = missing else {
        panic!("expected an API error")
    };
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
    assert_eq!(
        status.message,
        "kustomizations.kustomize.toolkit.fluxcd.io \"nope\" not found"
    );
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn merge_patch_bumps_generation_on_spec_change_and_never_touches_status() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), Some("flux-system"));
    let before = ks.get("infra-controllers").await.unwrap();
    let patch = json!({"spec": {"interval": "7m0s"}, "status": {"observedGeneration": 999}, "metadata": {"labels": {"team": "sre"}}});
    let after = ks
        .patch(
            "infra-controllers",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
    assert_eq!(
        after.metadata.generation,
        before.metadata.generation.map(|g| g + 1)
    );
    assert_eq!(after.data["spec"]["interval"], "7m0s");
    assert_eq!(
        after.data["status"], before.data["status"],
        "a patch of the object leaves status alone"
    );
    assert_eq!(after.metadata.labels.as_ref().unwrap()["team"], "sre");
    assert_ne!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
    // Metadata-only changes do not bump the generation.
    let label_only = ks
        .patch(
            "infra-controllers",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"team": null}}})),
        )
        .await
        .unwrap();
    assert_eq!(label_only.metadata.generation, after.metadata.generation);
    assert!(!label_only.metadata.labels.unwrap().contains_key("team"));
    // A stale resourceVersion in the patch is a conflict.
    let stale = json!({"metadata": {"resourceVersion": before.metadata.resource_version}, "spec": {"prune": false}});
    let err = ks
        .patch(
            "infra-controllers",
            &PatchParams::default(),
            &Patch::Merge(&stale),
        )
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(409));
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn bad_token_is_401_and_viewer_writes_are_403() {
    let sim = start().await;
    let name = sim.handle.cluster_names()[0].clone();
    let mut kc = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    for user in &mut kc.auth_infos {
        if let Some(auth) = user.auth_info.as_mut() {
            auth.token = Some("not-a-token".to_string().into());
        }
    }
    let bad = client_from(kc, &name).await;
    let err = api(&bad, &kustomizations(), None)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected a Status")
    };
    assert_eq!((status.code, status.reason.as_str()), (401, "Unauthorized"));

    let viewer = client(&sim.handle.files.viewer, &name).await;
    let ks = api(&viewer, &kustomizations(), Some("flux-system"));
    assert!(ks.get("apps").await.is_ok(), "a viewer can read");
    let err = ks
        .patch(
            "apps",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"suspend": true}})),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected a Status")
    };
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert!(
        status
            .message
            .contains("cannot patch resource \"kustomizations\""),
        "{}",
        status.message
    );
    let stats = sim.handle.stats();
    assert_eq!(stats["clusters"][&name]["rejected"], 1);
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn events_are_selected_by_involved_object() {
    let sim = start().await;
    let name = cluster_where(&sim, |c| {
        c.objects
            .iter()
            .any(|o| o.kind == "Kustomization" && o.health.is_failing())
    });
    let truth = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap();
    let failing = truth
        .objects
        .iter()
        .find(|o| o.kind == "Kustomization" && o.health.is_failing())
        .unwrap();
    let client = client(&sim.handle.files.fleet, &name).await;
    let events = ApiResource::erase::<k8s_openapi::api::core::v1::Event>(&());
    let lp = ListParams::default().fields(&format!(
        "involvedObject.kind=Kustomization,involvedObject.name={}",
        failing.name
    ));
    let list = api(&client, &events, Some(&failing.namespace))
        .list(&lp)
        .await
        .unwrap();
    assert!(
        !list.items.is_empty(),
        "a failing object has a Warning event"
    );
    for ev in &list.items {
        assert_eq!(ev.data["involvedObject"]["name"], failing.name.as_str());
        assert_eq!(ev.data["type"], "Warning");
        assert_eq!(ev.data["source"]["component"], "kustomize-controller");
    }
    let err = api(&client, &events, None)
        .list(&ListParams::default().fields("spec.nope=1"))
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(400));
    sim.handle.shutdown().await;
}
