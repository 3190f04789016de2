//! Writes Flux status blocks the way the controllers do (FACTS §3.1, the samples): Ready as the
//! summary, Reconciling/ProgressingWithRetry while retrying, Stalled when terminal, the previous
//! artifact or applied revision kept on failure.

use serde_json::{Value, json};

use super::store::Intent;
use crate::fleet::{FluxKind, Health};

/// Why an object fails; decides reason and message. Messages depend on the object, never on the
/// cluster, so that the same failure on many clusters reads the same (and groups in triage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    GitAuth,
    OciPull,
    HelmIndex,
    ChartPull,
    BucketDenied,
    BuildFailed,
    HealthCheck,
    DependencyNotReady,
    InvalidCel,
    InstallFailed,
    RetriesExceeded,
    UpgradeRolledBack,
    Generic,
}

impl Failure {
    /// The failures a kind can show when retrying, and the one it shows when stalled.
    pub fn for_kind(kind: FluxKind) -> (&'static [Failure], Failure) {
        match kind {
            FluxKind::GitRepository => (&[Failure::GitAuth], Failure::Generic),
            FluxKind::OciRepository => (&[Failure::OciPull], Failure::Generic),
            FluxKind::HelmRepository => (&[Failure::HelmIndex], Failure::Generic),
            FluxKind::HelmChart => (&[Failure::ChartPull], Failure::Generic),
            FluxKind::Bucket => (&[Failure::BucketDenied], Failure::Generic),
            FluxKind::Kustomization => (
                &[
                    Failure::BuildFailed,
                    Failure::HealthCheck,
                    Failure::HealthCheck,
                ],
                Failure::InvalidCel,
            ),
            FluxKind::HelmRelease => (
                &[Failure::InstallFailed, Failure::UpgradeRolledBack],
                Failure::RetriesExceeded,
            ),
            _ => (&[Failure::Generic], Failure::Generic),
        }
    }
}

/// What the renderer needs to know about the object beside its JSON.
pub struct Context<'a> {
    pub kind: FluxKind,
    /// The revision the object should reach (its artifact for sources, its source's artifact for
    /// appliers).
    pub revision: &'a str,
    /// RFC 3339 time of this change.
    pub now: &'a str,
    /// `reconcile.fluxcd.io/requestedAt` being handled, if any.
    pub handled: Option<&'a str>,
}

/// Reconciling=True and Ready=Unknown, both reason Progressing: a reconcile under way.
fn progressing(
    conditions: &mut Vec<Value>,
    reconciling: &str,
    ready: &str,
    generation: i64,
    time: &str,
) {
    conditions.push(cond(
        "Reconciling",
        "True",
        "Progressing",
        reconciling,
        generation,
        time,
    ));
    conditions.push(cond(
        "Ready",
        "Unknown",
        "Progressing",
        ready,
        generation,
        time,
    ));
}

fn cond(
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    generation: i64,
    time: &str,
) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message,
           "observedGeneration": generation, "lastTransitionTime": time})
}

/// Keeps the lastTransitionTime of a condition whose status did not change.
fn carry_transition_times(old: &Value, new: &mut [Value]) {
    let Some(old) = old.pointer("/status/conditions").and_then(Value::as_array) else {
        return;
    };
    for c in new {
        if let Some(prev) = old
            .iter()
            .find(|p| p["type"] == c["type"] && p["status"] == c["status"])
        {
            c["lastTransitionTime"] = prev["lastTransitionTime"].clone();
        }
    }
}

