//! From a watched object to its summary, dropping everything else (HelmRelease values,
//! inventories, managedFields) the moment the object has been read.

use kube::api::DynamicObject;
use serde_json::{Map, Value};

use crate::fleet::{FluxKind, FluxSummary, ObjectKey};

/// The annotations `FluxSummary::of` looks at.
const SUMMARY_ANNOTATIONS: [&str; 2] = [
    "reconcile.fluxcd.io/requestedAt",
    "source.extensions.fluxcd.io/reconcile",
];

/// The summary of one watched object; None (and a debug log) for an object without a name.
pub fn summarize(kind: FluxKind, object: DynamicObject) -> Option<FluxSummary> {
    let meta = &object.metadata;
    let mut metadata = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            metadata.insert(key.into(), v);
        }
    };
    put("name", meta.name.clone().map(Value::from));
    put("namespace", meta.namespace.clone().map(Value::from));
    put("generation", meta.generation.map(Value::from));
    put(
        "deletionTimestamp",
        meta.deletion_timestamp
            .as_ref()
            .map(|t| Value::from(t.0.to_string())),
    );
    // Only the annotations a summary reads: others (last-applied-configuration) can be as large
    // as the object itself.
    put(
        "annotations",
        meta.annotations.as_ref().map(|a| {
            Value::Object(
                SUMMARY_ANNOTATIONS
                    .iter()
                    .filter_map(|k| Some((k.to_string(), Value::from(a.get(*k)?.clone()))))
                    .collect(),
            )
        }),
    );
    let mut value = match object.data {
        Value::Object(map) => Value::Object(map),
        _ => Value::Object(Map::new()),
    };
    value["metadata"] = Value::Object(metadata);
    match FluxSummary::of(kind, &value) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::debug!(%kind, error = %e, "skipping an object that cannot be summarised");
            None
        }
    }
}

/// The key of a deleted object.
pub fn key_of(kind: FluxKind, object: &DynamicObject) -> Option<ObjectKey> {
    let name = object.metadata.name.as_deref()?;
    let namespace = object.metadata.namespace.as_deref().unwrap_or_default();
    Some(ObjectKey::new(kind, namespace, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::Health;

    fn object(kind: &str, annotations: serde_json::Value) -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": kind,
            "metadata": {"name": "x", "namespace": "flux-system", "generation": 2,
                         "annotations": annotations},
            "spec": {}, "status": {"observedGeneration": 2,
                "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]}
        }))
        .unwrap()
    }

    #[test]
    fn the_annotations_that_matter_reach_the_summary() {
        let ks = object(
            "Kustomization",
            serde_json::json!({"reconcile.fluxcd.io/requestedAt": "t1",
                "kubectl.kubernetes.io/last-applied-configuration": "{…}"}),
        );
        let s = summarize(FluxKind::Kustomization, ks).unwrap();
        assert_eq!(s.requested_at.as_deref(), Some("t1"));
        assert_eq!(s.health, Health::Ready);
        let ag = object(
            "ArtifactGenerator",
            serde_json::json!({"source.extensions.fluxcd.io/reconcile": "Disabled"}),
        );
        let s = summarize(FluxKind::ArtifactGenerator, ag).unwrap();
        assert_eq!(s.health, Health::Suspended);
    }
}
