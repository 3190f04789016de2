//! What suspend, resume and reconcile send, per kind: the exact JSON merge patches of the flux CLI
//! (FACTS §2), the kinds that support each verb, and the order of a reconcile "with source".
//! Pure: no I/O; `k8s::Writer` sends what this decides.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{FluxKind, FluxSummary, Health, ObjectKey};

pub const REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";
pub const FORCE_AT: &str = "reconcile.fluxcd.io/forceAt";
pub const RESET_AT: &str = "reconcile.fluxcd.io/resetAt";
pub const SUSPENDED_BY: &str = "fluxfleet.dev/suspended-by";
pub const SUSPEND_REASON: &str = "fluxfleet.dev/suspend-reason";
/// The Flux Operator's UI shows who suspended an object from this annotation.
pub const OPERATOR_SUSPENDED_BY: &str = "fluxcd.controlplane.io/suspendedBy";
/// ArtifactGenerator has no `spec.suspend`: this annotation set to `disabled` suspends it.
pub const SOURCE_WATCHER_RECONCILE: &str = "source.extensions.fluxcd.io/reconcile";

/// An action on Flux objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verb {
    Suspend,
    Resume,
    Reconcile,
    /// The source first (and the generated HelmChart of a HelmRelease), then the object.
    ReconcileWithSource,
    /// HelmRelease: a one-off install or upgrade even without changes.
    Force,
    /// HelmRelease: reset the failure counters so remediation retries start again.
    Reset,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Suspend => "suspend",
            Verb::Resume => "resume",
            Verb::Reconcile => "reconcile",
            Verb::ReconcileWithSource => "reconcile-with-source",
            Verb::Force => "force",
            Verb::Reset => "reset",
        }
    }

    /// Whether the request is done only when the controller has handled the token written.
    pub fn requests_reconcile(self) -> bool {
        !matches!(self, Verb::Suspend)
    }
}

impl std::fmt::Display for Verb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who acts, why, and the token that marks this request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intent {
    pub verb: Verb,
    /// The local user, written as the suspender.
    pub user: String,
    /// Why (suspend only); recorded on the object.
    pub reason: Option<String>,
    /// The value written to `reconcile.fluxcd.io/requestedAt` (and forceAt / resetAt): an opaque
    /// token, RFC 3339 time as the flux CLI writes it.
    pub token: String,
}

/// Why an action is not sent to an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The kind has no such operation (reconcile of an Alert, suspend of an ExternalArtifact…).
    NotSupported(String),
    /// Reconciling a suspended object does nothing: resume it first.
    Suspended,
    /// A guardrail of the config forbids it.
    Denied(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotSupported(why) => write!(f, "not supported: {why}"),
            Refusal::Suspended => f.write_str("suspended: resume it to reconcile it"),
            Refusal::Denied(why) => f.write_str(why),
        }
    }
}

/// One patch to one object.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub key: ObjectKey,
    /// A JSON merge patch (`application/merge-patch+json`), without resourceVersion.
    pub patch: Value,
    /// Wait until the controller has handled `requestedAt` before the next step (a source before
    /// the object that uses it).
    pub wait: bool,
}

/// The patches for `intent` on `target`, in order: a reconcile with source lists the sources
/// first. `lookup` finds other objects of the same cluster (the sources).
pub fn plan<'a>(
    intent: &Intent,
    target: &FluxSummary,
    lookup: impl Fn(&ObjectKey) -> Option<&'a FluxSummary>,
) -> Result<Vec<Step>, Refusal> {
    let kind = target.key.kind;
    match intent.verb {
        Verb::Suspend => Ok(vec![Step {
            key: target.key.clone(),
            patch: suspend(kind, intent)?,
            wait: false,
        }]),
        Verb::Resume => Ok(vec![Step {
            key: target.key.clone(),
            patch: resume(kind, intent)?,
            wait: false,
        }]),
        Verb::Reconcile | Verb::Force | Verb::Reset => Ok(vec![reconcile(target, intent)?]),
        Verb::ReconcileWithSource => {
            let mut steps = Vec::new();
            for source in sources_of(target)? {
                match lookup(&source) {
                    // A static source (an OCI HelmRepository) has nothing to reconcile.
                    Some(s) if is_static(s) => continue,
                    Some(s) if s.suspended => return Err(Refusal::Suspended),
                    _ => {}
                }
                steps.push(Step {
                    key: source,
                    patch: requested(intent, &[REQUESTED_AT]),
                    wait: true,
                });
            }
            let plain = Intent {
                verb: Verb::Reconcile,
                ..intent.clone()
            };
            steps.push(reconcile(target, &plain)?);
            Ok(steps)
        }
    }
}

