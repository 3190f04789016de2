//! Growing one cluster's tree: the root read, a Kustomization's inventory taken as it is
//! written (as `flux tree` takes it: what it names is not each read), every Flux object in it
//! read for its health, Kustomizations and HelmReleases followed down; a HelmRelease's objects
//! from its own inventory (helm-controller, Flux 2.8 on), else listed by the labels
//! helm-controller sets on everything it applies, in the kinds charts mostly hold — never from
//! Helm's storage, which is a Secret. Bounded: [`MAX_DEPTH`] levels,
//! [`MAX_NODES`] nodes, [`MAX_READS`] Flux objects read; where it stops is said.

use std::collections::HashSet;

use serde_json::Value;

use super::{ClusterTree, Entry, Planted, Stop, inventory};
use crate::fleet::health::health_of;
use crate::fleet::read::ReadError;
use crate::fleet::trace::MAX_DEPTH;
use crate::fleet::trace::walk::Get;
use crate::fleet::{FluxKind, ObjectKey};

/// Nodes one cluster's tree may have.
pub const MAX_NODES: usize = 5_000;

/// Flux objects read on one cluster for one tree, the root's included.
pub const MAX_READS: usize = 256;

/// The kinds a HelmRelease's objects are listed in (group, version, plural, kind), in its
/// release's namespace: what charts mostly render, in the order Helm installs them (as
/// `flux tree` prints a release's manifest). Cluster-scoped objects and other kinds of a chart
/// are not found this way.
pub const RELEASED: &[(&str, &str, &str, &str)] = &[
    ("", "v1", "serviceaccounts", "ServiceAccount"),
    ("", "v1", "configmaps", "ConfigMap"),
    ("", "v1", "services", "Service"),
    ("apps", "v1", "daemonsets", "DaemonSet"),
    ("apps", "v1", "deployments", "Deployment"),
    ("apps", "v1", "statefulsets", "StatefulSet"),
    ("batch", "v1", "jobs", "Job"),
    ("batch", "v1", "cronjobs", "CronJob"),
    ("networking.k8s.io", "v1", "ingresses", "Ingress"),
    (
        "kustomize.toolkit.fluxcd.io",
        "v1",
        "kustomizations",
        "Kustomization",
    ),
];

/// The objects listed of one kind for one release.
const PER_KIND: usize = 500;

/// What one cluster's walk has spent.
#[derive(Default)]
struct Spent {
    nodes: usize,
    reads: usize,
    /// The Flux objects already in the tree.
    seen: HashSet<ObjectKey>,
}

/// `root`'s tree on one cluster, read through `get`.
pub async fn grow(get: &mut impl Get, root: &ObjectKey) -> Result<ClusterTree, ReadError> {
    let object = match get.get(&get.flux_path(root)).await {
        Ok(object) => object,
        Err(ReadError::NotFound) => return Ok(ClusterTree::Absent),
        Err(e) => return Err(e),
    };
    let mut spent = Spent {
        reads: 1,
        nodes: 1,
        ..Spent::default()
    };
    spent.seen.insert(root.clone());
    let planted = under(get, Entry::of(root), root.kind, &object, 0, &mut spent).await?;
    Ok(ClusterTree::Found(planted))
}

/// The node of the Flux object `object`, and what is under it.
async fn under(
    get: &mut impl Get,
    entry: Entry,
    kind: FluxKind,
    object: &Value,
    depth: usize,
    spent: &mut Spent,
) -> Result<Planted, ReadError> {
    let mut node = Planted::leaf(entry);
    node.health = Some(health_of(kind, object));
    // What applies to another cluster (`spec.kubeConfig`) has its objects there: a release's
    // are not found here, a Kustomization's are named and not read.
    let remote = object
        .pointer("/spec/kubeConfig")
        .is_some_and(|k| !k.is_null());
    let (named, follow) = match kind {
        FluxKind::Kustomization => (inventory(object), !remote),
        // helm-controller keeps a release's objects in its inventory since Flux 2.8 (what its
        // manifest holds, as `flux tree` reads it from Helm's storage); before, found by labels.
        FluxKind::HelmRelease if !remote => match object.pointer("/status/inventory") {
            Some(_) => (inventory(object), false),
            None => (released(get, object).await?, false),
        },
        _ => return Ok(node),
    };
    for entry in named {
        if spent.nodes >= MAX_NODES {
            node.stop = Some(Stop::TooMany);
            break;
        }
        // A bootstrapped Kustomization applies itself: left out, as `flux tree` leaves it.
        if entry == node.entry {
            continue;
        }
        spent.nodes += 1;
        node.children.push(match follow {
            true => Box::pin(child(get, entry, depth + 1, spent)).await?,
            false => Planted::leaf(entry),
        });
    }
    Ok(node)
}