fn digest_of(seed: &str) -> String {
    // A stable, fake sha256 derived from the text (FNV-1a expanded to 64 hex digits).
    let mut out = String::with_capacity(64);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for round in 0u8..4 {
        for b in seed.bytes().chain([round]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

pub fn sha256_of(seed: &str) -> String {
    format!("sha256:{}", digest_of(seed))
}

fn meta_str<'a>(obj: &'a Value, path: &str) -> &'a str {
    obj.pointer(path).and_then(Value::as_str).unwrap_or("")
}

/// Reason and message of a failure for this object.
pub fn failure_text(f: Failure, obj: &Value, ctx: &Context) -> (&'static str, String) {
    let name = meta_str(obj, "/metadata/name");
    let ns = meta_str(obj, "/metadata/namespace");
    let url = meta_str(obj, "/spec/url");
    let chart = chart_name(obj);
    match f {
        Failure::GitAuth => (
            "GitOperationFailed",
            format!(
                "failed to checkout and determine revision: unable to clone '{url}': ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain"
            ),
        ),
        Failure::OciPull => (
            "OCIArtifactPullFailed",
            format!(
                "failed to pull artifact from '{url}': GET https://ghcr.io/v2/{name}/manifests/latest: MANIFEST_UNKNOWN: manifest unknown"
            ),
        ),
        Failure::HelmIndex => (
            "IndexationFailed",
            format!(
                "failed to fetch Helm repository index: failed to cache index to temporary file: Get \"{url}/index.yaml\": dial tcp: lookup {}: no such host",
                url.trim_start_matches("https://")
                    .split('/')
                    .next()
                    .unwrap_or("")
            ),
        ),
        Failure::ChartPull => (
            "ChartPullFailed",
            format!(
                "invalid chart reference: failed to get chart version for remote reference: no '{chart}' chart with version matching '{}' found",
                meta_str(obj, "/spec/version")
            ),
        ),
        Failure::BucketDenied => (
            "BucketOperationFailed",
            format!(
                "failed to confirm existence of '{}' bucket: Access Denied",
                meta_str(obj, "/spec/bucketName")
            ),
        ),
        Failure::BuildFailed => (
            "BuildFailed",
            format!(
                "kustomize build failed: accumulating resources: accumulation err='accumulating resources from '{}/overlay': open /tmp/kustomization-{name}/{}/overlay: no such file or directory'",
                meta_str(obj, "/spec/path"),
                meta_str(obj, "/spec/path").trim_start_matches("./")
            ),
        ),
        Failure::HealthCheck => (
            "HealthCheckFailed",
            format!(
                "health check failed after 5m0.031942s: timeout waiting for: [Deployment/{}/{} status: 'InProgress']",
                workload_namespace(name),
                name
            ),
        ),
        Failure::DependencyNotReady => {
            let dep = obj
                .pointer("/spec/dependsOn/0/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            (
                "DependencyNotReady",
                format!("dependency '{ns}/{dep}' is not ready"),
            )
        }
        Failure::InvalidCel => (
            "InvalidCELExpression",
            format!(
                "failed to parse health check expression for {}: undeclared reference to 'stat'",
                name
            ),
        ),
        Failure::InstallFailed | Failure::RetriesExceeded => (
            "InstallFailed",
            format!(
                "Helm install failed for release {ns}/{name} with chart {chart}@{}: context deadline exceeded",
                ctx.revision
            ),
        ),
        Failure::UpgradeRolledBack => (
            "RollbackSucceeded",
            format!(
                "Helm rollback to previous release {ns}/{name}.v2 with chart {chart}@{} succeeded",
                ctx.revision
            ),
        ),
        Failure::Generic => (
            "ReconciliationFailed",
            format!("{} {ns}/{name} reconciliation failed", ctx.kind),
        ),
    }
}

fn workload_namespace(name: &str) -> &str {
    match name {
        "infra-controllers" | "infra-configs" => "kube-system",
        "apps" => "apps",
        other => other,
    }
}

fn chart_name(obj: &Value) -> &str {
    obj.pointer("/spec/chart/spec/chart")
        .or_else(|| obj.pointer("/spec/chart"))
        .and_then(Value::as_str)
        .or_else(|| obj.pointer("/spec/chartRef/name").and_then(Value::as_str))
        .unwrap_or("")
}

/// The new `status` of `obj` for the intended state.
pub fn render_status(obj: &Value, intent: Intent, ctx: &Context) -> Value {
    let failure = intent.failure;
    let generation = obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let old = obj.get("status").cloned().unwrap_or_else(|| json!({}));
    let mut status = match ctx.kind {
        FluxKind::Kustomization => applier(obj, &old, intent, failure, ctx, generation, true),
        FluxKind::HelmRelease => applier(obj, &old, intent, failure, ctx, generation, false),
        FluxKind::Alert | FluxKind::Provider => return json!({}),
        _ => source(obj, &old, intent, failure, ctx, generation),
    };
    status["observedGeneration"] = match intent.health {
        Health::Failed | Health::Stalled => old
            .get("observedGeneration")
            .cloned()
            .unwrap_or(json!(generation)),
        _ => json!(generation),
    };
    if let Some(token) = ctx.handled {
        status["lastHandledReconcileAt"] = json!(token);
    } else if let Some(prev) = old.get("lastHandledReconcileAt") {
        status["lastHandledReconcileAt"] = prev.clone();
    }
    for key in ["lastHandledForceAt", "lastHandledResetAt"] {
        if let Some(prev) = old.get(key) {
            status[key] = prev.clone();
        }
    }
    if let Some(conds) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        carry_transition_times(obj, conds);
    }
    status
}

