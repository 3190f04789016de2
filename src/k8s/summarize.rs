//! From a watched object to its summary, dropping everything else (HelmRelease values,
//! inventories, managedFields) the moment the object has been read.

use kube::api::DynamicObject;
use serde_json::{Map, Value};

use crate::fleet::{FluxKind, FluxSummary, ObjectKey};

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
    put(
        "annotations",
        meta.annotations.as_ref().map(|a| {
            Value::Object(
                a.iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.clone())))
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
