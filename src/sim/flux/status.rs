//! The status blocks of sources (artifact, FetchFailed …) and appliers (applied revision,
//! inventory, Helm history), as their controllers write them.

use serde_json::{Value, json};

use super::records::{config_digest, ks_history, run_length, still_drifted};
use super::{
    Context, Failure, carry_transition_times, chart_name, cond, digest_of, failure_text, meta_str,
    progressing, sha256_of, workload_group, workload_kind, workload_namespace,
};
use crate::facts::{FluxKind, FluxRelease, Health};
use crate::flux::Intent;

/// The new `status` of `obj` for the intended state.
pub fn render_status(obj: &Value, intent: Intent, ctx: &Context) -> Value {
    let generation = obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let old = obj.get("status").cloned().unwrap_or_else(|| json!({}));
    let mut status = match ctx.kind {
        FluxKind::Kustomization => applier(obj, &old, intent, ctx, generation, true),
        FluxKind::HelmRelease => applier(obj, &old, intent, ctx, generation, false),
        FluxKind::Alert | FluxKind::Provider => return json!({}),
        _ => source(obj, &old, intent, ctx, generation),
    };
    // A failure keeps the generation last reconciled; one that never reconciled says -1, as
    // the controllers leave it. A stalled object was reconciled, to its end.
    status["observedGeneration"] = match intent.health {
        Health::Failed => old.get("observedGeneration").cloned().unwrap_or(json!(-1)),
        Health::Stalled => old
            .get("observedGeneration")
            .filter(|g| g.as_i64().is_some_and(|g| g >= 0))
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
    let c = |kind: &str, value: &str, reason: &str, message: &str| {
        cond(kind, value, reason, message, generation, ctx.now)
    };
    match intent.health {
        Health::Failed | Health::Stalled => {
            let (reason, message) = failure_text(failure.unwrap_or(Failure::Generic), obj, ctx);
            if intent.health == Health::Stalled {
                conditions.push(c("Stalled", "True", reason, &message));
            } else {
                // source-controller's words: the first artifact still being built, or a
                // reconcile of one it has.
                let doing = match old.get("artifact") {
                    None => "building artifact",
                    Some(_) => "reconciliation in progress",
                };
                conditions.push(c("Reconciling", "True", "ProgressingWithRetry", doing));
            }
            conditions.push(c("Ready", "False", reason, &message));
            conditions.push(c("FetchFailed", "True", reason, &message));
            if let Some(prev) = old.get("artifact") {
                let prev_rev = prev["revision"].as_str().unwrap_or("");
                let msg = format!("stored artifact for revision '{prev_rev}'");
                conditions.push(c("ArtifactInStorage", "True", ok_reason, &msg));
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
            conditions.push(c("Ready", "True", ok_reason, &ok_msg));
            conditions.push(c("ArtifactInStorage", "True", ok_reason, &ok_msg));
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
    let a = Applier {
        obj,
        old,
        intent,
        ctx,
        generation,
        ks,
        name: meta_str(obj, "/metadata/name"),
        ns: meta_str(obj, "/metadata/namespace"),
        chart: chart_name(obj),
        release_version: old
            .pointer("/history/0/version")
            .and_then(Value::as_i64)
            .unwrap_or(1),
    };
    let rev = ctx.revision;
    let mut status = json!({});
    // Until it succeeds, the last revision applied stays.
    let keep_applied = |status: &mut Value| {
        if let Some(prev) = old.get("lastAppliedRevision") {
            status["lastAppliedRevision"] = prev.clone();
        }
    };
    let conditions = match intent.health {
        Health::Failed | Health::Stalled => {
            let conditions = a.failing(&mut status);
            keep_applied(&mut status);
            conditions
        }
        Health::Progressing => {
            keep_applied(&mut status);
            a.progressing()
        }
        _ => {
            status["lastAppliedRevision"] = json!(rev);
            a.ready()
        }
    };
    status["lastAttemptedRevision"] = json!(rev);
    let mut conditions = conditions;
    if ks {
        a.kustomization(&mut status);
    } else {
        a.helm_release(&mut status);
        conditions.extend(still_drifted(obj, old));
    }
    status["conditions"] = json!(conditions);
    status
}

/// One Kustomization (`ks`) or HelmRelease being written, with what its parts share.
struct Applier<'a> {
    obj: &'a Value,
    old: &'a Value,
    intent: Intent,
    ctx: &'a Context<'a>,
    generation: i64,
    ks: bool,
    name: &'a str,
    ns: &'a str,
    chart: &'a str,
    /// The Helm release's number (`<ns>/<name>.v<N>`), kept from the last status.
    release_version: i64,
}

impl Applier<'_> {
    fn cond(&self, kind: &str, status: &str, reason: &str, message: &str) -> Value {
        cond(kind, status, reason, message, self.generation, self.ctx.now)
    }

    /// Ready=False with the failure's reason; Stalled when terminal, else Reconciling with
    /// ProgressingWithRetry; a HelmRelease's Released (and Remediated after a rollback) and its
    /// failure counters.
    fn failing(&self, status: &mut Value) -> Vec<Value> {
        let (ctx, rev) = (self.ctx, self.ctx.revision);
        let f = self.intent.failure.unwrap_or(Failure::Generic);
        let (reason, message) = failure_text(f, self.obj, ctx);
        let mut conditions = Vec::new();
        if self.intent.health == Health::Stalled {
            let stall = if f == Failure::RetriesExceeded {
                (
                    "RetriesExceeded",
                    "Failed to install after 3 attempt(s)".to_string(),
                )
            } else {
                (reason, message.clone())
            };
            conditions.push(self.cond("Stalled", "True", stall.0, &stall.1));
        } else if f == Failure::DependencyNotReady {
            // Found before anything is done: kustomize-controller says so in Ready alone,
            // helm-controller beside the prerequisites it is fulfilling.
            if !self.ks {
                let doing = "Fulfilling prerequisites";
                conditions.push(self.cond("Reconciling", "True", "Progressing", doing));
            }
        } else {
            // What the controller was doing when it failed.
            let msg = if self.ks {
                let timeout = super::go_duration(super::timeout_of(self.obj), "");
                let doing = match f {
                    Failure::BuildFailed => "Building manifests",
                    _ => "Running health checks",
                };
                format!("{doing} for revision {rev} with a timeout of {timeout}")
            } else {
                message.clone()
            };
            conditions.push(self.cond("Reconciling", "True", "ProgressingWithRetry", &msg));
        }
        conditions.push(self.cond("Ready", "False", reason, &message));
        if self.ks && f == Failure::HealthCheck {
            let inner = message.split(": ").skip(1).collect::<Vec<_>>().join(": ");
            conditions.push(self.cond("Healthy", "False", "HealthCheckFailed", &inner));
        }
        if !self.ks {
            let chart = &self.chart;
            let rolled_back = f == Failure::UpgradeRolledBack;
            let (rreason, rmsg) = if rolled_back {
                (
                    "UpgradeFailed",
                    format!(
                        "Helm upgrade failed for release {} with chart {chart}@{rev}: {}",
                        super::release_of(self.obj),
                        super::release_wait(self.obj)
                    ),
                )
            } else {
                (reason, message.clone())
            };
            conditions.push(self.cond("Released", "False", rreason, &rmsg));
            if rolled_back {
                conditions.push(self.cond("Remediated", "True", "RollbackSucceeded", &message));
            }
            status["failures"] = json!(if f == Failure::RetriesExceeded { 3 } else { 1 });
            status["installFailures"] = json!(u8::from(!rolled_back));
            status["upgradeFailures"] = json!(u8::from(rolled_back));
        }
        conditions
    }

    /// Reconciling=True and Ready=Unknown, with what the controller is doing.
    fn progressing(&self) -> Vec<Value> {
        let rev = self.ctx.revision;
        // The controllers' words (kustomize-controller v1.9.4, helm-controller v1.6.3).
        let msg = if self.ks {
            let timeout = super::go_duration(super::timeout_of(self.obj), "");
            format!("Fetching manifests for revision {rev} with a timeout of {timeout}")
        } else {
            "Running 'upgrade' action with timeout of 5m0s".to_string()
        };
        let mut conditions = Vec::new();
        progressing(
            &mut conditions,
            &msg,
            "Reconciliation in progress",
            self.generation,
            self.ctx.now,
        );
        conditions
    }

    /// Ready=True: a Kustomization applied and healthy, a HelmRelease upgraded and released.
    fn ready(&self) -> Vec<Value> {
        let rev = self.ctx.revision;
        if self.ks {
            let msg = format!("Applied revision: {rev}");
            vec![
                self.cond("Ready", "True", "ReconciliationSucceeded", &msg),
                self.cond(
                    "Healthy",
                    "True",
                    "Succeeded",
                    "Health check passed in 3.012794s",
                ),
            ]
        } else {
            let (chart, v) = (&self.chart, self.release_version);
            let release = super::release_of(self.obj);
            // The first release is an install, as its history entry says.
            let (action, reason) = match v > 1 {
                true => ("upgrade", "UpgradeSucceeded"),
                false => ("install", "InstallSucceeded"),
            };
            let msg = format!(
                "Helm {action} succeeded for release {release}.v{v} with chart {chart}@{rev}"
            );
            vec![
                self.cond("Ready", "True", reason, &msg),
                self.cond("Released", "True", reason, &msg),
            ]
        }
    }

    /// The digest of the manifests a Kustomization builds from its revision: what the revision
    /// holds (its commit, whatever branch or tag it came by) and its `postBuild` substitutions.
    fn applied_digest(&self) -> String {
        let content = match self.ctx.revision.rsplit_once('@') {
            Some((_, digest)) => digest,
            None => self.ctx.revision,
        };
        let substitute = self.obj.pointer("/spec/postBuild/substitute");
        let substitute = substitute.map(Value::to_string).unwrap_or_default();
        sha256_of(&format!("{}/{}/{content}/{substitute}", self.ns, self.name))
    }

    /// A Kustomization's history (Flux 2.7 on) and inventory.
    fn kustomization(&self, status: &mut Value) {
        let (ctx, rev, name) = (self.ctx, self.ctx.revision, self.name);
        if ctx.flux >= FluxRelease(7) {
            status["history"] = match (self.intent.health, self.intent.failure) {
                // Under way, or waiting on a dependency (kustomize-controller checks them before
                // it builds anything): the history is what it was.
                (Health::Progressing, _)
                | (Health::Failed | Health::Stalled, Some(Failure::DependencyNotReady)) => {
                    self.old.get("history").cloned().unwrap_or(json!([]))
                }
                (Health::Failed | Health::Stalled, f) => {
                    let reason = failure_text(f.unwrap_or(Failure::Generic), self.obj, ctx).0;
                    let took = run_length(self.obj, reason, ctx.now);
                    ks_history(
                        self.old,
                        (rev, &self.applied_digest()),
                        (reason, &took),
                        ctx.now,
                    )
                }
                _ => {
                    let outcome = "ReconciliationSucceeded";
                    let took = run_length(self.obj, outcome, ctx.now);
                    ks_history(
                        self.old,
                        (rev, &self.applied_digest()),
                        (outcome, &took),
                        ctx.now,
                    )
                }
            };
        }
        status["inventory"] = json!({"entries": [
            {"id": format!("_{}__Namespace", workload_namespace(name)), "v": "v1"},
            {"id": format!("{}_{name}__Service", workload_namespace(name)), "v": "v1"},
            {"id": format!("{}_{name}_{}_{}", workload_namespace(name), workload_group(workload_kind(name)), workload_kind(name)), "v": "v1"},
        ]});
        // The story's substitution turns on an internal Ingress the others do not have.
        if self.obj.pointer("/spec/postBuild/substitute").is_some()
            && let Some(entries) = status["inventory"]["entries"].as_array_mut()
        {
            let ns = workload_namespace(name);
            entries.push(
                json!({"id": format!("{ns}_{name}-internal_networking.k8s.io_Ingress"), "v": "v1"}),
            );
        }
        // The Flux objects it applies stay (populate/inventory.rs puts them there): ids
        // `<ns>_<name>_<group>_<kind>` of a Flux group.
        let old = self
            .old
            .pointer("/inventory/entries")
            .and_then(Value::as_array);
        let flux = |e: &&Value| {
            let group = e["id"].as_str().and_then(|id| id.rsplit('_').nth(1));
            group.is_some_and(|g| g.ends_with(".toolkit.fluxcd.io"))
        };
        if let Some(entries) = status["inventory"]["entries"].as_array_mut() {
            entries.extend(old.into_iter().flatten().filter(flux).cloned());
            entries.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        }
    }

    /// A HelmRelease's chart, storage namespace and Helm history (Flux 2.0/2.1: a release
    /// number instead of a history).
    fn helm_release(&self, status: &mut Value) {
        let (obj, ctx, rev, ns, name) = (self.obj, self.ctx, self.ctx.revision, self.ns, self.name);
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
        status["lastAttemptedGeneration"] = json!(self.generation);
        let applied = status
            .get("lastAppliedRevision")
            .and_then(Value::as_str)
            .unwrap_or(rev)
            .to_string();
        let deployed = !matches!(
            self.intent.failure,
            Some(Failure::InstallFailed | Failure::RetriesExceeded)
        ) || self.intent.health == Health::Ready;
        // The same chart version and values are the same release: deployed since then.
        let first_deployed = self
            .old
            .pointer("/history/0")
            .filter(|h| h.get("chartVersion").and_then(Value::as_str) == Some(applied.as_str()))
            .and_then(|h| h.get("firstDeployed").cloned())
            .unwrap_or_else(|| json!(ctx.now));
        let release_version = self.release_version;
        let config = config_digest(obj, &applied);
        let entry = json!({
            "name": name, "namespace": ns, "version": release_version,
            "status": if deployed { "deployed" } else { "failed" },
            "action": if release_version > 1 { "upgrade" } else { "install" },
            "chartName": self.chart, "chartVersion": applied, "appVersion": applied,
            "configDigest": config,
            "digest": sha256_of(&format!("{ns}/{name}/{applied}")),
            "firstDeployed": first_deployed, "lastDeployed": ctx.now,
        });
        status["history"] = release_history(self.old, entry);
        status["lastAttemptedReleaseActionDuration"] =
            json!(run_length(obj, "release", &format!("{release_version}")));
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
}

/// A HelmRelease's Helm history with `entry` as its current release: the release it was (the
/// same version) is replaced — deployed when it was, if nothing in it changed — and the older
/// releases stay, as helm-controller keeps them (five by default).
fn release_history(old: &Value, mut entry: Value) -> Value {
    let mut entries: Vec<Value> = old
        .get("history")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match entries.first() {
        Some(current) if current.get("version") == entry.get("version") => {
            let same = ["chartVersion", "configDigest", "status"]
                .iter()
                .all(|k| current.get(*k) == entry.get(*k));
            if same && let Some(at) = current.get("lastDeployed") {
                entry["lastDeployed"] = at.clone();
            }
            entries[0] = entry;
        }
        _ => entries.insert(0, entry),
    }
    entries.truncate(5);
    Value::Array(entries)
}
