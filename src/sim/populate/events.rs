//! The Events the simulated controllers record about Flux objects.

use serde_json::{Value, json};

use super::super::clock::Clock;
use super::super::flux;
use super::super::rng::Rng;
use crate::facts::FluxKind;

/// A core/v1 Event as a Flux controller records it (FACTS §3.7).
pub fn event(
    rng: &mut Rng,
    clock: &Clock,
    obj: &Value,
    kind: FluxKind,
    reason: &str,
    message: &str,
    warning: bool,
) -> Value {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let controller = kind.controller();
    let now = clock.now();
    let mut ev = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{name}.{}", rng.hex(16)), "namespace": ns, "creationTimestamp": now},
        "involvedObject": {"apiVersion": obj["apiVersion"], "kind": kind.as_str(), "name": name, "namespace": ns, "uid": obj["metadata"]["uid"]},
        "reason": reason, "message": message, "type": if warning { "Warning" } else { "Normal" },
        "count": 1, "firstTimestamp": now, "lastTimestamp": now,
        "source": {"component": controller}, "reportingComponent": controller, "reportingInstance": format!("{controller}-7d9f8b6c5-x2k4p"),
    });
    let revision = obj
        .pointer("/status/lastAttemptedRevision")
        .or_else(|| obj.pointer("/status/artifact/revision"));
    if let Some(rev) = revision {
        ev["metadata"]["annotations"] = json!({ format!("{}/revision", kind.group()): rev });
    }
    ev
}

/// The event kustomize-controller records each time an apply changes objects — here its
/// workload, edited by hand again and again and set back at every reconcile of the revision it
/// runs: the same change log, counted, on the revision it applied (FACTS §3.7; the reason is
/// Ready's while the reconcile is under way).
pub(super) fn corrected(rng: &mut Rng, clock: &Clock, obj: &Value, kind: FluxKind) -> Value {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let workload = flux::workload_kind(name);
    let message = format!(
        "{workload}/{}/{name} configured",
        flux::workload_namespace(name)
    );
    let mut ev = event(rng, clock, obj, kind, "Progressing", &message, false);
    ev["count"] = json!(6);
    ev["firstTimestamp"] = json!(clock.before_start(50 * 60));
    ev["lastTimestamp"] = json!(clock.before_start(4 * 60));
    if let Some(rev) = obj.pointer("/status/lastAppliedRevision") {
        ev["metadata"]["annotations"] = json!({ format!("{}/revision", kind.group()): rev });
    }
    ev
}
