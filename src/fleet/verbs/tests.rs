#![allow(clippy::unwrap_used)]
use super::*;

fn intent(verb: Verb, reason: Option<&str>) -> Intent {
    Intent {
        verb,
        user: "alice".into(),
        reason: reason.map(Into::into),
        token: "2026-11-21T10:00:00.123456789Z".into(),
    }
}

fn object(kind: FluxKind, name: &str, spec: Value) -> FluxSummary {
    let obj = json!({
        "metadata": {"name": name, "namespace": "apps"},
        "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    });
    FluxSummary::of(kind, &obj).unwrap()
}

fn none(_: &ObjectKey) -> Option<&'static FluxSummary> {
    None
}

fn only(steps: Result<Vec<Step>, Refusal>) -> Value {
    let steps = steps.unwrap();
    assert_eq!(steps.len(), 1);
    steps[0].patch.clone()
}

#[test]
fn suspend_sets_spec_suspend_and_records_who_and_why_on_every_suspendable_kind() {
    for kind in FluxKind::ALL {
        let target = object(kind, "x", json!({}));
        let got = plan(&intent(Verb::Suspend, Some("flapping")), &target, none);
        let annotations = json!({
            "fluxfleet.dev/suspended-by": "alice",
            "fluxcd.controlplane.io/suspendedBy": "alice",
            "fluxfleet.dev/suspend-reason": "flapping",
        });
        match kind {
            FluxKind::ExternalArtifact => {
                assert!(matches!(got, Err(Refusal::NotSupported(_))), "{kind}")
            }
            FluxKind::ArtifactGenerator => {
                let mut a = annotations.clone();
                a["source.extensions.fluxcd.io/reconcile"] = json!("disabled");
                assert_eq!(only(got), json!({"metadata": {"annotations": a}}));
            }
            _ => assert_eq!(
                only(got),
                json!({"spec": {"suspend": true}, "metadata": {"annotations": annotations}}),
                "{kind}"
            ),
        }
    }
}

#[test]
fn suspend_without_a_reason_removes_an_old_one() {
    let target = object(FluxKind::Kustomization, "x", json!({}));
    let patch = only(plan(&intent(Verb::Suspend, None), &target, none));
    assert_eq!(
        patch.pointer("/metadata/annotations/fluxfleet.dev~1suspend-reason"),
        Some(&Value::Null)
    );
}

#[test]
fn resume_removes_suspend_and_its_annotations_and_requests_a_reconcile() {
    let target = object(FluxKind::HelmRelease, "x", json!({"suspend": true}));
    assert_eq!(
        only(plan(&intent(Verb::Resume, None), &target, none)),
        json!({"spec": {"suspend": null}, "metadata": {"annotations": {
            "fluxfleet.dev/suspended-by": null,
            "fluxcd.controlplane.io/suspendedBy": null,
            "fluxfleet.dev/suspend-reason": null,
            "reconcile.fluxcd.io/requestedAt": "2026-11-21T10:00:00.123456789Z",
        }}})
    );
    // Alerts and Providers do not reconcile: resume only resumes.
    let alert = object(FluxKind::Alert, "x", json!({"suspend": true}));
    let patch = only(plan(&intent(Verb::Resume, None), &alert, none));
    assert_eq!(
        patch.pointer("/metadata/annotations/reconcile.fluxcd.io~1requestedAt"),
        None
    );
    let generator = object(FluxKind::ArtifactGenerator, "x", json!({}));
    let patch = only(plan(&intent(Verb::Resume, None), &generator, none));
    assert_eq!(
        patch.pointer("/metadata/annotations/source.extensions.fluxcd.io~1reconcile"),
        Some(&Value::Null)
    );
    assert_eq!(patch.get("spec"), None);
}

#[test]
fn reconcile_writes_requested_at_where_supported_and_refuses_elsewhere() {
    for kind in FluxKind::ALL {
        let target = object(kind, "x", json!({}));
        let got = plan(&intent(Verb::Reconcile, None), &target, none);
        if matches!(
            kind,
            FluxKind::Alert | FluxKind::Provider | FluxKind::ExternalArtifact
        ) {
            assert!(matches!(got, Err(Refusal::NotSupported(_))), "{kind}");
        } else {
            assert_eq!(
                only(got),
                json!({"metadata": {"annotations": {
                    "reconcile.fluxcd.io/requestedAt": "2026-11-21T10:00:00.123456789Z"}}}),
                "{kind}"
            );
        }
    }
    let suspended = object(FluxKind::Kustomization, "x", json!({"suspend": true}));
    assert_eq!(
        plan(&intent(Verb::Reconcile, None), &suspended, none),
        Err(Refusal::Suspended)
    );
    let oci = FluxSummary::of(
        FluxKind::HelmRepository,
        &json!({"metadata": {"name": "charts", "namespace": "apps"},
                "spec": {"type": "oci", "url": "oci://ghcr.io/x"}}),
    )
    .unwrap();
    assert!(matches!(
        plan(&intent(Verb::Reconcile, None), &oci, none),
        Err(Refusal::NotSupported(_))
    ));
}

#[test]
fn force_and_reset_carry_the_same_token_as_requested_at_on_helmreleases_only() {
    let hr = object(FluxKind::HelmRelease, "podinfo", json!({}));
    let token = "2026-11-21T10:00:00.123456789Z";
    assert_eq!(
        only(plan(&intent(Verb::Force, None), &hr, none)),
        json!({"metadata": {"annotations": {
            "reconcile.fluxcd.io/requestedAt": token,
            "reconcile.fluxcd.io/forceAt": token}}})
    );
    assert_eq!(
        only(plan(&intent(Verb::Reset, None), &hr, none)),
        json!({"metadata": {"annotations": {
            "reconcile.fluxcd.io/requestedAt": token,
            "reconcile.fluxcd.io/resetAt": token}}})
    );
    let ks = object(FluxKind::Kustomization, "apps", json!({}));
    assert!(matches!(
        plan(&intent(Verb::Force, None), &ks, none),
        Err(Refusal::NotSupported(_))
    ));
}

#[test]
fn with_source_reconciles_the_source_then_the_object() {
    let ks = object(
        FluxKind::Kustomization,
        "apps",
        json!({"sourceRef": {"kind": "GitRepository", "name": "fleet", "namespace": "flux-system"}}),
    );
    let steps = plan(&intent(Verb::ReconcileWithSource, None), &ks, none).unwrap();
    let keys: Vec<String> = steps
        .iter()
        .map(|s| {
            format!(
                "{} {}/{} wait={}",
                s.key.kind, s.key.namespace, s.key.name, s.wait
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            "GitRepository flux-system/fleet wait=true",
            "Kustomization apps/apps wait=false"
        ]
    );
}

#[test]
fn with_source_on_a_helmrelease_goes_through_its_generated_chart() {
    let hr = object(
        FluxKind::HelmRelease,
        "podinfo",
        json!({"chart": {"spec": {"chart": "podinfo",
            "sourceRef": {"kind": "HelmRepository", "name": "podinfo", "namespace": "flux-system"}}}}),
    );
    let steps = plan(&intent(Verb::ReconcileWithSource, None), &hr, none).unwrap();
    let keys: Vec<String> = steps
        .iter()
        .map(|s| format!("{} {}/{}", s.key.kind, s.key.namespace, s.key.name))
        .collect();
    assert_eq!(
        keys,
        [
            "HelmRepository flux-system/podinfo",
            "HelmChart flux-system/apps-podinfo",
            "HelmRelease apps/podinfo"
        ]
    );
    // An OCI HelmRepository is static: skipped, the chart and the release remain.
    let oci = FluxSummary::of(
        FluxKind::HelmRepository,
        &json!({"metadata": {"name": "podinfo", "namespace": "flux-system"},
                "spec": {"type": "oci", "url": "oci://ghcr.io/x"}}),
    )
    .unwrap();
    let lookup = |k: &ObjectKey| (k.kind == FluxKind::HelmRepository).then_some(&oci);
    let steps = plan(&intent(Verb::ReconcileWithSource, None), &hr, lookup).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].key.kind, FluxKind::HelmChart);
    // A Kustomization fed by an ExternalArtifact: the flux CLI refuses, so do we.
    let ks = object(
        FluxKind::Kustomization,
        "apps",
        json!({"sourceRef": {"kind": "ExternalArtifact", "name": "a"}}),
    );
    assert!(matches!(
        plan(&intent(Verb::ReconcileWithSource, None), &ks, none),
        Err(Refusal::NotSupported(_))
    ));
}

