//! The health of one Flux object, derived from its status the way FACTS §3.8 describes (kstatus
//! order, Flux condition conventions). The first rule that matches wins.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

use super::FluxKind;
use super::object::Object;
use crate::json::At;

/// What a user needs to know about one object at a glance, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Health {
    /// Stalled=True: terminal, no retry until the spec changes.
    Stalled,
    /// Ready=False: failing, retrying.
    Failed,
    /// `metadata.deletionTimestamp` is set.
    Deleting,
    /// Reconciling, Ready=Unknown, or a generation not yet observed.
    Progressing,
    /// No Ready condition yet ("waiting to be reconciled").
    Waiting,
    /// `spec.suspend: true` (the last Ready condition stays as detail).
    Suspended,
    /// Counted by a FluxReport as running and not failing: the report does not say whether it
    /// is ready, progressing or waiting on a dependency (never made from an object itself).
    Running,
    Ready,
    /// Static kinds without status (Alert, Provider).
    NotApplicable,
}

impl Health {
    /// Every health, worst first.
    pub const ALL: [Health; 9] = [
        Health::Stalled,
        Health::Failed,
        Health::Deleting,
        Health::Progressing,
        Health::Waiting,
        Health::Suspended,
        Health::Running,
        Health::Ready,
        Health::NotApplicable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Health::Stalled => "stalled",
            Health::Failed => "failed",
            Health::Deleting => "deleting",
            Health::Progressing => "progressing",
            Health::Waiting => "waiting",
            Health::Suspended => "suspended",
            Health::Running => "running",
            Health::Ready => "ready",
            Health::NotApplicable => "n/a",
        }
    }

    /// The name in JSON output (`not-applicable` where the tables print `n/a`).
    /// A health as [`Health::as_str`] or [`Health::key`] names it.
    pub fn parse(text: &str) -> Option<Health> {
        Health::ALL
            .into_iter()
            .find(|h| h.as_str() == text || h.key() == text)
    }

    pub fn key(self) -> &'static str {
        match self {
            Health::NotApplicable => "not-applicable",
            other => other.as_str(),
        }
    }

    /// Failing: stalled or failed — the controller gave up, or its last attempt failed
    /// (`--status failing`, the FAILING columns, the `!` filter).
    pub fn is_failing(self) -> bool {
        matches!(self, Health::Stalled | Health::Failed)
    }

    /// Not ready: anything but ready, running as a report counts it (not known either way),
    /// or without a status to judge (`--status not-ready`).
    pub fn is_not_ready(self) -> bool {
        !matches!(
            self,
            Health::Ready | Health::Running | Health::NotApplicable
        )
    }

    /// Needs attention: not ready, and not deliberately suspended (what triage lists).
    pub fn needs_attention(self) -> bool {
        self.is_not_ready() && self != Health::Suspended
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The condition of type `kind` in `status.conditions`, if any.
pub fn condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    object
        .at("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
}

/// Whether the object is suspended: `spec.suspend`, or the reconcile-disabled annotation that
/// ArtifactGenerator uses instead.
pub fn is_suspended(kind: FluxKind, object: &Object) -> bool {
    if kind == FluxKind::ArtifactGenerator {
        return object
            .annotation(super::annotations::SOURCE_WATCHER_RECONCILE)
            .is_some_and(|v| v.eq_ignore_ascii_case("disabled"));
    }
    object.spec().and_then(|s| s.suspend.0) == Some(true)
}

/// Computes the health of a Flux object from its JSON (FACTS §3.8).
pub fn health_of(kind: FluxKind, object: &Value) -> Health {
    health(kind, &Object::from_value(object))
}

/// The Ready reason of a Kustomization or HelmRelease whose health checks were canceled by a
/// new reconciliation (Flux 2.8: `New reconciliation triggered by GitRepository/…`).
const HEALTH_CHECK_CANCELED: &str = "HealthCheckCanceled";

/// Computes the health of a Flux object (FACTS §3.8).
pub fn health(kind: FluxKind, object: &Object) -> Health {
    if object.metadata().is_some_and(|m| m.deletion_timestamp.0) {
        return Health::Deleting;
    }
    if is_suspended(kind, object) {
        return Health::Suspended;
    }
    let status_of = |kind: &str| object.condition(kind).and_then(|c| c.status.get());
    if status_of("Stalled") == Some("True") {
        return Health::Stalled;
    }
    let ready = object.condition("Ready");
    let ready_status = ready.and_then(|c| c.status.get());
    // A health check cut short because a newer revision or request arrived: the controller is
    // already reconciling again (kustomize-controller and helm-controller requeue at once).
    let canceled = ready.and_then(|c| c.reason.get()) == Some(HEALTH_CHECK_CANCELED);
    if ready_status == Some("False") && !canceled {
        return Health::Failed;
    }
    let generation = object.generation();
    let observed = object.status().and_then(|s| s.observed_generation.0);
    let behind = matches!((generation, observed), (Some(g), Some(o)) if o < g);
    if status_of("Reconciling") == Some("True")
        || ready_status == Some("Unknown")
        || behind
        || canceled
    {
        return Health::Progressing;
    }
    if ready_status == Some("True") {
        let cond_gen = ready.and_then(|c| c.observed_generation.0);
        // Without metadata.generation (a hand-written document) there is nothing to be behind.
        let current = generation.is_none()
            || match cond_gen {
                Some(cg) if cg != 0 => Some(cg) == generation,
                _ => observed == generation,
            };
        return if current {
            Health::Ready
        } else {
            Health::Progressing
        };
    }
    // OCI HelmRepositories are static too: the source-controller never reconciles them.
    let oci_helm_repository =
        kind == FluxKind::HelmRepository && object.spec().and_then(|s| s.kind.get()) == Some("oci");
    if kind.is_static() || oci_helm_repository {
        return Health::NotApplicable;
    }
    Health::Waiting
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ks(status: Value) -> Value {
        json!({"metadata": {"generation": 3}, "spec": {}, "status": status})
    }

    #[test]
    fn ready_needs_the_current_generation() {
        let cond = |g| {
            json!({"observedGeneration": g, "conditions": [
            {"type": "Ready", "status": "True", "observedGeneration": g}]})
        };
        assert_eq!(
            health_of(FluxKind::Kustomization, &ks(cond(3))),
            Health::Ready
        );
        assert_eq!(
            health_of(FluxKind::Kustomization, &ks(cond(2))),
            Health::Progressing
        );
    }

    #[test]
    fn stalled_wins_over_failed_and_suspended_over_both() {
        let mut obj = ks(json!({"observedGeneration": 3, "conditions": [
            {"type": "Ready", "status": "False", "reason": "InstallFailed"},
            {"type": "Stalled", "status": "True", "reason": "RetriesExceeded"}]}));
        assert_eq!(health_of(FluxKind::HelmRelease, &obj), Health::Stalled);
        obj["spec"]["suspend"] = json!(true);
        assert_eq!(health_of(FluxKind::HelmRelease, &obj), Health::Suspended);
    }

    #[test]
    fn failing_with_retry_is_failed_not_progressing() {
        let obj = ks(json!({"observedGeneration": 3, "conditions": [
            {"type": "Reconciling", "status": "True", "reason": "ProgressingWithRetry"},
            {"type": "Ready", "status": "False", "reason": "HealthCheckFailed"}]}));
        assert_eq!(health_of(FluxKind::Kustomization, &obj), Health::Failed);
    }

    #[test]
    fn new_object_waits_and_static_kinds_are_not_applicable() {
        let fresh = ks(json!({"observedGeneration": -1}));
        assert_eq!(
            health_of(FluxKind::Kustomization, &fresh),
            Health::Progressing
        );
        let none = json!({"metadata": {"generation": 1}, "spec": {}});
        assert_eq!(health_of(FluxKind::Kustomization, &none), Health::Waiting);
        assert_eq!(health_of(FluxKind::Alert, &none), Health::NotApplicable);
    }

    #[test]
    fn deleting_comes_first() {
        let mut obj = ks(json!({}));
        obj["metadata"]["deletionTimestamp"] = json!("2026-08-20T10:00:00Z");
        obj["spec"]["suspend"] = json!(true);
        assert_eq!(health_of(FluxKind::Kustomization, &obj), Health::Deleting);
    }

    #[test]
    fn health_checks_canceled_by_a_new_revision_are_progressing_not_failed() {
        let canceled = ks(json!({"observedGeneration": 1, "conditions": [
            {"type": "Ready", "status": "False", "reason": "HealthCheckCanceled",
             "message": "New reconciliation triggered by GitRepository/flux-system/fleet"}]}));
        assert_eq!(
            health_of(FluxKind::Kustomization, &canceled),
            Health::Progressing
        );
        let failed = ks(json!({"observedGeneration": 1, "conditions": [
            {"type": "Ready", "status": "False", "reason": "HealthCheckFailed"}]}));
        assert_eq!(health_of(FluxKind::Kustomization, &failed), Health::Failed);
    }

    /// kstatus: Reconciling=True is in progress even beside a Ready=True of this generation.
    #[test]
    fn reconciling_alone_is_progressing() {
        let obj = ks(json!({"observedGeneration": 3, "conditions": [
            {"type": "Ready", "status": "True", "observedGeneration": 3},
            {"type": "Reconciling", "status": "True", "reason": "Progressing"}]}));
        assert_eq!(
            health_of(FluxKind::Kustomization, &obj),
            Health::Progressing
        );
    }

    /// A Ready condition is current only for its own generation when it names one, however far
    /// `status.observedGeneration` got; without one (0 or absent), the status's counts.
    #[test]
    fn a_stale_ready_condition_is_not_ready() {
        let with = |condition_generation: i64| {
            ks(json!({"observedGeneration": 3, "conditions": [
                {"type": "Ready", "status": "True", "observedGeneration": condition_generation}]}))
        };
        assert_eq!(
            health_of(FluxKind::Kustomization, &with(2)),
            Health::Progressing
        );
        assert_eq!(health_of(FluxKind::Kustomization, &with(3)), Health::Ready);
        assert_eq!(health_of(FluxKind::Kustomization, &with(0)), Health::Ready);
    }

    /// Only an OCI HelmRepository is static; an HTTP one not yet ready waits like any source.
    #[test]
    fn an_http_helm_repository_waits_and_an_oci_one_is_static() {
        let repository = |spec: Value| json!({"metadata": {"generation": 1}, "spec": spec});
        assert_eq!(
            health_of(
                FluxKind::HelmRepository,
                &repository(json!({"url": "https://x"}))
            ),
            Health::Waiting
        );
        assert_eq!(
            health_of(
                FluxKind::HelmRepository,
                &repository(json!({"type": "default"}))
            ),
            Health::Waiting
        );
        assert_eq!(
            health_of(
                FluxKind::HelmRepository,
                &repository(json!({"type": "oci"}))
            ),
            Health::NotApplicable
        );
        assert_eq!(
            health_of(FluxKind::OciRepository, &repository(json!({"type": "oci"}))),
            Health::Waiting
        );
    }

    /// What triage lists (needs attention), what `--status failing` and `not-ready` select, and
    /// how each health is written, for every health.
    #[test]
    fn each_health_says_what_it_is() {
        let rows: Vec<(String, bool, bool, bool)> = Health::ALL
            .iter()
            .map(|h| {
                (
                    h.to_string(),
                    h.is_failing(),
                    h.is_not_ready(),
                    h.needs_attention(),
                )
            })
            .collect();
        let expected = [
            ("stalled", true, true, true),
            ("failed", true, true, true),
            ("deleting", false, true, true),
            ("progressing", false, true, true),
            ("waiting", false, true, true),
            ("suspended", false, true, false),
            ("running", false, false, false),
            ("ready", false, false, false),
            ("n/a", false, false, false),
        ];
        let expected: Vec<(String, bool, bool, bool)> = expected
            .iter()
            .map(|(name, f, n, a)| (name.to_string(), *f, *n, *a))
            .collect();
        assert_eq!(rows, expected);
    }
}
