//! What the controllers record beside the conditions: a Kustomization's `status.history` (one
//! entry per digest of its applied manifests and outcome), a release's config digest, and the
//! Drifted condition helm-controller keeps while a release's live objects differ from it.

use serde_json::{Value, json};

use super::{meta_str, sha256_of};

/// A release whose live objects were changed by hand stays drifted, reconcile after reconcile,
/// while its drift detection only warns (helm-controller finds the same difference each time);
/// `enabled` would correct it.
pub(super) fn still_drifted(obj: &Value, old: &Value) -> Option<Value> {
    if obj
        .pointer("/spec/driftDetection/mode")
        .and_then(Value::as_str)
        != Some("warn")
    {
        return None;
    }
    old.get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Drifted" && c["status"] == "True")
        .cloned()
}

/// The Drifted condition helm-controller v1.6 sets on `obj` (drift detection `warn`) when one
/// of its release's objects was changed on the cluster.
pub fn drifted(obj: &Value, time: &str) -> Value {
    let release = super::release_of(obj);
    let version = obj
        .pointer("/status/history/0/version")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let (ns, name) = (
        meta_str(obj, "/metadata/namespace"),
        meta_str(obj, "/metadata/name"),
    );
    json!({
        "type": "Drifted", "status": "True", "reason": "DriftDetected",
        "message": format!(
            "Cluster state of release {release}.v{version} has drifted from the desired state: \
             Deployment/{ns}/{name} changed (0 additions, 1 changes, 0 removals)"
        ),
        "lastTransitionTime": time,
        "observedGeneration": obj.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
    })
}

/// Entries a Kustomization's `status.history` keeps, newest first (Flux keeps 5).
const HISTORY: usize = 5;

/// A Kustomization's `status.history` after reconciling `revision` (its manifests' `digest`)
/// with `outcome` (a reason) in `took`, as kustomize-controller's `History.Upsert` keeps it:
/// an entry with the same digest and outcome, wherever it is, counts one more reconciliation
/// (its `firstReconciled` stays) and moves to the front; anything else is a new entry in
/// front, and the oldest past five go.
pub(super) fn ks_history(
    old: &Value,
    (revision, digest): (&str, &str),
    (outcome, took): (&str, &str),
    now: &str,
) -> Value {
    let mut entries: Vec<Value> = old
        .get("history")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let same = entries.iter().position(|e| {
        e.get("digest").and_then(Value::as_str) == Some(digest)
            && e.get("lastReconciledStatus").and_then(Value::as_str) == Some(outcome)
    });
    let entry = match same {
        Some(i) => {
            let mut e = entries.remove(i);
            let total = e
                .get("totalReconciliations")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            e["totalReconciliations"] = json!(total + 1);
            e["lastReconciled"] = json!(now);
            e["lastReconciledDuration"] = json!(took);
            e["metadata"] = json!({"revision": revision});
            e
        }
        None => json!({
            "digest": digest,
            "firstReconciled": now,
            "lastReconciled": now,
            "lastReconciledDuration": took,
            "lastReconciledStatus": outcome,
            "totalReconciliations": 1,
            "metadata": {"revision": revision},
        }),
    };
    entries.insert(0, entry);
    entries.truncate(HISTORY);
    Value::Array(entries)
}

/// How long a run took, as the controllers write it: a Helm release (`outcome` "release")
/// several seconds, a Kustomization that waits on health
/// checks of its own (`spec.healthChecks`: a large StatefulSet rolling) takes minutes, one
/// whose health check fails waits out its timeout, anything else a second or two. `seed`
/// varies it from run to run and copy to copy.
pub fn run_length(obj: &Value, outcome: &str, seed: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    seed.hash(&mut h);
    meta_str(obj, "/metadata/uid").hash(&mut h);
    let h = h.finish();
    let micros = h % 1_000_000;
    if outcome == "HealthCheckFailed" {
        return format!("5m0.{micros:06}s");
    }
    if outcome == "release" {
        return format!("{}.{micros:06}s", 5 + h / 1_000_000 % 25);
    }
    if obj.pointer("/spec/healthChecks").is_some() {
        return format!("4m{}.{micros:06}s", 10 + h / 1_000_000 % 40);
    }
    format!("{}.{micros:06}s", 1 + h / 1_000_000 % 3)
}

/// The digest of a release's values: its `spec.values`, and the defaults of the chart's minor
/// version (a new minor brings new defaults the platform team adjusts, a patch does not).
pub(super) fn config_digest(obj: &Value, chart_version: &str) -> String {
    let minor: Vec<&str> = chart_version.splitn(3, '.').take(2).collect();
    let values = obj.pointer("/spec/values").map(Value::to_string);
    let (ns, name) = (
        meta_str(obj, "/metadata/namespace"),
        meta_str(obj, "/metadata/name"),
    );
    sha256_of(&format!(
        "{ns}/{name}/values/{}/{}",
        minor.join("."),
        values.unwrap_or_default()
    ))
}