fn suspend(kind: FluxKind, intent: &Intent) -> Result<Value, Refusal> {
    let mut annotations = Map::new();
    annotations.insert(SUSPENDED_BY.into(), json!(intent.user));
    annotations.insert(OPERATOR_SUSPENDED_BY.into(), json!(intent.user));
    // No reason given: an older reason must not stay behind.
    annotations.insert(SUSPEND_REASON.into(), json!(intent.reason));
    match kind {
        FluxKind::ExternalArtifact => Err(Refusal::NotSupported(
            "an ExternalArtifact is produced by another controller and cannot be suspended".into(),
        )),
        FluxKind::ArtifactGenerator => {
            annotations.insert(SOURCE_WATCHER_RECONCILE.into(), json!("disabled"));
            Ok(json!({"metadata": {"annotations": annotations}}))
        }
        _ => Ok(json!({"spec": {"suspend": true}, "metadata": {"annotations": annotations}})),
    }
}

/// Resume also requests a reconcile (as the Flux Operator does): the object moves at once
/// instead of at its next interval.
fn resume(kind: FluxKind, intent: &Intent) -> Result<Value, Refusal> {
    let mut annotations = Map::new();
    for key in [SUSPENDED_BY, OPERATOR_SUSPENDED_BY, SUSPEND_REASON] {
        annotations.insert(key.into(), Value::Null);
    }
    if reconcilable(kind) {
        annotations.insert(REQUESTED_AT.into(), json!(intent.token));
    }
    match kind {
        FluxKind::ExternalArtifact => Err(Refusal::NotSupported(
            "an ExternalArtifact is produced by another controller and cannot be resumed".into(),
        )),
        FluxKind::ArtifactGenerator => {
            annotations.insert(SOURCE_WATCHER_RECONCILE.into(), Value::Null);
            Ok(json!({"metadata": {"annotations": annotations}}))
        }
        // `suspend: false` is `omitempty` in Flux's types: the flux CLI's patch removes it.
        _ => Ok(json!({"spec": {"suspend": null}, "metadata": {"annotations": annotations}})),
    }
}

fn reconcile(target: &FluxSummary, intent: &Intent) -> Result<Step, Refusal> {
    let kind = target.key.kind;
    if !reconcilable(kind) {
        return Err(Refusal::NotSupported(format!(
            "{kind} has no reconcile (it acts on events, not on an interval)"
        )));
    }
    if is_static(target) {
        return Err(Refusal::NotSupported(
            "an OCI HelmRepository is static: there is nothing to reconcile".into(),
        ));
    }
    if target.suspended {
        return Err(Refusal::Suspended);
    }
    let keys: &[&str] = match intent.verb {
        Verb::Force | Verb::Reset if kind != FluxKind::HelmRelease => {
            return Err(Refusal::NotSupported(format!(
                "{} applies to HelmReleases only",
                intent.verb
            )));
        }
        // The controller acts on forceAt / resetAt only when they equal requestedAt.
        Verb::Force => &[REQUESTED_AT, FORCE_AT],
        Verb::Reset => &[REQUESTED_AT, RESET_AT],
        _ => &[REQUESTED_AT],
    };
    Ok(Step {
        key: target.key.clone(),
        patch: requested(intent, keys),
        wait: false,
    })
}

