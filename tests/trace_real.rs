//! `fluxfleet trace`'s walk replayed on what the real controllers wrote
//! (`tests/fixtures/real-flux/trace/`: kustomize-controller v1.9.4 applying a Deployment and a
//! ConfigMap from a Kustomization that another applied, helm-controller v1.6.3 a chart by
//! `chart.spec` and by `chartRef`, a Deployment applied by hand, a ReplicaSet and Pod owned by
//! the Deployment; on kube-apiserver v1.35.4) beside what `flux trace` v2.9.4 said of each
//! (`flux-trace-*.txt`): the same applier, namespace, revision, source and URL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::BTreeMap;

use fluxfleet::fleet::read::ReadError;
use fluxfleet::fleet::trace::resource::Resource;
use fluxfleet::fleet::trace::walk::{Get, walk};
use fluxfleet::fleet::trace::{Asked, Chain, ClusterChain};
use fluxfleet::fleet::{FluxKind, ObjectKey};
use serde_json::Value;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/real-flux/trace"
);

/// The captured objects, by (plural, namespace, name) as a GET path names them.
struct Captured(BTreeMap<(String, String, String), Value>);

fn plural(kind: &str) -> String {
    match Resource::named(kind) {
        Ok(Some(r)) => r.plural,
        other => panic!("{kind}: {other:?}"),
    }
}

impl Captured {
    fn load() -> Captured {
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(DIR).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let object: Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                let field = |p: &str| {
                    object
                        .pointer(p)
                        .and_then(Value::as_str)
                        .unwrap()
                        .to_string()
                };
                let key = (
                    plural(&field("/kind")),
                    field("/metadata/namespace"),
                    field("/metadata/name"),
                );
                out.insert(key, object);
            }
        }
        Captured(out)
    }

    fn without(mut self, plural: &str, namespace: &str, name: &str) -> Captured {
        assert!(
            self.0
                .remove(&(plural.into(), namespace.into(), name.into()))
                .is_some()
        );
        self
    }
}

impl Get for Captured {
    async fn get(&mut self, path: &str) -> Result<Value, ReadError> {
        let parts: Vec<&str> = path.split('/').collect();
        let [.., "namespaces", namespace, plural, name] = parts[..] else {
            panic!("a walk asked {path}");
        };
        assert!(!path.contains("secrets"), "asked for a Secret: {path}");
        let (plural, namespace, name) =
            (plural.to_string(), namespace.to_string(), name.to_string());
        self.0
            .get(&(plural, namespace, name))
            .cloned()
            .ok_or(ReadError::NotFound)
    }

    fn flux_path(&self, key: &ObjectKey) -> String {
        format!(
            "/apis/{}/v1/namespaces/{}/{}/{}",
            key.kind.group(),
            key.namespace,
            key.kind.plural(),
            key.name
        )
    }
}

/// What `flux trace` said: each section after the object's as (its first line's kind and name,
/// then `Field: value` pairs); empty when it said the object is not managed by Flux.
fn flux_said(case: &str) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(format!("{DIR}/flux-trace-{case}.txt")).unwrap();
    if text.contains("object not managed by Flux") {
        return Vec::new();
    }
    text.split("\n---\n")
        .skip(1)
        .map(|section| {
            let mut fields = BTreeMap::new();
            for (i, line) in section.lines().enumerate() {
                if let Some((k, v)) = line.split_once(':') {
                    let (k, v) = (k.trim().to_string(), v.trim().to_string());
                    if i == 0 {
                        fields.insert("kind".into(), k.clone());
                        fields.insert("name".into(), v.clone());
                    }
                    fields.insert(k, v);
                }
            }
            fields
        })
        .collect()
}

async fn traced(captured: &mut Captured, kind: &str, name: &str) -> Chain {
    let asked = Asked {
        kind: kind.into(),
        resource: Resource::named(kind).unwrap(),
        namespace: "trace-check".into(),
        name: name.into(),
    };
    match walk(captured, &asked).await.unwrap() {
        ClusterChain::Found(chain) => chain,
        ClusterChain::Absent => panic!("{kind} {name} not found"),
    }
}

