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

use std::collections::HashMap;

use serde::Serialize;

use super::health::Health;
use super::read::ReadError;
use super::trace::ClusterUnread;
use super::{FluxKind, ObjectKey};

/// The longest name kept of an inventory entry (Kubernetes names are at most 253 bytes).
const TEXT: usize = 253;

/// An object a tree names, as an inventory writes it (`<namespace>_<name>_<group>_<kind>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Entry {
    /// Empty for a cluster-scoped object.
    pub namespace: String,
    pub name: String,
    /// Empty for the core group.
    pub group: String,
    pub kind: String,
}

impl Entry {
    /// An inventory entry's id; None where it is not one (a part missing or too long). A `:`
    /// in a name (`tree:reader`) is written `__`.
    pub fn parse(id: &str) -> Option<Entry> {
        let (rest, kind) = id.rsplit_once('_')?;
        let (rest, group) = rest.rsplit_once('_')?;
        let (namespace, name) = rest.split_once('_')?;
        Entry::named(namespace, &name.replace("__", ":"), group, kind)
    }

    /// An object by its parts; None where one is missing or too long.
    pub fn named(namespace: &str, name: &str, group: &str, kind: &str) -> Option<Entry> {
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
pub enum ClusterTree {
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
    /// Of those, where its health was read as ready (Flux objects only, where read; None for
    /// others, and a Flux object read on no cluster).
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
    pub unread: Vec<ClusterUnread>,
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

/// A node of the fleet's tree while folding, its children in the order the clusters name them.
struct Merged {
    entry: Entry,
    seen: Seen,
    children: Vec<Merged>,
    /// Where each child is in `children`.
    at: HashMap<Entry, usize>,
}

impl Merged {
    fn new(entry: Entry) -> Merged {
        Merged {
            entry,
            seen: Seen::default(),
            children: Vec::new(),
            at: HashMap::new(),
        }
    }

    /// Adds `planted`, one cluster's node, to this one (the same entry).
    fn add(&mut self, planted: &Planted, cluster: &str) {
        let seen = &mut self.seen;
        seen.on.push(cluster.to_string());
        // Ready is counted where a Flux object's health was read (not below a release, nor on
        // another cluster).
        seen.flux |= planted.health.is_some();
        if planted.health.is_some_and(|h| !h.is_not_ready()) {
            seen.ready += 1;
        }
        if planted.missing {
            seen.missing.push(cluster.to_string());
        }
        if let Some(stop) = planted.stop {
            seen.stopped.push((cluster.to_string(), stop));
        }
        for child in &planted.children {
            let i = *self.at.entry(child.entry.clone()).or_insert_with(|| {
                self.children.push(Merged::new(child.entry.clone()));
                self.children.len() - 1
            });
            self.children[i].add(child, cluster);
        }
    }

    /// This node and those under it, a parent before its children, in `out`.
    fn flatten(self, depth: usize, parent: Option<&[String]>, out: &mut Vec<Node>) {
        let Merged {
            entry,
            mut seen,
            children,
            ..
        } = self;
        seen.on.sort();
        seen.missing.sort();
        seen.stopped.sort_by(|a, b| a.0.cmp(&b.0));
        let without = parent
            .into_iter()
            .flatten()
            .filter(|c| seen.on.binary_search(c).is_err())
            .cloned()
            .collect();
        out.push(Node {
            depth,
            entry,
            on: seen.on.len(),
            ready: seen.flux.then_some(seen.ready),
            without,
            missing: seen.missing,
            stopped: seen.stopped,
        });
        for child in children {
            child.flatten(depth + 1, Some(&seen.on), out);
        }
    }
}

/// Folds what each cluster answered into one tree: each node's children in the order the
/// clusters' inventories name them (the first cluster by name, then what others add).
pub fn fold(mut read: Vec<(String, Result<ClusterTree, ReadError>)>) -> Tree {
    read.sort_by(|a, b| a.0.cmp(&b.0));
    let mut tree = Tree {
        clusters: read.len(),
        ..Tree::default()
    };
    let mut root: Option<Merged> = None;
    for (cluster, answer) in read {
        match answer {
            Ok(ClusterTree::Absent) => tree.absent.push(cluster),
            Ok(ClusterTree::Found(planted)) => {
                root.get_or_insert_with(|| Merged::new(planted.entry.clone()))
                    .add(&planted, &cluster);
                tree.found.push(cluster);
            }
            Err(error) => tree.unread.push(ClusterUnread { cluster, error }),
        }
    }
    if let Some(root) = root {
        root.flatten(0, None, &mut tree.nodes);
    }
    tree
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
