use serde_json::json;

use super::parse;
use super::*;

fn link(kind: &str, ns: &str, name: &str) -> ChainLink {
    ChainLink {
        kind: kind.into(),
        namespace: ns.into(),
        name: name.into(),
    }
}

fn ks(name: &str, revision: &str) -> Applier {
    Applier {
        kind: FluxKind::Kustomization,
        namespace: "flux-system".into(),
        name: name.into(),
        revision: Some(revision.into()),
        origin_revision: None,
        source: Some(SourceRef {
            kind: "GitRepository".into(),
            namespace: "flux-system".into(),
            name: "flux-system".into(),
            url: None,
            missing: false,
            via: None,
        }),
    }
}

/// A pod of `apps/apps` on `cluster`, applied by `appliers`.
fn pod(cluster: &str, appliers: Vec<Applier>) -> (String, Result<ClusterChain, ReadError>) {
    let chain = Chain {
        objects: vec![
            link("Pod", "apps", &format!("apps-{cluster}-x1")),
            link("ReplicaSet", "apps", &format!("apps-{cluster}")),
            link("Deployment", "apps", "apps"),
        ],
        appliers,
        stop: None,
    };
    (cluster.into(), Ok(ClusterChain::Found(chain)))
}

#[test]
fn copies_fold_by_their_chain_not_by_the_names_of_their_pods_the_majority_first() {
    let main = || vec![ks("apps", "main@sha1:1"), ks("flux-system", "main@sha1:1")];
    let read = vec![
        pod("c", main()),
        pod("a", main()),
        pod("e", vec![]),
        pod("b", main()),
        pod(
            "d",
            vec![ks("apps", "main@sha1:0"), ks("flux-system", "main@sha1:1")],
        ),
        ("f".into(), Ok(ClusterChain::Absent)),
        (
            "g".into(),
            Err(ReadError::TimedOut(std::time::Duration::from_secs(10))),
        ),
    ];
    let trace = fold(read);
    assert_eq!(trace.clusters, 7);
    assert!(trace.diverges());
    assert_eq!(trace.shapes[0].clusters, ["a", "b", "c"]);
    assert_eq!(trace.shapes[0].shape.owners, ["Pod", "ReplicaSet"]);
    // Ties: the managed copy at another revision before the one nothing manages.
    assert_eq!(trace.shapes[1].clusters, ["d"]);
    assert_eq!(trace.shapes[2].clusters, ["e"]);
    assert!(
        trace.shapes[2].says.ends_with("not managed by Flux"),
        "{}",
        trace.shapes[2].says
    );
    assert_eq!(trace.outliers(), ["d", "e"]);
    assert_eq!(trace.absent, ["f"]);
    assert_eq!(trace.unread[0].cluster, "g");
    assert_eq!(
        trace.shapes[0].says,
        "Pod → ReplicaSet → Deployment apps/apps ← Kustomization flux-system/apps \
         (main@sha1:1, from GitRepository flux-system/flux-system) ← Kustomization \
         flux-system/flux-system (main@sha1:1, from GitRepository flux-system/flux-system)"
    );
}

#[test]
fn one_chain_everywhere_does_not_diverge() {
    let trace = fold(vec![
        pod("a", vec![ks("apps", "r")]),
        pod("b", vec![ks("apps", "r")]),
    ]);
    assert!(!trace.diverges());
    assert!(trace.outliers().is_empty());
}

#[test]
fn labels_owners_and_appliers_are_read_as_the_controllers_write_them() {
    let deployment = json!({"kind": "Deployment", "metadata": {"name": "podinfo", "namespace": "apps",
        "labels": {"helm.toolkit.fluxcd.io/name": "podinfo", "helm.toolkit.fluxcd.io/namespace": "flux-system"}}});
    assert_eq!(
        parse::applied_by(&deployment),
        Some((
            FluxKind::HelmRelease,
            "flux-system".into(),
            "podinfo".into()
        ))
    );
    // Without the namespace label: the object's own namespace.
    let cm = json!({"metadata": {"name": "c", "namespace": "team", "labels": {"kustomize.toolkit.fluxcd.io/name": "team"}}});
    assert_eq!(
        parse::applied_by(&cm),
        Some((FluxKind::Kustomization, "team".into(), "team".into()))
    );
    assert_eq!(
        parse::applied_by(&json!({"metadata": {"labels": {"app": "x"}}})),
        None
    );
    // The controlling owner, not the first.
    let pod = json!({"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "Node", "name": "n"},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": true}]}});
    assert_eq!(parse::owner(&pod).unwrap().kind, "ReplicaSet");
    let two = json!({"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "A", "name": "a"}, {"apiVersion": "v1", "kind": "B", "name": "b"}]}});
    assert_eq!(parse::owner(&two), None);
    // A HelmRelease's chart source and version; a Kustomization's origin revision.
    let hr = json!({"metadata": {"name": "podinfo", "namespace": "apps"},
        "spec": {"chart": {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo", "namespace": "flux-system"}}}},
        "status": {"history": [{"chartVersion": "6.7.1"}], "lastAppliedRevision": "6.7.0"}});
    let a = parse::applier(FluxKind::HelmRelease, &hr);
    assert_eq!(a.revision.as_deref(), Some("6.7.1"));
    assert_eq!(a.source.unwrap().namespace, "flux-system");
    let ks = json!({"metadata": {"name": "apps", "namespace": "flux-system"},
        "spec": {"sourceRef": {"kind": "OCIRepository", "name": "manifests"}},
        "status": {"lastAppliedRevision": "latest@sha256:ab", "lastAppliedOriginRevision": "main@sha1:cd"}});
    let a = parse::applier(FluxKind::Kustomization, &ks);
    assert_eq!(a.origin_revision.as_deref(), Some("main@sha1:cd"));
    assert_eq!(
        a.source.unwrap().namespace,
        "flux-system",
        "the object's own"
    );
    // A name a cluster made enormous is kept bounded.
    let long = json!({"metadata": {"name": "x".repeat(10_000), "namespace": "n"}});
    assert_eq!(parse::link(&long, "Pod").name.len(), 512);
}

#[test]
fn kinds_are_named_as_kubectl_takes_them_and_secrets_never() {
    use super::resource::{Resource, Untraceable};
    for secret in [
        "Secret",
        "secrets",
        "SECRET",
        "secret.v1",
        "Secret.v1.core",
        "secrets.",
        "secret.core",
    ] {
        assert_eq!(
            Resource::named(secret),
            Err(Untraceable::Secret),
            "{secret}"
        );
    }
    for deployment in [
        "Deployment",
        "deploy",
        "deployments",
        "deployments.apps",
        "Deployment.apps",
    ] {
        let r = Resource::named(deployment).unwrap().unwrap();
        assert_eq!(
            (r.kind.as_str(), r.api.as_str()),
            ("Deployment", "/apis/apps/v1"),
            "{deployment}"
        );
    }
    let ingress = Resource::named("ingresses.networking.k8s.io")
        .unwrap()
        .unwrap();
    assert_eq!(ingress.kind, "Ingress");
    // A group that is not the kind's is asked of the cluster.
    assert_eq!(Resource::named("deployments.example.com"), Ok(None));
    assert_eq!(
        Resource::named("ks").unwrap().unwrap().plural,
        "kustomizations"
    );
    assert!(matches!(
        Resource::named("Frobnicator"),
        Err(Untraceable::Unknown(_))
    ));
    let ns = Resource::named("ns").unwrap().unwrap();
    assert_eq!(ns.path("", "apps"), "/api/v1/namespaces/apps");
}
