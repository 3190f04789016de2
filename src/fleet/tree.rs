//! Fleet tree: what a Kustomization or HelmRelease put on each cluster, as `flux tree ks` draws
//! it on one — a Kustomization's inventory (`status.inventory.entries`), the Kustomizations and
//! HelmReleases in it followed down, a HelmRelease's objects found by the labels helm-controller
//! sets on them — then the clusters' trees folded into one: per node on how many of the clusters
//! that have the root, ready on how many (Flux objects: their Ready condition), and the clusters
//! that lack a node their parent has.
//!
//! Pure: [`walk`] reads one cluster through [`super::trace::walk::Get`], `k8s` does the reading,
//! the session gathers the clusters. Everything here came from a cluster: untrusted text.

pub mod walk;

use std::collections::BTreeMap;

use serde::Serialize;

use super::health::Health;
use super::read::ReadError;
use super::trace::Unread;
use super::{FluxKind, ObjectKey};

/// The longest name kept of an inventory entry (Kubernetes names are at most 253 bytes).
const TEXT: usize = 253;

/// An object a tree names, as an inventory writes it (`<namespace>_<name>_<group>_<kind>`).
/// Ordered as kustomize-controller orders its inventory: by that id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Entry {
    /// Empty for a cluster-scoped object.
    pub namespace: String,
    pub name: String,
    /// Empty for the core group.
    pub group: String,
    pub kind: String,
}

impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> std::cmp::Ordering {
        self.id_bytes().cmp(other.id_bytes())
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Entry {
    /// The bytes of its inventory id, without making it.
    fn id_bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let parts = [&self.namespace, &self.name, &self.group, &self.kind];
        parts
            .into_iter()
            .enumerate()
            .flat_map(|(i, p)| (i > 0).then_some(b'_').into_iter().chain(p.bytes()))
    }

    /// An inventory entry's id; None where it is not one (a part missing or too long).
    pub fn parse(id: &str) -> Option<Entry> {
        let (rest, kind) = id.rsplit_once('_')?;
        let (rest, group) = rest.rsplit_once('_')?;
        let (namespace, name) = rest.split_once('_')?;
        let fits = [namespace, name, group, kind]
            .iter()
            .all(|p| p.len() <= TEXT);
        (fits && !name.is_empty() && !kind.is_empty()).then(|| Entry {
            namespace: namespace.into(),
            name: name.into(),
            group: group.into(),
            kind: kind.into(),
        })
    }

    pub fn of(key: &ObjectKey) -> Entry {
        Entry {
            namespace: key.namespace.to_string(),
            name: key.name.to_string(),
            group: key.kind.group().into(),
            kind: key.kind.as_str().into(),
        }
    }

    /// The Flux kind this is, where it is one (its group must be Flux's).
    pub fn flux(&self) -> Option<FluxKind> {
        FluxKind::ALL
            .into_iter()
            .find(|k| k.as_str() == self.kind && k.group() == self.group)
    }

    pub fn key(&self) -> Option<ObjectKey> {
        Some(ObjectKey {
            kind: self.flux()?,
            namespace: self.namespace.as_str().into(),
            name: self.name.as_str().into(),
        })
    }

    /// `Kind/namespace/name` as `flux tree` prints it (`Kind/name` when cluster-scoped).
    pub fn path(&self) -> String {
        match self.namespace.is_empty() {
            true => format!("{}/{}", self.kind, self.name),
            false => format!("{}/{}/{}", self.kind, self.namespace, self.name),
        }
    }
}

/// The entries of a Kustomization's inventory, in its order; what is not an entry is left out.
pub fn inventory(object: &serde_json::Value) -> Vec<Entry> {
    object
        .pointer("/status/inventory/entries")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("id")?.as_str())
        .filter_map(Entry::parse)
        .collect()
}

/// Why a cluster's tree stops short at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Stop {
    /// Deeper than [`super::trace::MAX_DEPTH`] levels of Kustomizations and HelmReleases.
    TooDeep,
    /// An object already in the tree above it (two Kustomizations applying each other).
    Loop,
    /// More than [`walk::MAX_NODES`] nodes, or [`walk::MAX_READS`] Flux objects read.
    TooMany,
}

/// One node of one cluster's tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planted {
    pub entry: Entry,
    /// A Flux object's health, as read; None for other objects, and a Flux object not read.
    pub health: Option<Health>,
    /// A Flux object its parent names that the cluster does not have.
    pub missing: bool,
    pub stop: Option<Stop>,
    pub children: Vec<Planted>,
}

impl Planted {
    pub fn leaf(entry: Entry) -> Planted {
        Planted {
            entry,
            health: None,
            missing: false,
            stop: None,
            children: Vec::new(),
        }
    }
}

/// What one cluster answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grown {
    /// The cluster does not have the root.
    Absent,
    Found(Planted),
}

