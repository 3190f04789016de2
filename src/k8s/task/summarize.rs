//! From a watched object to its summary. Objects arrive read slim (`super::slim`): HelmRelease
//! values, inventories and managedFields were skipped by the parser, so nothing is trimmed here.

use serde_json::Value;

use crate::fleet::{FluxKind, FluxSummary, ObjectKey};

/// The summary of one watched object; None (and a debug log) for an object that is not one.
pub fn summarize(kind: FluxKind, object: Value) -> Option<FluxSummary> {
    if !object.is_object() {
        tracing::debug!(%kind, "skipping a watched item that is not an object");
        return None;
    }
    match FluxSummary::of(kind, &object) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::debug!(%kind, error = %e, "skipping an object that cannot be summarised");
            None
        }
    }
}

/// The key of a deleted object.
pub fn key_of(kind: FluxKind, object: &Value) -> Option<ObjectKey> {
    let metadata = &object["metadata"];
    let name = metadata["name"].as_str()?;
    let namespace = metadata["namespace"].as_str().unwrap_or_default();
    Some(ObjectKey::new(kind, namespace, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::Health;

    fn object(kind: &str, annotations: serde_json::Value) -> Value {
        serde_json::json!({
            "apiVersion": "v1", "kind": kind,
            "metadata": {"name": "x", "namespace": "flux-system", "generation": 2,
                         "annotations": annotations},
            "spec": {}, "status": {"observedGeneration": 2,
                "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]}
        })
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
        assert_eq!(s.suspension(), None, "no suspender recorded");
        // Who suspended it and why survive the trimming, from fluxfleet or the Flux Operator.
        let mut hr = object(
            "HelmRelease",
            serde_json::json!({"fluxcd.controlplane.io/suspendedBy": "bob",
                "fluxfleet.dev/suspend-reason": "flapping"}),
        );
        hr["spec"]["suspend"] = serde_json::json!(true);
        let s = summarize(FluxKind::HelmRelease, hr).unwrap();
        assert_eq!(
            s.suspension().as_deref(),
            Some("suspended by bob: flapping")
        );
    }
}