#[tokio::test]
async fn each_chain_names_what_flux_trace_names() {
    let cases = [
        ("web", "Deployment", "web"),
        ("webcfg", "ConfigMap", "web-config"),
        ("hrdep", "Deployment", "podinfo-slow"),
        ("hrcm", "ConfigMap", "podinfo-hello"),
        ("manual", "Deployment", "manual"),
        ("owner", "Pod", "web-7d9f-abcde"),
        ("chartref", "Deployment", "viaref-slow"),
        ("appsks", "Kustomization", "apps"),
        ("hr", "HelmRelease", "podinfo"),
    ];
    for (case, kind, name) in cases {
        let chain = traced(&mut Captured::load(), kind, name).await;
        let said = flux_said(case);
        let Some(applier) = said.first() else {
            assert!(
                chain.appliers.is_empty(),
                "{case}: flux says not managed: {chain:?}"
            );
            continue;
        };
        let ours = &chain.appliers[0];
        assert_eq!(ours.kind.as_str(), applier["kind"], "{case}");
        assert_eq!(ours.name, applier["name"], "{case}");
        assert_eq!(ours.namespace, applier["Namespace"], "{case}");
        assert_eq!(
            ours.revision.as_deref(),
            Some(applier["Revision"].as_str()),
            "{case}"
        );
        // The source flux names last (a HelmChart's repository after the HelmChart), with its
        // URL; flux v2.9.4 names none for a release by chartRef, which fluxfleet follows.
        let source = ours.source.as_ref().unwrap();
        match said.last().filter(|s| s.contains_key("URL")) {
            Some(repository) => {
                assert_eq!(source.kind, repository["kind"], "{case}");
                assert_eq!(source.name, repository["name"], "{case}");
                assert_eq!(
                    source.url.as_deref(),
                    Some(repository["URL"].as_str()),
                    "{case}"
                );
            }
            None => {
                assert_eq!(case, "chartref");
                assert_eq!(source.kind, "HelmRepository");
                assert_eq!(
                    source.via.as_deref(),
                    Some("HelmChart trace-check/trace-check-podinfo")
                );
                assert_eq!(source.url.as_deref(), Some("http://127.0.0.1:18480/charts"));
            }
        }
    }
}

#[tokio::test]
async fn owners_lead_up_and_appliers_go_on_to_the_one_that_applied_the_applier() {
    let chain = traced(&mut Captured::load(), "pod", "web-7d9f-abcde").await;
    let kinds: Vec<&str> = chain.objects.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(kinds, ["Pod", "ReplicaSet", "Deployment"]);
    let appliers: Vec<String> = chain
        .appliers
        .iter()
        .map(|a| format!("{} {}/{}", a.kind, a.namespace, a.name))
        .collect();
    assert_eq!(
        appliers,
        [
            "Kustomization trace-check/apps",
            "Kustomization trace-check/parent"
        ]
    );
    assert_eq!(chain.appliers[1].kind, FluxKind::Kustomization);
    assert_eq!(chain.stop, None);
}

/// flux trace fails when the source is gone (`failed to find GitRepository …`); fluxfleet says
/// the rest of the chain and that the cluster does not have the source.
#[tokio::test]
async fn a_source_the_cluster_does_not_have_is_said_missing() {
    let said = std::fs::read_to_string(format!("{DIR}/flux-trace-nosrc.txt")).unwrap();
    assert!(said.contains("failed to find GitRepository"), "{said}");
    let mut captured = Captured::load().without("gitrepositories", "trace-check", "trace-src");
    let chain = traced(&mut captured, "deploy", "web").await;
    let source = chain.appliers[0].source.as_ref().unwrap();
    assert!(source.missing && source.url.is_none(), "{source:?}");
    let shape = chain.shape();
    assert!(
        shape
            .line()
            .contains("from GitRepository trace-check/trace-src, which the cluster does not have"),
        "{}",
        shape.line()
    );
    // A chain is not the one with its source: the copy differs from one that has it.
    let whole = traced(&mut Captured::load(), "deploy", "web").await;
    assert_ne!(whole.shape(), shape);
}