fn requested(intent: &Intent, keys: &[&str]) -> Value {
    let annotations: Map<String, Value> = keys
        .iter()
        .map(|k| ((*k).to_string(), json!(intent.token)))
        .collect();
    json!({"metadata": {"annotations": annotations}})
}

/// Kinds whose controller handles `reconcile.fluxcd.io/requestedAt`.
pub fn reconcilable(kind: FluxKind) -> bool {
    !matches!(
        kind,
        FluxKind::Alert | FluxKind::Provider | FluxKind::ExternalArtifact
    )
}

/// An OCI HelmRepository: no reconcile loop, no status to wait for.
fn is_static(s: &FluxSummary) -> bool {
    s.key.kind == FluxKind::HelmRepository && s.health == Health::NotApplicable
}

/// What `--with-source` reconciles before the object, in order (FACTS §2.4).
fn sources_of(target: &FluxSummary) -> Result<Vec<ObjectKey>, Refusal> {
    let kind = target.key.kind;
    let Some(source) = &target.source else {
        return Err(Refusal::NotSupported(format!(
            "{kind} {} names no source",
            target.key.name
        )));
    };
    let namespace = if source.namespace.is_empty() {
        &*target.key.namespace
    } else {
        &*source.namespace
    };
    let source_kind = FluxKind::from_kind(&source.kind);
    let key = |k: FluxKind| ObjectKey::new(k, namespace, &source.name);
    match (kind, source_kind) {
        (
            FluxKind::Kustomization,
            Some(k @ (FluxKind::GitRepository | FluxKind::OciRepository | FluxKind::Bucket)),
        ) => Ok(vec![key(k)]),
        // `spec.chartRef`: that object.
        (FluxKind::HelmRelease, Some(k @ (FluxKind::OciRepository | FluxKind::HelmChart))) => {
            Ok(vec![key(k)])
        }
        // `spec.chart`: the chart's source, then the HelmChart the controller generated for
        // this release, `<namespace>-<name>` beside the source.
        (
            FluxKind::HelmRelease,
            Some(k @ (FluxKind::HelmRepository | FluxKind::GitRepository | FluxKind::Bucket)),
        ) => Ok(vec![
            key(k),
            ObjectKey::new(
                FluxKind::HelmChart,
                namespace,
                &format!("{}-{}", target.key.namespace, target.key.name),
            ),
        ]),
        (FluxKind::HelmChart, Some(k)) => Ok(vec![key(k)]),
        (FluxKind::Kustomization | FluxKind::HelmRelease, _) => Err(Refusal::NotSupported(
            format!("cannot reconcile a source of kind {}", source.kind),
        )),
        _ => Err(Refusal::NotSupported(format!(
            "{kind} has no source to reconcile first"
        ))),
    }
}

/// How an action ended on one object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "message", rename_all = "kebab-case")]
pub enum Outcome {
    /// Accepted; for a reconcile, also handled by the controller.
    Done,
    /// The credentials may not patch this object.
    Forbidden(String),
    NotFound,
    /// Still conflicting after retries.
    Conflict(String),
    Unreachable(String),
    /// No answer, or the controller did not handle the request in time.
    TimedOut(String),
    /// Not sent: suspended, not supported, a guardrail.
    Refused(String),
    /// Any other answer from the API server.
    Failed(String),
}

impl Outcome {
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Forbidden(_) => "forbidden",
            Outcome::NotFound => "not found",
            Outcome::Conflict(_) => "conflict",
            Outcome::Unreachable(_) => "unreachable",
            Outcome::TimedOut(_) => "timed out",
            Outcome::Refused(_) => "refused",
            Outcome::Failed(_) => "failed",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Outcome::Done | Outcome::NotFound => "",
            Outcome::Forbidden(m)
            | Outcome::Conflict(m)
            | Outcome::Unreachable(m)
            | Outcome::TimedOut(m)
            | Outcome::Refused(m)
            | Outcome::Failed(m) => m,
        }
    }

    pub fn is_done(&self) -> bool {
        *self == Outcome::Done
    }
}

#[cfg(test)]
mod tests {
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
}
