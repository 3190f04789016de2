//! From a watched object to its summary. Objects arrive read as their summaries read them
//! (`fleet::object`): HelmRelease values, inventories and managedFields were skipped by the
//! parser, so nothing is trimmed here.

use crate::fleet::object::Object;
use crate::fleet::{FluxKind, FluxSummary, ObjectKey};

/// The summary of one watched object; None (and a debug log) for an item that is not an object
/// or not one.
pub fn summarize(kind: FluxKind, object: Option<&Object>) -> Option<FluxSummary> {
    let Some(object) = object else {
        tracing::debug!(%kind, "skipping a watched item that is not an object");
        return None;
    };
    match FluxSummary::read(kind, object) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::debug!(%kind, error = %e, "skipping an object that cannot be summarised");
            None
        }
    }
}

/// The key of a deleted object.
pub fn key_of(kind: FluxKind, object: &Object) -> Option<ObjectKey> {
    let name = object.name()?;
    let namespace = object.namespace().unwrap_or_default();
    Some(ObjectKey::new(kind, namespace, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::Health;
    use serde_json::Value;

    fn object(kind: &str, annotations: Value) -> Value {
        serde_json::json!({
            "apiVersion": "v1", "kind": kind,
            "metadata": {"name": "x", "namespace": "flux-system", "generation": 2,
                         "annotations": annotations},
            "spec": {}, "status": {"observedGeneration": 2,
                "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]}
        })
    }

    fn summary(kind: FluxKind, value: &Value) -> FluxSummary {
        let text = value.to_string();
        let object: Object = serde_json::from_str(&text).unwrap();
        summarize(kind, Some(&object)).unwrap()
    }

    #[test]
    fn the_annotations_that_matter_reach_the_summary() {
        let ks = object(
            "Kustomization",
            serde_json::json!({"reconcile.fluxcd.io/requestedAt": "t1",
                "kubectl.kubernetes.io/last-applied-configuration": "{…}"}),
        );
        let s = summary(FluxKind::Kustomization, &ks);
        assert_eq!(s.requested_at(), Some("t1"));
        assert_eq!(s.health, Health::Ready);
        let ag = object(
            "ArtifactGenerator",
            serde_json::json!({"source.extensions.fluxcd.io/reconcile": "Disabled"}),
        );
        let s = summary(FluxKind::ArtifactGenerator, &ag);
        assert_eq!(s.health, Health::Suspended);
        assert_eq!(s.suspension(), None, "no suspender recorded");
        // Who suspended it and why survive the trimming, from fluxfleet or the Flux Operator.
        let mut hr = object(
            "HelmRelease",
            serde_json::json!({"fluxcd.controlplane.io/suspendedBy": "bob",
                "fluxfleet.dev/suspend-reason": "flapping"}),
        );
        hr["spec"]["suspend"] = serde_json::json!(true);
        let s = summary(FluxKind::HelmRelease, &hr);
        assert_eq!(
            s.suspension().as_deref(),
            Some("suspended by bob: flapping")
        );
        assert_eq!(summarize(FluxKind::HelmRelease, None), None);
    }
}
