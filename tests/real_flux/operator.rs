//! The Flux Operator's FluxReport and FluxInstance, read as the summary tier reads them.

use super::object;

/// The FluxReport the real Flux Operator (v0.58.1, built from its repository; version unset in
/// that build) wrote on the cluster of the other fixtures, read as the summary tier reads one.
/// Of its seven Kustomizations five were Ready=False, and the operator counts four failing: it
/// leaves `after-broken` out, whose reason is DependencyNotReady — so a summarized cluster shows
/// it among the running, not failing, until opened.
#[test]
fn the_operators_report_counts_as_the_summary_tier_reads_it() {
    use fluxfleet::fleet::report::Report;
    use fluxfleet::fleet::{FluxKind, Health};
    let doc = object("fluxreport-flux.yaml");
    let report = Report::read(&doc, None, "2026-12-02T04:30:00Z".parse().unwrap()).unwrap();
    assert_eq!(report.version.as_deref(), Some("v2.9.4"));
    assert_eq!(report.status.as_deref(), Some("Installed"));
    assert_eq!(report.kubernetes.as_deref(), Some("v1.35.4"));
    let ks = report
        .reconcilers
        .iter()
        .find(|r| &*r.kind == "Kustomization")
        .unwrap();
    assert_eq!((ks.running, ks.failing, ks.suspended), (6, 4, 1));
    let counts = report
        .clone()
        .counting(&[FluxKind::Kustomization, FluxKind::HelmRelease])
        .counts;
    assert_eq!(
        (
            counts.get(Health::Failed),
            counts.get(Health::Running),
            counts.get(Health::Ready),
            counts.get(Health::Suspended)
        ),
        (7, 3, 0, 1)
    );
    // No Deployments run the controllers here (they ran as processes): no components, and
    // nothing said to be wrong with Flux itself.
    assert!(report.components.is_empty());
    assert_eq!(report.trouble(), None);
}

/// The Flux Operator installing Flux: a FluxInstance (v2.9.x, from the distribution manifests the
/// operator carries, its Deployments run by kube-controller-manager and kwok) and the FluxReport
/// it then writes, read as the summary tier reads them: the version installed, each component
/// with its image's version, who manages Flux, and the instance ready.
#[test]
fn the_operators_instance_and_its_report_read_as_installed() {
    use fluxfleet::fleet::report::Report;
    let report = Report::read(
        &object("operator/fluxreport-flux.yaml"),
        Some(&object("operator/fluxinstance-flux.yaml")),
        "2026-12-02T07:40:00Z".parse().unwrap(),
    )
    .unwrap();
    assert_eq!(report.version.as_deref(), Some("v2.9.4"));
    assert_eq!(report.status.as_deref(), Some("Installed"));
    assert_eq!(report.managed_by.as_deref(), Some("flux-operator"));
    assert_eq!(report.kubernetes.as_deref(), Some("v1.35.4"));
    let components: Vec<(&str, Option<&str>, bool)> = report
        .components
        .iter()
        .map(|c| (&*c.name, c.version.as_deref(), c.ready))
        .collect();
    assert_eq!(
        components,
        [
            ("helm-controller", Some("v1.6.3"), true),
            ("kustomize-controller", Some("v1.9.4"), true),
            ("notification-controller", Some("v1.9.3"), true),
            ("source-controller", Some("v1.9.4"), true),
        ]
    );
    let instance = report.instance.as_deref().unwrap();
    assert_eq!(&*instance.name, "flux");
    assert_eq!(instance.ready, Some(true));
    assert_eq!(instance.wants.as_deref(), Some("2.9.x"));
    assert!(
        instance
            .revision
            .as_deref()
            .unwrap()
            .starts_with("v2.9.4@sha256:"),
        "{:?}",
        instance.revision
    );
    assert_eq!(report.trouble(), None);
}
