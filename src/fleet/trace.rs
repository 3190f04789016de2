//! Fleet trace: from an object (a Deployment, a Service, a Pod) on many clusters to the Flux
//! objects that put it there — as `flux trace` answers it on one cluster: the object, its owners
//! up to what Flux applied (owner references, `controller: true`), the Kustomization or
//! HelmRelease that applied that (`kustomize.toolkit.fluxcd.io/name` / `helm.toolkit.fluxcd.io/name`
//! labels), its source and the revision applied, and the one that applied it, as far as it goes
//! — then every copy's chain folded across clusters by its [`Shape`], the majority first.
//!
//! Pure: [`parse`] reads what a cluster answered, `k8s` does the reading, the session gathers
//! the clusters. Everything here came from a cluster: names are untrusted text.

pub mod parse;
pub mod resource;
pub mod walk;

use std::collections::BTreeMap;

use serde::Serialize;

use super::FluxKind;
use super::read::ReadError;

/// What is traced: the kind as the user wrote it, where it is served when that is known
/// without asking a cluster (None: `kind.group`, found in each cluster's discovery), the
/// namespace (empty for a cluster-scoped kind) and the name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    pub kind: String,
    pub resource: Option<resource::Resource>,
    pub namespace: String,
    pub name: String,
}

/// How far a chain is followed, owners and appliers each: a loop or a deeper chain stops there.
pub const MAX_DEPTH: usize = 8;

/// An object of the chain below what Flux applied, as the cluster named it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ChainLink {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// Where a Flux object's content comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRef {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// Its URL, where it was read (`spec.url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The cluster does not have it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// The HelmChart it was reached through (a HelmRelease's `chartRef`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// A Flux object that applied what is below it in the chain.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applier {
    pub kind: FluxKind,
    pub namespace: String,
    pub name: String,
    /// What it applied last: a Kustomization's `status.lastAppliedRevision`, a HelmRelease's
    /// chart version (`status.history[0].chartVersion`, else `status.lastAppliedRevision`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The revision of the origin, where the source says it (OCI artifacts, ExternalArtifact:
    /// `status.lastAppliedOriginRevision`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_revision: Option<String>,
    /// Its source: a Kustomization's `sourceRef`, a HelmRelease's chart source (`chartRef`, or
    /// the `sourceRef` of `chart.spec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRef>,
}

/// Why a chain ends before the top (a bootstrapped Kustomization that applies itself ends
/// where it loops, which is the top). A step that cannot be read is no stop: the copy is not
/// read (a chain cut by a failed read would look like one that differs).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
pub enum ChainStop {
    /// The labels name a Flux object the cluster does not have.
    AppliedByMissing {
        kind: FluxKind,
        namespace: String,
        name: String,
    },
    /// More than [`MAX_DEPTH`] steps.
    TooDeep,
}

/// One copy's chain: the object asked for and its owners (the object first, what Flux applied
/// last), then the Flux objects that applied it, nearest first. No appliers: not managed by
/// Flux.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chain {
    pub objects: Vec<ChainLink>,
    pub appliers: Vec<Applier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<ChainStop>,
}

/// What one cluster answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterChain {
    /// The cluster does not have the object.
    Absent,
    Found(Chain),
}

/// What makes two copies' chains the same: the kinds of the owners below what Flux applied
/// (their names differ between clusters — a ReplicaSet's hash, a pod's suffix), the object
/// Flux applied, and every applier with its source and revision.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shape {
    /// Kinds from the object asked for up to, not including, [`Shape::applied`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<String>,
    /// The object Flux applied (the top of the owners when nothing applied it).
    pub applied: ChainLink,
    /// Empty: not managed by Flux.
    pub appliers: Vec<Applier>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<ChainStop>,
}

impl Chain {
    pub fn managed(&self) -> bool {
        !self.appliers.is_empty()
    }

    pub fn shape(&self) -> Shape {
        let (below, top) = match self.objects.split_last() {
            Some((top, below)) => (below, top.clone()),
            None => (&[][..], ChainLink::default()),
        };
        Shape {
            owners: below.iter().map(|l| l.kind.clone()).collect(),
            applied: top,
            appliers: self.appliers.clone(),
            stop: self.stop.clone(),
        }
    }
}

impl Shape {
    pub fn managed(&self) -> bool {
        !self.appliers.is_empty()
    }

