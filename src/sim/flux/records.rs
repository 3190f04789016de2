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
/// with `outcome` (a reason):
/// the same revision and outcome as the newest entry count one more reconciliation on it (its
/// `firstReconciled` stays); anything else is a new entry in front.
pub(super) fn ks_history(
    old: &Value,
    (revision, digest): (&str, &str),
    outcome: &str,
    now: &str,
) -> Value {
    let mut entries: Vec<Value> = old
        .get("history")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let same = entries.first().is_some_and(|e| {
        e.pointer("/metadata/revision").and_then(Value::as_str) == Some(revision)
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
                "digest": digest,
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