fn source(
    obj: &Value,
    old: &Value,
    intent: Intent,
    failure: Option<Failure>,
    ctx: &Context,
    generation: i64,
) -> Value {
    let name = meta_str(obj, "/metadata/name");
    let ns = meta_str(obj, "/metadata/namespace");
    let plural = ctx.kind.as_str().to_ascii_lowercase();
    let rev = ctx.revision;
    let (ok_reason, ok_msg) = match ctx.kind {
        FluxKind::HelmChart => (
            "ChartPullSucceeded",
            format!("pulled '{}' chart with version '{rev}'", chart_name(obj)),
        ),
        FluxKind::OciRepository => ("Succeeded", format!("stored artifact for digest '{rev}'")),
        FluxKind::HelmRepository => ("Succeeded", format!("stored artifact: revision '{rev}'")),
        _ => ("Succeeded", format!("stored artifact for revision '{rev}'")),
    };
    let file = rev.rsplit(':').next().unwrap_or(rev);
    let artifact = json!({
        "digest": sha256_of(&format!("{ns}/{name}/{rev}")),
        "lastUpdateTime": ctx.now,
        "path": format!("{plural}/{ns}/{name}/{file}.tar.gz"),
        "revision": rev,
        "size": 4096 + (digest_of(rev).len() * 211) % 60000,
        "url": format!("http://source-controller.flux-system.svc.cluster.local./{plural}/{ns}/{name}/{file}.tar.gz"),
    });
    let mut status = json!({});
    let mut conditions = Vec::new();
    match intent.health {
        Health::Failed | Health::Stalled => {
            let (reason, message) = failure_text(failure.unwrap_or(Failure::Generic), obj, ctx);
            if intent.health == Health::Stalled {
                conditions.push(cond(
                    "Stalled", "True", reason, &message, generation, ctx.now,
                ));
            } else {
                conditions.push(cond(
                    "Reconciling",
                    "True",
                    "ProgressingWithRetry",
                    "reconciliation in progress",
                    generation,
                    ctx.now,
                ));
                conditions.push(cond(
                    "FetchFailed",
                    "True",
                    reason,
                    &message,
                    generation,
                    ctx.now,
                ));
            }
            conditions.push(cond(
                "Ready", "False", reason, &message, generation, ctx.now,
            ));
            if let Some(prev) = old.get("artifact") {
                let prev_rev = prev["revision"].as_str().unwrap_or("");
                let msg = format!("stored artifact for revision '{prev_rev}'");
                conditions.push(cond(
                    "ArtifactInStorage",
                    "True",
                    ok_reason,
                    &msg,
                    generation,
                    ctx.now,
                ));
                status["artifact"] = prev.clone();
            }
        }
        Health::Progressing => {
            let msg = format!("building artifact: new upstream revision '{rev}'");
            progressing(&mut conditions, &msg, &msg, generation, ctx.now);
            if let Some(prev) = old.get("artifact") {
                status["artifact"] = prev.clone();
            }
        }
        _ => {
            conditions.push(cond(
                "Ready", "True", ok_reason, &ok_msg, generation, ctx.now,
            ));
            conditions.push(cond(
                "ArtifactInStorage",
                "True",
                ok_reason,
                &ok_msg,
                generation,
                ctx.now,
            ));
            status["artifact"] = artifact;
        }
    }
    if ctx.kind == FluxKind::HelmChart {
        status["observedChartName"] = json!(chart_name(obj));
    }
    status["conditions"] = json!(conditions);
    status
}