    /// The chain in a line, for people: `Deployment apps/apps ← Kustomization flux-system/apps
    /// (main@sha1:1a2b3c4d from GitRepository flux-system/flux-system) ← …`.
    pub fn line(&self) -> String {
        let mut out = String::new();
        for kind in &self.owners {
            out.push_str(kind);
            out.push_str(" → ");
        }
        out.push_str(&format!(
            "{} {}",
            self.applied.kind,
            object_name(&self.applied.namespace, &self.applied.name)
        ));
        if self.appliers.is_empty() {
            out.push_str(" — not managed by Flux");
        }
        for a in &self.appliers {
            out.push_str(&format!(" ← {} {}/{}", a.kind, a.namespace, a.name));
            let mut said = Vec::new();
            if let Some(r) = &a.revision {
                said.push(r.clone());
            }
            if let Some(o) = &a.origin_revision {
                said.push(format!("origin {o}"));
            }
            if let Some(s) = &a.source {
                let mut from = format!("from {} {}/{}", s.kind, s.namespace, s.name);
                if let Some(url) = &s.url {
                    from.push_str(&format!(" at {url}"));
                }
                if s.missing {
                    from.push_str(", which the cluster does not have");
                }
                said.push(from);
            }
            if !said.is_empty() {
                out.push_str(&format!(" ({})", said.join(", ")));
            }
        }
        if let Some(stop) = &self.stop {
            out.push_str(&format!(" — {}", stop.words()));
        }
        out
    }
}

fn object_name(namespace: &str, name: &str) -> String {
    match namespace.is_empty() {
        true => name.to_string(),
        false => format!("{namespace}/{name}"),
    }
}

impl ChainStop {
    pub fn words(&self) -> String {
        match self {
            ChainStop::AppliedByMissing {
                kind,
                namespace,
                name,
            } => format!(
                "its labels name {kind} {namespace}/{name}, which the cluster does not have"
            ),
            ChainStop::TooDeep => format!("followed no further than {MAX_DEPTH} steps"),
        }
    }
}

/// The copies of one object across the clusters of a scope, folded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    /// Clusters in the scope.
    pub clusters: usize,
    /// Each shape with the clusters whose copy has it, the most clusters first.
    pub shapes: Vec<ShapeGroup>,
    /// Clusters without the object.
    pub absent: Vec<String>,
    /// Clusters that could not be read, and why.
    pub unread: Vec<ClusterUnread>,
}

/// One shape, with the clusters whose copy has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapeGroup {
    pub shape: Shape,
    /// The chain as one line, for people.
    pub says: String,
    pub clusters: Vec<String>,
    /// Each copy's own chain, by cluster (the owners' own names).
    #[serde(skip)]
    pub chains: Vec<Chain>,
}

/// A cluster that could not be read (for a trace or a tree), and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClusterUnread {
    pub cluster: String,
    pub error: ReadError,
}

impl Trace {
    /// Whether the copies found do not share one chain.
    pub fn diverges(&self) -> bool {
        self.shapes.len() > 1
    }

    /// The clusters whose copy's chain is not the majority's.
    pub fn outliers(&self) -> Vec<&str> {
        self.shapes
            .iter()
            .skip(1)
            .flat_map(|g| g.clusters.iter().map(String::as_str))
            .collect()
    }
}

/// Folds what each cluster answered: copies grouped by shape, the most clusters first (ties:
/// a managed shape before an unmanaged one, then by shape), clusters in name order.
pub fn fold(read: Vec<(String, Result<ClusterChain, ReadError>)>) -> Trace {
    let clusters = read.len();
    let mut groups: BTreeMap<Shape, Vec<(String, Chain)>> = BTreeMap::new();
    let (mut absent, mut unread) = (Vec::new(), Vec::new());
    for (cluster, answer) in read {
        match answer {
            Ok(ClusterChain::Absent) => absent.push(cluster),
            Ok(ClusterChain::Found(chain)) => groups
                .entry(chain.shape())
                .or_default()
                .push((cluster, chain)),
            Err(error) => unread.push(ClusterUnread { cluster, error }),
        }
    }
    let mut shapes: Vec<ShapeGroup> = groups
        .into_iter()
        .map(|(shape, mut copies)| {
            copies.sort_by(|a, b| a.0.cmp(&b.0));
            let (clusters, chains) = copies.into_iter().unzip();
            ShapeGroup {
                says: shape.line(),
                shape,
                clusters,
                chains,
            }
        })
        .collect();
    shapes.sort_by(|a, b| {
        b.clusters
            .len()
            .cmp(&a.clusters.len())
            .then_with(|| b.shape.managed().cmp(&a.shape.managed()))
            .then_with(|| a.shape.cmp(&b.shape))
    });
    absent.sort();
    unread.sort_by(|a: &ClusterUnread, b| a.cluster.cmp(&b.cluster));
    Trace {
        clusters,
        shapes,
        absent,
        unread,
    }
}

#[cfg(test)]
mod tests;
