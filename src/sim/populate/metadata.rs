//! Metadata as the API server and the controllers leave it, and a cluster's namespaces.

use serde_json::{Value, json};

use crate::clock::Clock;
use crate::resources::Res;
use crate::rng::Rng;
use crate::store::Store;

pub fn uuid(rng: &mut Rng) -> String {
    let h = rng.hex(32);
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

pub(super) fn meta<'v>(obj: &'v Value, path: &str) -> &'v str {
    obj.pointer(path).and_then(Value::as_str).unwrap_or("")
}

/// Metadata as the API server and the controllers leave it.
pub(super) fn finish_metadata(
    rng: &mut Rng,
    clock: &Clock,
    obj: &mut Value,
    api_version: &str,
    created_ago: i64,
) {
    obj["apiVersion"] = json!(api_version);
    let m = &mut obj["metadata"];
    m["uid"] = json!(uuid(rng));
    m["creationTimestamp"] = json!(clock.before_start(created_ago));
    m["generation"] = json!(1 + rng.below(4));
    m["finalizers"] = json!(["finalizers.fluxcd.io"]);
    m["managedFields"] = json!([{
        "manager": "kustomize-controller", "operation": "Apply", "apiVersion": api_version,
        "time": clock.before_start(created_ago / 2), "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {}}, "f:spec": {"f:interval": {}, "f:sourceRef": {}}},
    }]);
}

fn namespace(name: &str, created: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace",
           "metadata": {"name": name, "creationTimestamp": created, "labels": {"kubernetes.io/metadata.name": name}},
           "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
}

/// Puts the namespaces into a store.
pub fn add_namespaces<'a>(
    store: &mut Store,
    clock: &Clock,
    names: impl IntoIterator<Item = &'a str>,
) {
    for ns in names {
        store.put(
            Res::Namespace,
            namespace(ns, &clock.before_start(90 * 86400)),
            None,
        );
    }
}