#[allow(clippy::too_many_arguments)]
fn applier(
    obj: &Value,
    old: &Value,
    intent: Intent,
    failure: Option<Failure>,
    ctx: &Context,
    generation: i64,
    ks: bool,
) -> Value {
    let name = meta_str(obj, "/metadata/name");
    let ns = meta_str(obj, "/metadata/namespace");
    let rev = ctx.revision;
    let mut status = json!({});
    let mut conditions = Vec::new();
    let prev_applied = old.get("lastAppliedRevision").cloned();
    let chart = chart_name(obj);
    let release_version = old
        .pointer("/history/0/version")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    match intent.health {
        Health::Failed | Health::Stalled => {
            let f = failure.unwrap_or(Failure::Generic);
            let (reason, message) = failure_text(f, obj, ctx);
            if intent.health == Health::Stalled {
                let stall = if f == Failure::RetriesExceeded {
                    (
                        "RetriesExceeded",
                        "Failed to install after 3 attempt(s)".to_string(),
                    )
                } else {
                    (reason, message.clone())
                };
                conditions.push(cond(
                    "Stalled", "True", stall.0, &stall.1, generation, ctx.now,
                ));
            } else {
                let msg = if ks {
                    format!("Running health checks for revision {rev} with a timeout of 5m0s")
                } else {
                    message.clone()
                };
                conditions.push(cond(
                    "Reconciling",
                    "True",
                    "ProgressingWithRetry",
                    &msg,
                    generation,
                    ctx.now,
                ));
            }
            conditions.push(cond(
                "Ready", "False", reason, &message, generation, ctx.now,
            ));
            if ks && f == Failure::HealthCheck {
                let inner = message.split(": ").skip(1).collect::<Vec<_>>().join(": ");
                conditions.push(cond(
                    "Healthy",
                    "False",
                    "HealthCheckFailed",
                    &inner,
                    generation,
                    ctx.now,
                ));
            }
            if !ks {
                let (rreason, rmsg) = if f == Failure::UpgradeRolledBack {
                    (
                        "UpgradeFailed",
                        format!(
                            "Helm upgrade failed for release {ns}/{name} with chart {chart}@{rev}: context deadline exceeded"
                        ),
                    )
                } else {
                    (reason, message.clone())
                };
                conditions.push(cond(
                    "Released", "False", rreason, &rmsg, generation, ctx.now,
                ));
                if f == Failure::UpgradeRolledBack {
                    conditions.push(cond(
                        "Remediated",
                        "True",
                        "RollbackSucceeded",
                        &message,
                        generation,
                        ctx.now,
                    ));
                }
                status["failures"] = json!(if f == Failure::RetriesExceeded { 3 } else { 1 });
                status["installFailures"] = json!(if f == Failure::UpgradeRolledBack {
                    0
                } else {
                    1
                });
                status["upgradeFailures"] = json!(if f == Failure::UpgradeRolledBack {
                    1
                } else {
                    0
                });
            }
            if let Some(prev) = prev_applied {
                status["lastAppliedRevision"] = prev;
            }
        }
        Health::Progressing => {
            let msg = if ks {
                format!("Fetching manifests for revision {rev} with a timeout of 5m0s")
            } else {
                format!("Running 'upgrade' action with timeout of 5m0s for release {ns}/{name}")
            };
            progressing(
                &mut conditions,
                &msg,
                "Reconciliation in progress",
                generation,
                ctx.now,
            );
            if let Some(prev) = prev_applied {
                status["lastAppliedRevision"] = prev;
            }
        }
        _ => {
            if ks {
                let msg = format!("Applied revision: {rev}");
                conditions.push(cond(
                    "Ready",
                    "True",
                    "ReconciliationSucceeded",
                    &msg,
                    generation,
                    ctx.now,
                ));
                conditions.push(cond(
                    "Healthy",
                    "True",
                    "Succeeded",
                    "Health check passed in 3.012794s",
                    generation,
                    ctx.now,
                ));
            } else {
                let msg = format!(
                    "Helm upgrade succeeded for release {ns}/{name}.v{release_version} with chart {chart}@{rev}"
                );
                conditions.push(cond(
                    "Ready",
                    "True",
                    "UpgradeSucceeded",
                    &msg,
                    generation,
                    ctx.now,
                ));
                conditions.push(cond(
                    "Released",
                    "True",
                    "UpgradeSucceeded",
                    &msg,
                    generation,
                    ctx.now,
                ));
            }
            status["lastAppliedRevision"] = json!(rev);
        }
    }
    status["lastAttemptedRevision"] = json!(rev);
    if ks {
        status["inventory"] = json!({"entries": [
            {"id": format!("_{}__Namespace", workload_namespace(name)), "v": "v1"},
            {"id": format!("{}_{name}__Service", workload_namespace(name)), "v": "v1"},
            {"id": format!("{}_{name}_apps_Deployment", workload_namespace(name)), "v": "v1"},
        ]});
    } else {
        let helm_chart = match obj
            .pointer("/spec/chart/spec/sourceRef/namespace")
            .and_then(Value::as_str)
        {
            Some(src_ns) => format!("{src_ns}/{ns}-{name}"),
            None => format!("{ns}/{ns}-{name}"),
        };
        if obj.pointer("/spec/chart").is_some() {
            status["helmChart"] = json!(helm_chart);
        }
        status["storageNamespace"] = json!(ns);
        status["lastAttemptedGeneration"] = json!(generation);
        let applied = status
            .get("lastAppliedRevision")
            .and_then(Value::as_str)
            .unwrap_or(rev)
            .to_string();
        let deployed = !matches!(
            failure,
            Some(Failure::InstallFailed | Failure::RetriesExceeded)
        ) || intent.health == Health::Ready;
        status["history"] = json!([{
            "name": name, "namespace": ns, "version": release_version,
            "status": if deployed { "deployed" } else { "failed" },
            "action": if release_version > 1 { "upgrade" } else { "install" },
            "chartName": chart, "chartVersion": applied, "appVersion": applied,
            "configDigest": sha256_of(&format!("{ns}/{name}/values")),
            "digest": sha256_of(&format!("{ns}/{name}/{applied}")),
            "firstDeployed": ctx.now, "lastDeployed": ctx.now,
        }]);
        if obj["apiVersion"] == "helm.toolkit.fluxcd.io/v2beta1" {
            // Flux 2.0/2.1: no history; the release revision is an integer.
            status.as_object_mut().map(|m| m.remove("history"));
            status["lastReleaseRevision"] = json!(release_version);
        } else {
            status
                .as_object_mut()
                .map(|m| m.remove("lastAppliedRevision"));
        }
    }
    status["conditions"] = json!(conditions);
    status
}