/// Every kind's resume: the patch, or the refusal of an ExternalArtifact (another
/// controller's product, as `flux resume` refuses it).
#[test]
fn resume_patches_every_kind_but_an_external_artifact() {
    for kind in FluxKind::ALL {
        let target = object(kind, "x", json!({"suspend": true}));
        let planned = plan(&intent(Verb::Resume, None), &target, none);
        match kind {
            FluxKind::ExternalArtifact => {
                assert!(matches!(planned, Err(Refusal::NotSupported(_))), "{kind}");
            }
            _ => {
                let patch = only(planned);
                assert_eq!(
                    patch.pointer("/metadata/annotations/fluxfleet.dev~1suspended-by"),
                    Some(&Value::Null),
                    "{kind}"
                );
            }
        }
    }
}

/// A source found on the cluster: a live one is reconciled first and waited for; a suspended
/// one refuses the whole action (the flux CLI: "source is suspended").
#[test]
fn with_source_reconciles_a_live_source_and_refuses_a_suspended_one() {
    let ks = object(
        FluxKind::Kustomization,
        "apps",
        json!({"sourceRef": {"kind": "GitRepository", "name": "fleet"}}),
    );
    let live = object(FluxKind::GitRepository, "fleet", json!({}));
    let steps = plan(&intent(Verb::ReconcileWithSource, None), &ks, |_| {
        Some(&live)
    })
    .unwrap();
    let keys: Vec<(FluxKind, bool)> = steps.iter().map(|s| (s.key.kind, s.wait)).collect();
    assert_eq!(
        keys,
        [
            (FluxKind::GitRepository, true),
            (FluxKind::Kustomization, false)
        ]
    );
    let suspended = object(FluxKind::GitRepository, "fleet", json!({"suspend": true}));
    assert!(matches!(
        plan(&intent(Verb::ReconcileWithSource, None), &ks, |_| Some(
            &suspended
        )),
        Err(Refusal::SourceSuspended(k)) if k == suspended.key
    ));
    assert_eq!(
        Refusal::SourceSuspended(suspended.key.clone()).to_string(),
        "its source GitRepository apps/fleet is suspended: resume the source to \
         reconcile with it, or reconcile without --with-source"
    );
}

