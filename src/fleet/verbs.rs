//! What suspend, resume and reconcile send, per kind: the exact JSON merge patches of the flux CLI
//! (FACTS §2), the kinds that support each verb, and the order of a reconcile "with source".
//! Pure: no I/O; `k8s::KubeWriter` sends what this decides.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{FluxKind, FluxSummary, Health, ObjectKey};

use super::annotations::{
    FORCE_AT, OPERATOR_SUSPENDED_BY, REQUESTED_AT, RESET_AT, SOURCE_WATCHER_RECONCILE,
    SUSPEND_REASON, SUSPENDED_BY,
};

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

    /// The verb Flux's RBAC model gives this action on a Flux kind — the custom verbs a team's
    /// Roles grant for the Flux web UI's actions (`reconcile`, `suspend`, `resume`), and the
    /// `event.toolkit.fluxcd.io/action` of its audit Events.
    pub fn flux_rbac(self) -> &'static str {
        match self {
            Verb::Suspend => "suspend",
            Verb::Resume => "resume",
            Verb::Reconcile | Verb::ReconcileWithSource | Verb::Force | Verb::Reset => "reconcile",
        }
    }
}

/// What a cluster answered a `SelfSubjectAccessReview`: may the identity our requests run as
/// do `verb` on an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Allowed,
    /// RBAC said no; the server's reason, where it gave one (RBAC's own denial gives none).
    Denied(String),
    /// No answer: the review was refused, failed or timed out — a guardrail that cannot be
    /// checked refuses.
    Unanswered(String),
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
    /// Reconciling with its source reconciles the source first, and the source is suspended.
    SourceSuspended(ObjectKey),
    /// A guardrail of the config forbids it.
    Denied(String),
    /// Nothing the user has reaches its cluster (a cluster of the bus no kubeconfig reaches).
    Unreachable(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotSupported(why) => write!(f, "not supported: {why}"),
            Refusal::Suspended => f.write_str("suspended: resume it to reconcile it"),
            Refusal::SourceSuspended(source) => write!(
                f,
                "its source {} {}/{} is suspended: resume the source to reconcile with it, or \
                 reconcile without --with-source",
                source.kind, source.namespace, source.name
            ),
            Refusal::Denied(why) | Refusal::Unreachable(why) => f.write_str(why),
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
                    Some(s) if s.suspended => return Err(Refusal::SourceSuspended(s.key.clone())),
                    _ => {}
                }
                steps.push(Step {
                    key: source,
                    patch: requested(intent, &[REQUESTED_AT]),
                    wait: true,
                });
            }
            // Then the object itself, as a plain reconcile: `reconcile` reads the verb only to
            // tell force and reset apart.
            steps.push(reconcile(target, intent)?);
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
    let mut patch = requested(intent, keys);
    // Who suspended it, left behind by a resume that was not fluxfleet's (`flux resume` keeps
    // annotations): gone with the next action fluxfleet takes on it.
    if target.stale_suspension()
        && let Some(annotations) = patch
            .pointer_mut("/metadata/annotations")
            .and_then(Value::as_object_mut)
    {
        for key in [SUSPENDED_BY, OPERATOR_SUSPENDED_BY, SUSPEND_REASON] {
            annotations.insert(key.into(), Value::Null);
        }
    }
    Ok(Step {
        key: target.key.clone(),
        patch,
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
/// (Alert and Provider are static; an ExternalArtifact is another controller's product.)
pub fn reconcilable(kind: FluxKind) -> bool {
    !kind.is_static() && kind != FluxKind::ExternalArtifact
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
mod tests;
