#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;
use crate::hostile::sample;

fn at() -> Timestamp {
    "2026-11-23T10:00:00Z".parse().unwrap()
}

#[test]
fn the_sample_report_and_instance_read_as_the_operator_wrote_them() {
    let instance = sample("fluxinstance-ready.yaml");
    let r = Report::read(&sample("fluxreport.yaml"), Some(&instance), at()).unwrap();
    assert_eq!(r.version.as_deref(), Some("v2.9.4"));
    assert_eq!(r.status.as_deref(), Some("Installed"));
    assert_eq!(r.managed_by.as_deref(), Some("flux-operator"));
    assert_eq!(r.operator.as_deref(), Some("v0.58.1"));
    assert_eq!(r.kubernetes.as_deref(), Some("v1.34.2"));
    assert_eq!(r.nodes, Some(12));
    assert_eq!(r.components_ready(), (4, 4));
    let helm = &r.components[0];
    assert_eq!(
        (&*helm.name, helm.version.as_deref()),
        ("helm-controller", Some("v1.6.3"))
    );
    let hr = r.reconcilers.iter().find(|k| &*k.kind == "HelmRelease");
    let hr = hr.unwrap();
    assert_eq!((hr.running, hr.failing, hr.suspended), (61, 2, 1));
    assert_eq!(&*hr.api_version, "helm.toolkit.fluxcd.io/v2");
    let git = r.reconcilers.iter().find(|k| &*k.kind == "GitRepository");
    assert_eq!(git.unwrap().total_size.as_deref(), Some("2.1 MiB"));
    assert_eq!(r.totals(), (89, 4, 2));
    let sync = r.sync.as_ref().unwrap();
    assert_eq!(&*sync.id, "kustomization/flux-system");
    assert!(sync.ready);
    assert_eq!(r.ready, Some(true));
    let i = r.instance.as_ref().unwrap();
    assert_eq!(i.wants.as_deref(), Some("2.9.x"));
    assert!(i.revision.as_deref().unwrap().starts_with("v2.9.4@sha256:"));
    assert_eq!((i.ready, i.suspended), (Some(true), false));
    assert!(r.healthy());
    assert_eq!(r.flux_version(), Some("v2.9.4"));
}

#[test]
fn a_controller_not_ready_or_a_failing_instance_is_not_healthy() {
    let mut report = sample("fluxreport.yaml");
    report["spec"]["components"][1]["ready"] = json!(false);
    let r = Report::read(&report, None, at()).unwrap();
    assert_eq!(r.components_ready(), (3, 4));
    assert!(!r.healthy());
    let mut instance = sample("fluxinstance-ready.yaml");
    instance["status"]["conditions"][0]["status"] = json!("False");
    instance["metadata"]["annotations"]["fluxcd.controlplane.io/reconcile"] = json!("disabled");
    let r = Report::read(&sample("fluxreport.yaml"), Some(&instance), at()).unwrap();
    let i = r.instance.as_ref().unwrap();
    assert_eq!((i.ready, i.suspended), (Some(false), true));
    assert!(!r.healthy());
}

#[test]
fn what_is_not_a_report_says_so_and_what_the_cluster_sends_is_bounded() {
    let ks = sample("kustomization-ready.yaml");
    assert_eq!(
        Report::read(&ks, None, at()),
        Err(ReportError::NotAReport("Kustomization".into()))
    );
    let mut report = sample("fluxreport.yaml");
    report.as_object_mut().unwrap().remove("spec");
    assert_eq!(Report::read(&report, None, at()), Err(ReportError::NoSpec));
    // A hostile report: huge lists, long texts, wrong types.
    let mut report = sample("fluxreport.yaml");
    let many: Vec<Value> = (0..10_000)
        .map(|i| json!({"kind": format!("K{i}"), "stats": {"running": "x", "failing": -1}}))
        .collect();
    report["spec"]["reconcilers"] = Value::from(many);
    report["spec"]["distribution"]["version"] = json!("v".repeat(100_000));
    report["spec"]["components"] = json!("not a list");
    report["spec"]["sync"] = json!({"ready": true});
    let r = Report::read(&report, Some(&json!("nonsense")), at()).unwrap();
    assert_eq!(r.reconcilers.len(), MAX_ENTRIES);
    assert_eq!(r.totals(), (0, 0, 0));
    assert!(r.version.unwrap().chars().count() <= limits::SHORT);
    assert!(r.components.is_empty());
    assert_eq!(r.sync, None);
    assert_eq!(r.instance, None);
}

#[test]
fn hostile_bytes_never_panic_the_reader() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/samples/fluxreport.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for mutated in crate::hostile::text_mutations(&text, 400) {
        if let Ok(v) = serde_saphyr::from_str::<Value>(&mutated) {
            let _ = Report::read(&v, Some(&v), at());
        }
    }
}

#[test]
fn image_tags_are_read_with_or_without_registry_port_or_digest() {
    assert_eq!(
        image_tag("ghcr.io/fluxcd/sc:v1.9.4@sha256:ab"),
        Some("v1.9.4")
    );
    assert_eq!(image_tag("localhost:5000/fluxcd/sc:v1"), Some("v1"));
    assert_eq!(image_tag("localhost:5000/fluxcd/sc"), None);
    assert_eq!(image_tag("sc@sha256:ab"), None);
}

#[test]
fn trouble_names_the_controllers_that_are_not_ready_or_the_instance_failing() {
    let mut report = sample("fluxreport.yaml");
    report["spec"]["components"][1]["ready"] = json!(false);
    report["spec"]["components"][3]["ready"] = json!(false);
    let r = Report::read(&report, None, at()).unwrap();
    assert_eq!(
        r.trouble().as_deref(),
        Some("Flux: kustomize-controller, source-controller are not ready")
    );
    let mut instance = sample("fluxinstance-ready.yaml");
    instance["status"]["conditions"][0]["status"] = json!("False");
    instance["status"]["conditions"][0]["message"] = json!("timeout waiting for Deployments");
    let r = Report::read(&sample("fluxreport.yaml"), Some(&instance), at()).unwrap();
    assert_eq!(
        r.trouble().as_deref(),
        Some("FluxInstance flux not ready: timeout waiting for Deployments")
    );
}

#[test]
fn skew_counts_versions_most_common_first_and_clusters_without_a_report() {
    let with = |version: &str| {
        let mut report = sample("fluxreport.yaml");
        report["spec"]["distribution"]["version"] = json!(version);
        Report::read(&report, None, at()).unwrap()
    };
    let (a, b, c, d) = (
        with("v2.9.4"),
        with("v2.9.10"),
        with("v2.9.4"),
        with("v2.9.3"),
    );
    let skew = Skew::of([Some(&a), None, Some(&b), Some(&c), Some(&d), None]);
    // Two on v2.9.4 first; the single ones newest first (2.9.10 after 2.9.3 as versions).
    assert_eq!(
        skew.versions,
        [("v2.9.4", 2), ("v2.9.10", 1), ("v2.9.3", 1)]
    );
    assert_eq!(skew.unreported, 2);
    assert_eq!(skew.main(), Some("v2.9.4"));
    assert!(skew.skewed());
    let one = Skew::of([Some(&a), Some(&c)]);
    assert!(!one.skewed());
    assert_eq!(Skew::of([None]).main(), None);
}
