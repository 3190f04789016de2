//! What a trace reads of an object a cluster answered with: its name, who applied it (the
//! labels kustomize-controller and helm-controller set), its controlling owner, and of a Flux
//! object what it applied from where. Lenient: a field missing or malformed is left out, never
//! an error; every string kept bounded.

use serde_json::Value;

use super::{Applier, ChainLink, SourceRef};
use crate::fleet::FluxKind;

/// The longest name or revision kept (Kubernetes names are at most 253 bytes).
const TEXT: usize = 512;

/// The labels each applier sets on what it applies.
const APPLIED_BY: [(FluxKind, &str, &str); 2] = [
    (
        FluxKind::Kustomization,
        "kustomize.toolkit.fluxcd.io/name",
        "kustomize.toolkit.fluxcd.io/namespace",
    ),
    (
        FluxKind::HelmRelease,
        "helm.toolkit.fluxcd.io/name",
        "helm.toolkit.fluxcd.io/namespace",
    ),
];

fn bounded(text: &str) -> String {
    match text.char_indices().nth(TEXT) {
        Some((at, _)) => text[..at].to_string(),
        None => text.to_string(),
    }
}

fn text(value: &Value, path: &str) -> Option<String> {
    value
        .pointer(path)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(bounded)
}

/// The object as a link of the chain; `kind` when the answer does not say its own.
pub fn link(object: &Value, kind: &str) -> ChainLink {
    ChainLink {
        kind: text(object, "/kind").unwrap_or_else(|| bounded(kind)),
        namespace: text(object, "/metadata/namespace").unwrap_or_default(),
        name: text(object, "/metadata/name").unwrap_or_default(),
    }
}

/// The Flux object whose labels say it applied `object`: kind, namespace (the object's own
/// when the label is missing, as the controllers read it), name.
pub fn applied_by(object: &Value) -> Option<(FluxKind, String, String)> {
    let labels = object.pointer("/metadata/labels")?;
    APPLIED_BY.iter().find_map(|(kind, name, namespace)| {
        let name = text(labels, &format!("/{}", name.replace('/', "~1")))?;
        let namespace = text(labels, &format!("/{}", namespace.replace('/', "~1")))
            .or_else(|| text(object, "/metadata/namespace"))
            .unwrap_or_default();
        Some((*kind, namespace, name))
    })
}

/// An owner reference: what `object` belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

/// `object`'s controlling owner (`controller: true`), else its only owner; the owner is in
/// the object's namespace (owner references never cross namespaces).
pub fn owner(object: &Value) -> Option<Owner> {
    let refs = object.pointer("/metadata/ownerReferences")?.as_array()?;
    let read = |r: &Value| {
        Some(Owner {
            api_version: text(r, "/apiVersion")?,
            kind: text(r, "/kind")?,
            name: text(r, "/name")?,
        })
    };
    let controller = refs
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true));
    match (controller, refs.as_slice()) {
        (Some(r), _) => read(r),
        (None, [only]) => read(only),
        _ => None,
    }
}

/// What a Kustomization or HelmRelease applied, from where (its source is named, not read:
/// see [`source`]).
pub fn applier(kind: FluxKind, object: &Value) -> Applier {
    let namespace = text(object, "/metadata/namespace").unwrap_or_default();
    let name = text(object, "/metadata/name").unwrap_or_default();
    let reference = |at: &str| -> Option<SourceRef> {
        let r = object.pointer(at)?;
        Some(SourceRef {
            kind: text(r, "/kind")?,
            namespace: text(r, "/namespace").unwrap_or_else(|| namespace.clone()),
            name: text(r, "/name")?,
            url: None,
            missing: false,
            via: None,
        })
    };
    let (revision, source) = match kind {
        FluxKind::HelmRelease => (
            text(object, "/status/history/0/chartVersion")
                .or_else(|| text(object, "/status/lastAppliedRevision")),
            reference("/spec/chartRef").or_else(|| reference("/spec/chart/spec/sourceRef")),
        ),
        _ => (
            text(object, "/status/lastAppliedRevision"),
            reference("/spec/sourceRef"),
        ),
    };
    Applier {
        kind,
        namespace,
        name,
        revision,
        origin_revision: text(object, "/status/lastAppliedOriginRevision"),
        source,
    }
}

/// Where a HelmChart's chart comes from (`spec.sourceRef`, in the HelmChart's namespace).
pub fn chart_source(helm_chart: &Value) -> Option<SourceRef> {
    let r = helm_chart.pointer("/spec/sourceRef")?;
    Some(SourceRef {
        kind: text(r, "/kind")?,
        namespace: text(helm_chart, "/metadata/namespace").unwrap_or_default(),
        name: text(r, "/name")?,
        url: None,
        missing: false,
        via: None,
    })
}

/// A source object's URL (`spec.url`; a Bucket's endpoint and bucket).
pub fn source_url(object: &Value) -> Option<String> {
    text(object, "/spec/url").or_else(|| {
        let endpoint = text(object, "/spec/endpoint")?;
        let bucket = text(object, "/spec/bucketName")?;
        Some(bounded(&format!("{endpoint}/{bucket}")))
    })
}
