//! The status blocks of sources (artifact, FetchFailed …) and appliers (applied revision,
//! inventory, Helm history), as their controllers write them.

use serde_json::{Value, json};

use super::{
    Context, Failure, chart_name, cond, digest_of, failure_text, meta_str, progressing, sha256_of,
    workload_namespace,
};
use crate::fleet::{FluxKind, FluxRelease, Health};
use crate::json::At;
use crate::sim::flux::Intent;

pub(super) fn source(
    obj: &Value,
    old: &Value,
    intent: Intent,
    ctx: &Context,
    generation: i64,
) -> Value {
    let failure = intent.failure;
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
    // The artifact is produced when the revision changes; the same revision keeps its time.
    let produced = old
        .get("artifact")
        .filter(|a| a.get("revision").and_then(Value::as_str) == Some(rev))
        .and_then(|a| a.get("lastUpdateTime").cloned())
        .unwrap_or_else(|| json!(ctx.now));
    let artifact = json!({
        "digest": sha256_of(&format!("{ns}/{name}/{rev}")),
        "lastUpdateTime": produced,
        "path": format!("{plural}/{ns}/{name}/{file}.tar.gz"),
        "revision": rev,
        "size": 4096 + u64::from_str_radix(&digest_of(rev)[..8], 16).unwrap_or(0) % 60000,
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

pub(super) fn applier(
    obj: &Value,
    old: &Value,
    intent: Intent,
    ctx: &Context,
    generation: i64,
    ks: bool,
) -> Value {
    let failure = intent.failure;
    let name = meta_str(obj, "/metadata/name");
    let ns = meta_str(obj, "/metadata/namespace");
    let rev = ctx.revision;
    let mut status = json!({});
    let mut conditions = Vec::new();
    let prev_applied = old.get("lastAppliedRevision").cloned();
    let chart = chart_name(obj);
    let release_version = old
        .at("/history/0/version")
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
    if ks && ctx.flux >= FluxRelease(7) {
        status["history"] = match (intent.health, failure) {
            // Under way: the history is what it was.
            (Health::Progressing, _) => old.get("history").cloned().unwrap_or(json!([])),
            (Health::Failed | Health::Stalled, f) => {
                let reason = failure_text(f.unwrap_or(Failure::Generic), obj, ctx).0;
                ks_history(old, rev, reason, ctx.now)
            }
            _ => ks_history(old, rev, "ReconciliationSucceeded", ctx.now),
        };
    }
    if ks {
        status["inventory"] = json!({"entries": [
            {"id": format!("_{}__Namespace", workload_namespace(name)), "v": "v1"},
            {"id": format!("{}_{name}__Service", workload_namespace(name)), "v": "v1"},
            {"id": format!("{}_{name}_apps_Deployment", workload_namespace(name)), "v": "v1"},
        ]});
    } else {
        let helm_chart = match obj
            .at("/spec/chart/spec/sourceRef/namespace")
            .and_then(Value::as_str)
        {
            Some(src_ns) => format!("{src_ns}/{ns}-{name}"),
            None => format!("{ns}/{ns}-{name}"),
        };
        if obj.at("/spec/chart").is_some() {
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
        // The same chart version and values are the same release: deployed since then.
        let first_deployed = old
            .at("/history/0")
            .filter(|h| h.get("chartVersion").and_then(Value::as_str) == Some(applied.as_str()))
            .and_then(|h| h.get("firstDeployed").cloned())
            .unwrap_or_else(|| json!(ctx.now));
        status["history"] = json!([{
            "name": name, "namespace": ns, "version": release_version,
            "status": if deployed { "deployed" } else { "failed" },
            "action": if release_version > 1 { "upgrade" } else { "install" },
            "chartName": chart, "chartVersion": applied, "appVersion": applied,
            "configDigest": config_digest(ns, name, &applied),
            "digest": sha256_of(&format!("{ns}/{name}/{applied}")),
            "firstDeployed": first_deployed, "lastDeployed": ctx.now,
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

/// Entries a Kustomization's `status.history` keeps, newest first (Flux keeps 5).
const HISTORY: usize = 5;

/// A Kustomization's `status.history` after reconciling `revision` with `outcome` (a reason):
/// the same revision and outcome as the newest entry count one more reconciliation on it (its
/// `firstReconciled` stays); anything else is a new entry in front.
fn ks_history(old: &Value, revision: &str, outcome: &str, now: &str) -> Value {
    let mut entries: Vec<Value> = old
        .get("history")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let same = entries.first().is_some_and(|e| {
        e.at("/metadata/revision").and_then(Value::as_str) == Some(revision)
            && e.get("lastReconciledStatus").and_then(Value::as_str) == Some(outcome)
    });
    if same && let Some(e) = entries.first_mut() {
        let total = e
            .get("totalReconciliations")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        e["totalReconciliations"] = json!(total + 1);
        e["lastReconciled"] = json!(now);
    } else {
        entries.insert(
            0,
            json!({
                "digest": sha256_of(&format!("{revision}/{outcome}")),
                "firstReconciled": now,
                "lastReconciled": now,
                "lastReconciledDuration": "1.204s",
                "lastReconciledStatus": outcome,
                "totalReconciliations": 1,
                "metadata": {"revision": revision},
            }),
        );
        entries.truncate(HISTORY);
    }
    Value::Array(entries)
}

/// The digest of a release's values: they change with the chart's minor version (a new minor
/// brings new defaults the platform team adjusts), not with a patch.
fn config_digest(namespace: &str, name: &str, chart_version: &str) -> String {
    let minor: Vec<&str> = chart_version.splitn(3, '.').take(2).collect();
    sha256_of(&format!("{namespace}/{name}/values/{}", minor.join(".")))
}