/// `spec.chartRef` (an OCIRepository or a HelmChart) is the release's one source; a HelmChart's
/// own source comes before it.
#[test]
fn with_source_follows_a_chart_ref_and_a_helmcharts_source() {
    let keys = |target: &FluxSummary| -> Vec<String> {
        plan(&intent(Verb::ReconcileWithSource, None), target, none)
            .unwrap()
            .iter()
            .map(|s| format!("{} {}", s.key.kind, s.key.name))
            .collect()
    };
    for (source, kind) in [
        ("OCIRepository", "OCIRepository"),
        ("HelmChart", "HelmChart"),
    ] {
        let hr = object(
            FluxKind::HelmRelease,
            "podinfo",
            json!({"chartRef": {"kind": source, "name": "chart"}}),
        );
        assert_eq!(
            keys(&hr),
            [format!("{kind} chart"), "HelmRelease podinfo".into()]
        );
    }
    let chart = object(
        FluxKind::HelmChart,
        "apps-podinfo",
        json!({"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}),
    );
    assert_eq!(
        keys(&chart),
        ["HelmRepository podinfo", "HelmChart apps-podinfo"]
    );
}

/// Only `Done` is done: `--wait` and the object step of a reconcile-with-source go on from it
/// alone.
#[test]
fn only_done_is_done() {
    let all = [
        Outcome::Done,
        Outcome::Forbidden("f".into()),
        Outcome::NotFound,
        Outcome::Conflict("c".into()),
        Outcome::Unreachable("u".into()),
        Outcome::TimedOut("t".into()),
        Outcome::Refused("r".into()),
        Outcome::Failed("x".into()),
    ];
    let done: Vec<bool> = all.iter().map(Outcome::is_done).collect();
    assert_eq!(
        done,
        [true, false, false, false, false, false, false, false]
    );
}

/// Only a suspend is done when the patch is accepted: every other verb waits for the controller
/// to handle the token (`--wait`, and the results view's "requested").
#[test]
fn every_verb_but_suspend_waits_for_its_controller() {
    for verb in [
        Verb::Resume,
        Verb::Reconcile,
        Verb::ReconcileWithSource,
        Verb::Force,
        Verb::Reset,
    ] {
        assert!(verb.requests_reconcile(), "{verb}");
    }
    assert!(!Verb::Suspend.requests_reconcile());
}

/// What the dry run, the confirmation and the journal say for each refusal.
#[test]
fn each_refusal_says_why() {
    assert_eq!(
        Refusal::NotSupported("an Alert has no reconcile".into()).to_string(),
        "not supported: an Alert has no reconcile"
    );
    assert_eq!(
        Refusal::Suspended.to_string(),
        "suspended: resume it to reconcile it"
    );
    assert_eq!(
        Refusal::Denied("denied by actions.deny[0]".into()).to_string(),
        "denied by actions.deny[0]"
    );
}

/// A source fluxfleet cannot reconcile first is named by its kind; a kind with no source says
/// so instead.
#[test]
fn with_source_names_a_source_it_cannot_reconcile() {
    let refusal = |target: &FluxSummary| {
        plan(&intent(Verb::ReconcileWithSource, None), target, none)
            .unwrap_err()
            .to_string()
    };
    let ks = object(
        FluxKind::Kustomization,
        "apps",
        json!({"sourceRef": {"kind": "ExternalArtifact", "name": "apps"}}),
    );
    assert_eq!(
        refusal(&ks),
        "not supported: cannot reconcile a source of kind ExternalArtifact"
    );
    let hr = object(
        FluxKind::HelmRelease,
        "podinfo",
        json!({"chartRef": {"kind": "ExternalArtifact", "name": "chart"}}),
    );
    assert_eq!(
        refusal(&hr),
        "not supported: cannot reconcile a source of kind ExternalArtifact"
    );
}

/// An outcome's message is what the server or the watch said; done and not-found have none.
#[test]
fn an_outcome_carries_its_message() {
    assert_eq!(Outcome::Done.message(), "");
    assert_eq!(Outcome::NotFound.message(), "");
    for outcome in [
        Outcome::Forbidden("m".into()),
        Outcome::Conflict("m".into()),
        Outcome::Unreachable("m".into()),
        Outcome::TimedOut("m".into()),
        Outcome::Refused("m".into()),
        Outcome::Failed("m".into()),
    ] {
        assert_eq!(outcome.message(), "m", "{outcome:?}");
    }
}

/// `flux resume` after a suspend fluxfleet recorded removes `spec.suspend` and keeps the
/// annotations (seen on the flux CLI v2.9.4: the `fluxfleet-annotations` timeline): they are
/// stale — not said as who suspended it — and the next action fluxfleet takes removes them.
#[test]
fn who_suspended_it_left_behind_by_another_resume_is_stale_and_goes_with_the_next_action() {
    let obj = json!({
        "metadata": {"name": "web", "namespace": "apps", "annotations": {
            "fluxfleet.dev/suspended-by": "bob",
            "fluxcd.controlplane.io/suspendedBy": "bob",
            "fluxfleet.dev/suspend-reason": "maintenance"}},
        "spec": {"sourceRef": {"kind": "GitRepository", "name": "fleet"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    });
    let resumed = FluxSummary::of(FluxKind::Kustomization, &obj).unwrap();
    assert!(!resumed.suspended);
    assert_eq!(
        (resumed.suspended_by(), resumed.suspend_reason()),
        (None, None)
    );
    assert!(resumed.stale_suspension());
    let steps = plan(&intent(Verb::Reconcile, None), &resumed, none).unwrap();
    assert_eq!(
        steps[0].patch,
        json!({"metadata": {"annotations": {
            "reconcile.fluxcd.io/requestedAt": "2026-11-21T10:00:00.123456789Z",
            "fluxfleet.dev/suspended-by": null,
            "fluxcd.controlplane.io/suspendedBy": null,
            "fluxfleet.dev/suspend-reason": null}}})
    );
    // Suspended, they say who and why; nothing is stale, and a reconcile is refused.
    let mut suspended = obj.clone();
    suspended["spec"]["suspend"] = json!(true);
    let suspended = FluxSummary::of(FluxKind::Kustomization, &suspended).unwrap();
    assert_eq!(
        (suspended.suspended_by(), suspended.suspend_reason()),
        (Some("bob"), Some("maintenance"))
    );
    assert!(!suspended.stale_suspension());
    // Without them, a reconcile's patch is exactly the flux CLI's.
    let plain = object(FluxKind::Kustomization, "web", json!({}));
    let steps = plan(&intent(Verb::Reconcile, None), &plain, none).unwrap();
    assert_eq!(
        steps[0].patch,
        json!({"metadata": {"annotations": {
            "reconcile.fluxcd.io/requestedAt": "2026-11-21T10:00:00.123456789Z"}}})
    );
}
