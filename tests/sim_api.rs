//! Conformance of the simulated API server, driven by kube-rs over real HTTPS.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use kube::api::{ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, DynamicObject};
use serde_json::json;

#[tokio::test]
async fn discovery_serves_each_flux_kind_at_its_own_version() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let groups = client.list_api_groups().await.unwrap();
    let notification = groups
        .groups
        .iter()
        .find(|g| g.name == "notification.toolkit.fluxcd.io")
        .unwrap();
    // The group prefers v1 (Receiver) although Alert and Provider exist only in v1beta3.
    assert_eq!(
        notification.preferred_version.as_ref().unwrap().version,
        "v1"
    );
    let b3 = client
        .list_api_group_resources("notification.toolkit.fluxcd.io/v1beta3")
        .await
        .unwrap();
    let alerts = b3.resources.iter().find(|r| r.name == "alerts").unwrap();
    assert!(alerts.namespaced);
    assert_eq!(alerts.kind, "Alert");
    assert!(alerts.verbs.contains(&"patch".to_string()));
    let ks = client
        .list_api_group_resources("kustomize.toolkit.fluxcd.io/v1")
        .await
        .unwrap();
    let ks = ks
        .resources
        .iter()
        .find(|r| r.name == "kustomizations")
        .unwrap();
    assert_eq!(ks.short_names.as_deref(), Some(&["ks".to_string()][..]));
    assert!(
        client
            .list_api_group_resources("kustomize.toolkit.fluxcd.io/v1")
            .await
            .unwrap()
            .resources
            .iter()
            .any(|r| r.name == "kustomizations/status")
    );
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn old_flux_serves_old_versions_and_no_flux_serves_none() {
    let sim = start_with(|c| {
        c.faults = fluxfleet_sim::faults::Spec::parse("old-flux=20%:2.0,no-flux=20%").unwrap()
    })
    .await;
    let old = cluster_where(&sim, |c| c.flux.as_deref() == Some("v2.0"));
    let client = client(&sim.handle.files.fleet, &old).await;
    let hr = client
        .list_api_group_resources("helm.toolkit.fluxcd.io/v2beta1")
        .await
        .unwrap();
    assert!(hr.resources.iter().any(|r| r.name == "helmreleases"));
    let err = client
        .list_api_group_resources("helm.toolkit.fluxcd.io/v2")
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(404));
    let v2beta1 = resource(
        "helm.toolkit.fluxcd.io",
        "v2beta1",
        "HelmRelease",
        "helmreleases",
    );
    let list = api(&client, &v2beta1, None)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(!list.items.is_empty());
    assert!(
        list.items
            .iter()
            .all(|o| o.types.as_ref().unwrap().api_version == "helm.toolkit.fluxcd.io/v2beta1")
    );

    let none = cluster_where(&sim, |c| c.flux.is_none());
    let bare = common::client(&sim.handle.files.fleet, &none).await;
    let groups = bare.list_api_groups().await.unwrap();
    assert!(groups.groups.iter().all(|g| !g.name.contains("fluxcd")));
    let err = api(&bare, &kustomizations(), None)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(404));
    sim.handle.shutdown().await;
}

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

async fn next_event(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<DynamicObject>>> + Unpin),
) -> WatchEvent<DynamicObject> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open")
        .expect("no transport error")
}

#[tokio::test]
async fn watch_resumes_streams_changes_and_sends_bookmarks() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), Some("flux-system"));
    let list = ks.list(&ListParams::default()).await.unwrap();
    let rv = list.metadata.resource_version.clone().unwrap();
    let mut stream = ks
        .watch(&WatchParams::default().timeout(60), &rv)
        .await
        .unwrap()
        .boxed();
    ks.patch(
        "apps",
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"labels": {"x": "1"}}})),
    )
    .await
    .unwrap();
    let mut saw_modified = false;
    let mut saw_bookmark = false;
    while !(saw_modified && saw_bookmark) {
        match next_event(&mut stream).await {
            WatchEvent::Modified(o) if o.metadata.name.as_deref() == Some("apps") => {
                assert_eq!(o.metadata.labels.unwrap()["x"], "1");
                saw_modified = true;
            }
            WatchEvent::Bookmark(b) => {
                assert!(
                    b.metadata.resource_version.parse::<u64>().unwrap()
                        >= rv.parse::<u64>().unwrap()
                );
                saw_bookmark = true;
            }
            WatchEvent::Error(e) => panic!("unexpected watch error {e:?}"),
            _ => {}
        }
    }
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn watch_from_a_compacted_version_gets_410_then_a_relist_works() {
    let sim = start().await;
    let (name, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), None);
    let rv = ks
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let ns_ks = api(&client, &kustomizations(), Some("flux-system"));
    ns_ks
        .patch(
            "apps",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"y": "1"}}})),
        )
        .await
        .unwrap();
    assert!(sim.handle.compact(&name));
    let mut stream = ks
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
        }
        other => panic!("expected 410, got {other:?}"),
    }
    // The relist gives a fresh resourceVersion from which watching works again.
    let fresh = ks.list(&ListParams::default()).await.unwrap();
    assert!(fresh.items.iter().any(|o| {
        o.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("y"))
    }));
    let mut stream = ks
        .watch(
            &WatchParams::default(),
            fresh.metadata.resource_version.as_ref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    ns_ks
        .patch(
            "apps",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"y": "2"}}})),
        )
        .await
        .unwrap();
    assert!(matches!(
        next_event(&mut stream).await,
        WatchEvent::Modified(_)
    ));
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn kube_runtime_watcher_recovers_from_a_410_storm() {
    use kube::runtime::watcher;
    let sim = start().await;
    let (name, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), None);
    let mut events = watcher::watcher(ks.clone(), watcher::Config::default()).boxed();
    let (mut init_done, mut gone) = (0, 0);
    while init_done < 2 {
        let ev = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("in time")
            .expect("open");
        let Ok(ev) = ev else {
            // The 410 surfaces as an error item; the watcher relists by itself.
            gone += 1;
            continue;
        };
        if let watcher::Event::InitDone = ev {
            init_done += 1;
            if init_done == 1 {
                // Forget the history and change something: the watch must get 410 and relist.
                sim.handle.compact(&name);
                let ns_ks = api(&client, &kustomizations(), Some("flux-system"));
                ns_ks
                    .patch(
                        "apps",
                        &PatchParams::default(),
                        &Patch::Merge(&json!({"metadata": {"labels": {"z": "1"}}})),
                    )
                    .await
                    .unwrap();
            }
        }
    }
    assert_eq!(gone, 1, "exactly one 410 before the relist");
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

