//! Where each object's revision comes from, reproducibly for a seed: a source's revision at a
//! rollout generation (Git commits, OCI digests, chart versions), the revision its consumers
//! get from it, and the source an applier or chart reads from.

use serde_json::{Value, json};

use super::catalog;
use super::rng::Rng;
use crate::facts::FluxKind;

/// Where the fleet-wide rollout is: which revision generation each workspace ring runs.
pub fn git_revision(seed: u64, generation: usize) -> String {
    format!(
        "main@sha1:{}",
        Rng::fork(seed, &format!("git-{generation}")).hex(40)
    )
}

/// The chart version at a rollout generation: the catalog's three, then patch bumps.
pub fn chart_version(versions: &[&str; 3], generation: usize) -> String {
    if generation < 3 {
        return versions[generation].to_string();
    }
    let last = versions[2];
    match last.rsplit_once('.') {
        Some((head, patch)) => match patch.parse::<usize>() {
            Ok(p) => format!("{head}.{}", p + generation - 2),
            Err(_) => last.to_string(),
        },
        None => last.to_string(),
    }
}

pub type ObjKey = (FluxKind, String, String);

pub(crate) fn key_of(kind: FluxKind, obj: &Value) -> ObjKey {
    let m = &obj["metadata"];
    (
        kind,
        m["namespace"].as_str().unwrap_or("").into(),
        m["name"].as_str().unwrap_or("").into(),
    )
}

/// The source an applier or chart reads from, as a store key.
pub fn source_of(kind: FluxKind, obj: &Value) -> Option<ObjKey> {
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let reference = |r: &Value, default_ns: &str| -> Option<ObjKey> {
        let kind = FluxKind::from_kind(r.get("kind")?.as_str()?)?;
        let name = r.get("name")?.as_str()?.to_string();
        let ns = r
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or(default_ns)
            .to_string();
        Some((kind, ns, name))
    };
    match kind {
        FluxKind::Kustomization => reference(obj.pointer("/spec/sourceRef")?, ns),
        FluxKind::HelmRelease => {
            if let Some(r) = obj.pointer("/spec/chartRef") {
                return reference(r, ns);
            }
            let src_ns = obj
                .pointer("/spec/chart/spec/sourceRef/namespace")
                .and_then(Value::as_str)
                .unwrap_or(ns);
            let name = obj.pointer("/metadata/name").and_then(Value::as_str)?;
            Some((
                FluxKind::HelmChart,
                src_ns.to_string(),
                format!("{ns}-{name}"),
            ))
        }
        _ => None,
    }
}

/// The revision a consumer gets from its source's artifact revision.
pub fn consumed_revision(kind: FluxKind, source: FluxKind, source_revision: &str) -> String {
    if kind == FluxKind::HelmRelease && source == FluxKind::OciRepository {
        // `<tag>+<first 12 hex of the digest>` (FACTS §3.5).
        let (tag, digest) = source_revision
            .split_once("@sha256:")
            .unwrap_or((source_revision, ""));
        return format!("{tag}+{}", &digest[..digest.len().min(12)]);
    }
    source_revision.to_string()
}

/// The revision a source has at a rollout generation.
pub fn source_revision(seed: u64, kind: FluxKind, obj: &Value, generation: usize) -> String {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let digest = |label: &str| Rng::fork(seed, label).hex(64);
    match kind {
        FluxKind::GitRepository if name == "flux-system" => git_revision(seed, generation),
        FluxKind::GitRepository => format!("main@sha1:{}", Rng::fork(seed, name).hex(40)),
        FluxKind::OciRepository => {
            let tag = if name.starts_with("redis") {
                "21.2.5"
            } else {
                "6.9.0"
            };
            format!("{tag}@sha256:{}", digest(name))
        }
        FluxKind::HelmChart => catalog::chart_versions(name)
            .map_or_else(|| "1.0.0".to_string(), |v| chart_version(v, generation)),
        _ => format!("sha256:{}", digest(name)),
    }
}

/// The revision an object reaches at a rollout generation: its own for a source, its source's
/// (as consumed) for an applier.
pub(crate) fn revision_at(seed: u64, kind: FluxKind, obj: &Value, generation: usize) -> String {
    match source_of(kind, obj) {
        Some((skind, _, sname)) => {
            let source = json!({"metadata": {"name": sname}});
            consumed_revision(
                kind,
                skind,
                &source_revision(seed, skind, &source, generation),
            )
        }
        None => source_revision(seed, kind, obj, generation),
    }
}
