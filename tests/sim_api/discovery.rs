//! What the simulated API server's discovery serves: each Flux kind at its own version (and old
//! Flux its old ones), and the workloads kubectl and k9s list.

use super::*;

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