/// One node of the fleet's tree, in the order `flux tree` draws it (a parent before what is
/// under it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// 0 for the root.
    pub depth: usize,
    #[serde(flatten)]
    pub entry: Entry,
    /// Clusters whose tree has it.
    pub on: usize,
    /// Of those, where its health was read as ready (Flux objects only; None for others).
    pub ready: Option<usize>,
    /// Clusters whose tree has its parent and not it.
    pub without: Vec<String>,
    /// Clusters whose parent names it and that do not have it.
    pub missing: Vec<String>,
    /// Clusters whose tree stops here, and why.
    pub stopped: Vec<(String, Stop)>,
}

/// The fleet's tree of one root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tree {
    /// Clusters in the scope.
    pub clusters: usize,
    /// Clusters that have the root.
    pub found: Vec<String>,
    pub nodes: Vec<Node>,
    /// Clusters without the root.
    pub absent: Vec<String>,
    /// Clusters that could not be read, and why.
    pub unread: Vec<Unread>,
}

impl Tree {
    /// Whether some cluster's tree differs from the others' (a node not on every cluster
    /// that has the root).
    pub fn differs(&self) -> bool {
        self.nodes.iter().any(|n| n.on != self.found.len())
    }
}

/// A node's clusters while folding.
#[derive(Default)]
struct Seen {
    on: Vec<String>,
    ready: usize,
    flux: bool,
    missing: Vec<String>,
    stopped: Vec<(String, Stop)>,
}

/// Folds what each cluster answered into one tree.
pub fn fold(read: Vec<(String, Result<Grown, ReadError>)>) -> Tree {
    let mut tree = Tree {
        clusters: read.len(),
        ..Tree::default()
    };
    let mut seen: BTreeMap<Vec<Entry>, Seen> = BTreeMap::new();
    for (cluster, answer) in read {
        match answer {
            Ok(Grown::Absent) => tree.absent.push(cluster),
            Ok(Grown::Found(root)) => {
                note(&mut seen, &mut Vec::new(), &root, &cluster);
                tree.found.push(cluster);
            }
            Err(error) => tree.unread.push(Unread { cluster, error }),
        }
    }
    // Clusters by name: the same answer however the reads interleaved.
    tree.found.sort();
    tree.absent.sort();
    tree.unread.sort_by(|a, b| a.cluster.cmp(&b.cluster));
    for node in seen.values_mut() {
        node.on.sort();
        node.missing.sort();
        node.stopped.sort_by(|a, b| a.0.cmp(&b.0));
    }
    // Paths sort a parent right before what is under it.
    let paths: Vec<&Vec<Entry>> = seen.keys().collect();
    for path in &paths {
        let node = &seen[*path];
        let parent = path.len().checked_sub(1).map(|n| &path[..n]);
        let without = match parent.and_then(|p| seen.get(p)) {
            Some(parent) => parent
                .on
                .iter()
                .filter(|c| !node.on.contains(c))
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        tree.nodes.push(Node {
            depth: path.len() - 1,
            entry: path[path.len() - 1].clone(),
            on: node.on.len(),
            ready: node.flux.then_some(node.ready),
            without,
            missing: node.missing.clone(),
            stopped: node.stopped.clone(),
        });
    }
    tree
}

fn note(seen: &mut BTreeMap<Vec<Entry>, Seen>, path: &mut Vec<Entry>, at: &Planted, cluster: &str) {
    path.push(at.entry.clone());
    let node = seen.entry(path.clone()).or_default();
    node.on.push(cluster.to_string());
    node.flux |= at.entry.flux().is_some();
    if at.health.is_some_and(|h| !h.is_not_ready()) {
        node.ready += 1;
    }
    if at.missing {
        node.missing.push(cluster.to_string());
    }
    if let Some(stop) = at.stop {
        node.stopped.push((cluster.to_string(), stop));
    }
    for child in &at.children {
        note(seen, path, child, cluster);
    }
    path.pop();
}

/// Each node's line as `flux tree` draws it: `├── `, `└── ` and `│   ` before `Kind/ns/name`
/// (names as the cluster wrote them: made safe where they are shown).
pub fn drawn(nodes: &[Node]) -> Vec<String> {
    // Whether the node at each depth above is the last of its siblings.
    let mut last_at: Vec<bool> = Vec::new();
    let mut out = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let last = nodes[i + 1..]
            .iter()
            .find(|n| n.depth <= node.depth)
            .is_none_or(|n| n.depth < node.depth);
        last_at.truncate(node.depth);
        let mut line = String::new();
        if node.depth > 0 {
            for &above in last_at.iter().skip(1) {
                line.push_str(if above { "    " } else { "│   " });
            }
            line.push_str(if last { "└── " } else { "├── " });
        }
        line.push_str(&node.entry.path());
        last_at.push(last);
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests;