#[tokio::test]
async fn a_label_selected_watch_sees_objects_enter_and_leave_its_selection() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), Some("flux-system"));
    let rv = ks
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let wp = WatchParams::default()
        .labels("team=sre")
        .disable_bookmarks()
        .timeout(60);
    let mut stream = ks.watch(&wp, &rv).await.unwrap().boxed();
    let label = |v: Option<&str>| json!({"metadata": {"labels": {"team": v}}});
    let pp = PatchParams::default();
    ks.patch("apps", &pp, &Patch::Merge(&label(Some("sre"))))
        .await
        .unwrap();
    assert!(
        matches!(next_event(&mut stream).await, WatchEvent::Added(o) if o.metadata.name.as_deref() == Some("apps"))
    );
    ks.patch(
        "apps",
        &pp,
        &Patch::Merge(&json!({"spec": {"interval": "3m0s"}})),
    )
    .await
    .unwrap();
    assert!(matches!(
        next_event(&mut stream).await,
        WatchEvent::Modified(_)
    ));
    ks.patch("apps", &pp, &Patch::Merge(&label(None)))
        .await
        .unwrap();
    assert!(
        matches!(next_event(&mut stream).await, WatchEvent::Deleted(o) if o.metadata.name.as_deref() == Some("apps"))
    );
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn simulators_side_by_side_number_their_clusters_on_from_where_the_other_stops() {
    let first = common::start_with(|c| {
        c.clusters = 8;
        c.workspaces = 2;
        c.objects = 2;
    })
    .await;
    let second = common::start_with(|c| {
        c.clusters = 8;
        c.workspaces = 2;
        c.objects = 2;
        c.first_cluster = 8;
    })
    .await;
    let one: Vec<String> = first.handle.cluster_names();
    let two: Vec<String> = second.handle.cluster_names();
    assert!(one.iter().all(|n| !two.contains(n)), "{one:?} {two:?}");
    // Together, the numbering of one simulator of sixteen.
    let whole = common::start_with(|c| {
        c.clusters = 16;
        c.workspaces = 2;
        c.objects = 2;
    })
    .await;
    let mut both: Vec<String> = one.into_iter().chain(two).collect();
    let mut all = whole.handle.cluster_names();
    both.sort();
    all.sort();
    assert_eq!(both, all);
    for sim in [first, second, whole] {
        sim.handle.shutdown().await;
    }
}

/// kubectl and k9s find what to list in discovery: the simulator's pods, deployments, replica
/// sets and jobs are there (plain and aggregated), listed across namespaces, and a pod's log
/// reads as `kubectl logs` reads it.
#[tokio::test]
async fn the_workloads_are_in_discovery_and_read_as_kubectl_reads_them() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::core::GroupVersionKind;
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let plain = kube::Discovery::new(client.clone()).run().await.unwrap();
    let aggregated = kube::Discovery::new(client.clone())
        .run_aggregated()
        .await
        .unwrap();
    for (group, kind, plural) in [
        ("", "Pod", "pods"),
        ("apps", "Deployment", "deployments"),
        ("apps", "ReplicaSet", "replicasets"),
        ("apps", "StatefulSet", "statefulsets"),
        ("apps", "DaemonSet", "daemonsets"),
        ("batch", "Job", "jobs"),
        ("batch", "CronJob", "cronjobs"),
    ] {
        let gvk = GroupVersionKind::gvk(group, "v1", kind);
        for (how, discovery) in [("plain", &plain), ("aggregated", &aggregated)] {
            let (resource, caps) = discovery
                .resolve_gvk(&gvk)
                .unwrap_or_else(|| panic!("{how} discovery has no {kind}"));
            assert_eq!(resource.plural, plural, "{how}");
            assert!(caps.supports_operation("list"), "{how} {kind}");
            let listed = kube::Api::<DynamicObject>::all_with(client.clone(), &resource)
                .list(&ListParams::default())
                .await;
            assert!(listed.is_ok(), "{how} {kind}: {listed:?}");
        }
    }
    let pods = kube::Api::<Pod>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    let pod = pods.items.first().expect("the fleet runs pods");
    let (namespace, name) = (
        pod.metadata.namespace.clone().unwrap(),
        pod.metadata.name.clone().unwrap(),
    );
    let log = kube::Api::<Pod>::namespaced(client, &namespace)
        .logs(&name, &kube::api::LogParams::default())
        .await;
    assert!(log.is_ok(), "{namespace}/{name}: {log:?}");
    sim.handle.shutdown().await;
}