/// One entry of a parent's: a Flux object read (and followed, for the two that apply), any
/// other object as named.
async fn child(
    get: &mut impl Get,
    entry: Entry,
    depth: usize,
    spent: &mut Spent,
) -> Result<Planted, ReadError> {
    let Some(key) = entry.key() else {
        return Ok(Planted::leaf(entry));
    };
    let mut node = Planted::leaf(entry);
    if !spent.seen.insert(key.clone()) {
        node.stop = Some(Stop::Loop);
        return Ok(node);
    }
    let applies = matches!(key.kind, FluxKind::Kustomization | FluxKind::HelmRelease);
    if applies && depth > MAX_DEPTH {
        node.stop = Some(Stop::TooDeep);
        return Ok(node);
    }
    if spent.reads >= MAX_READS {
        node.stop = Some(Stop::TooMany);
        return Ok(node);
    }
    spent.reads += 1;
    let object = match get.get(&get.flux_path(&key)).await {
        Ok(object) => object,
        Err(ReadError::NotFound) => {
            node.missing = true;
            return Ok(node);
        }
        Err(e) => return Err(e),
    };
    let entry = node.entry;
    under(get, entry, key.kind, &object, depth, spent).await
}

/// A HelmRelease's objects: those of [`RELEASED`]'s kinds in its release's namespace labelled
/// with its name and namespace. A kind the cluster does not serve, or will not list to these
/// credentials, has none.
async fn released(get: &mut impl Get, release: &Value) -> Result<Vec<Entry>, ReadError> {
    let text = |path: &str| {
        release
            .pointer(path)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let (Some(name), Some(namespace)) = (text("/metadata/name"), text("/metadata/namespace"))
    else {
        return Ok(Vec::new());
    };
    let target = text("/spec/targetNamespace").unwrap_or(namespace);
    let selector = crate::fleet::read::query_escape(&format!(
        "helm.toolkit.fluxcd.io/name={name},helm.toolkit.fluxcd.io/namespace={namespace}"
    ));
    let mut out = Vec::new();
    for (group, version, plural, kind) in RELEASED {
        let api = match group.is_empty() {
            true => format!("/api/{version}"),
            false => format!("/apis/{group}/{version}"),
        };
        let path =
            format!("{api}/namespaces/{target}/{plural}?labelSelector={selector}&limit={PER_KIND}");
        let list = match get.get(&path).await {
            Ok(list) => list,
            Err(ReadError::NotFound | ReadError::Forbidden(_)) => continue,
            Err(e) => return Err(e),
        };
        let items = list.get("items").and_then(Value::as_array);
        for item in items.into_iter().flatten().take(PER_KIND) {
            let Some(name) = item.pointer("/metadata/name").and_then(Value::as_str) else {
                continue;
            };
            out.extend(Entry::named(target, name, group, kind));
        }
    }
    // The chart's CRDs, where the release installs them: helm-controller labels them too.
    let crds = ["/spec/install/crds", "/spec/upgrade/crds"]
        .iter()
        .filter_map(|p| text(p))
        .any(|policy| policy != "Skip");
    if crds {
        let path = format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector={selector}&limit={PER_KIND}"
        );
        match get.get(&path).await {
            Ok(list) => {
                let items = list.get("items").and_then(Value::as_array);
                let names = items.into_iter().flatten().take(PER_KIND);
                out.extend(names.filter_map(|i| {
                    let name = i.pointer("/metadata/name")?.as_str()?;
                    Entry::named("", name, "apiextensions.k8s.io", "CustomResourceDefinition")
                }));
            }
            Err(ReadError::NotFound | ReadError::Forbidden(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
