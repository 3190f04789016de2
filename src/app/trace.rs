//! `T`: where an object comes from on every cluster — the detail view's object, or, once `w`
//! has read them, the workload shown first — traced on the whole fleet and folded, in a view
//! of its own (as `fluxfleet trace` says it). `i`: a Kustomization's or HelmRelease's tree on
//! every cluster, folded into one (as `fluxfleet tree`).

use super::message::Effect;
use super::model::Model;
use super::view::{Fetched, View};
use crate::fleet::trace::{Asked, Trace, resource::Resource};
use crate::fleet::tree::Tree;
use crate::fleet::{FluxKind, ObjectKey};

/// What `T` traces here: in the workloads view the workload picked; in the detail view the
/// first workload `w` read there, else its object.
fn asked_here(model: &Model) -> Option<Asked> {
    if let (View::Tree(_), Some(Fetched::Tree(tree))) =
        (&model.screen().view, model.reads().fetched())
    {
        return tree
            .nodes
            .get(model.reads().picked())
            .and_then(|n| of_entry(&n.entry));
    }
    let key = match &model.screen().view {
        View::Detail { key, .. } | View::Workloads { key, .. } => key,
        _ => return None,
    };
    let picked = match model.screen().view {
        View::Workloads { .. } => model.reads().picked(),
        _ => 0,
    };
    let (kind, namespace, name) = match model.reads().fetched() {
        Some(Fetched::Workloads(folded)) if !folded.lines.is_empty() => {
            let w = &folded.lines[picked.min(folded.lines.len() - 1)].workload;
            (
                w.kind.as_str().to_string(),
                w.namespace.clone(),
                w.name.clone(),
            )
        }
        _ => (
            key.kind.as_str().to_string(),
            key.namespace.to_string(),
            key.name.to_string(),
        ),
    };
    Some(Asked {
        resource: Resource::named(&kind).ok().flatten(),
        kind,
        namespace,
        name,
    })
}

pub(super) fn ask(model: &mut Model) -> Vec<Effect> {
    let Some(asked) = asked_here(model) else {
        model.say(
            "T traces the object of a detail view, the workload picked in w's view or the node \
             picked in a tree (never a Secret)",
        );
        return Vec::new();
    };
    let infos = fleet(model);
    model.push_keeping(View::Trace(Box::new(asked.clone())));
    model.set_fetched(Some(Fetched::Loading("trace")));
    vec![Effect::FetchTrace { asked, infos }]
}

/// The trace arrived: shown if the user still looks at it.
pub(super) fn arrived(model: &mut Model, asked: Asked, trace: Box<Trace>) {
    if matches!(&model.screen().view, View::Trace(shown) if **shown == asked) {
        model.set_fetched(Some(Fetched::Trace(trace)));
    }
}

/// Every cluster that has not left the fleet.
fn fleet(model: &Model) -> Vec<std::sync::Arc<crate::fleet::ClusterInfo>> {
    model
        .index()
        .entries()
        .filter(|(_, c)| !c.retired)
        .map(|(_, c)| c.info.clone())
        .collect()
}

/// `i` in the detail view of a Kustomization or HelmRelease: its tree on every cluster.
pub(super) fn tree(model: &mut Model) -> Vec<Effect> {
    let root = match &model.screen().view {
        View::Detail { key, .. }
            if matches!(key.kind, FluxKind::Kustomization | FluxKind::HelmRelease) =>
        {
            key.clone()
        }
        _ => {
            model.say("i shows the tree of a Kustomization or HelmRelease from its detail view");
            return Vec::new();
        }
    };
    let infos = fleet(model);
    model.push(View::Tree(Box::new(root.clone())));
    model.set_fetched(Some(Fetched::Loading("tree")));
    vec![Effect::FetchTree { root, infos }]
}

/// The tree arrived: shown if the user still looks at it.
pub(super) fn grown(model: &mut Model, root: ObjectKey, tree: Box<Tree>) {
    if matches!(&model.screen().view, View::Tree(shown) if **shown == root) {
        model.set_fetched(Some(Fetched::Tree(tree)));
    }
}

/// `enter` in a trace or a tree: the copy picked, on the first of its clusters — a chain's
/// nearest Kustomization or HelmRelease, a tree's Flux object in its detail view; what Flux
/// does not manage, or any other object, its cluster.
pub(super) fn open_copy(model: &mut Model) -> Vec<Effect> {
    let picked = model.reads().picked();
    let (cluster, key) = match model.reads().fetched() {
        Some(Fetched::Trace(trace)) => {
            let Some(group) = trace.shapes.get(picked) else {
                return Vec::new();
            };
            let key = group
                .chains
                .first()
                .and_then(|c| c.appliers.first())
                .map(|a| ObjectKey {
                    kind: a.kind,
                    namespace: a.namespace.as_str().into(),
                    name: a.name.as_str().into(),
                });
            (group.clusters.first().cloned(), key)
        }
        Some(Fetched::Tree(tree)) => {
            let Some(node) = tree.nodes.get(picked) else {
                return Vec::new();
            };
            (holding(tree, picked).into_iter().next(), node.entry.key())
        }
        _ => return Vec::new(),
    };
    let Some(id) = cluster.and_then(|name| {
        let entry = model.index().cluster_named(&name)?;
        model.index().id_of(&entry.info.key)
    }) else {
        model.say("that cluster has left the fleet");
        return Vec::new();
    };
    match key {
        Some(key) => model.push_keeping(View::Detail { cluster: id, key }),
        None => model.push_keeping(View::Cluster(id)),
    }
    Vec::new()
}

/// The clusters whose tree has node `at`: those that have the root, less those that lack a
/// node on its way down.
fn holding(tree: &Tree, at: usize) -> Vec<String> {
    let mut by_depth: Vec<Vec<String>> = Vec::new();
    for node in &tree.nodes[..=at] {
        by_depth.truncate(node.depth);
        let above = by_depth.last().unwrap_or(&tree.found);
        let here = above
            .iter()
            .filter(|c| !node.without.contains(c))
            .cloned()
            .collect();
        by_depth.push(here);
    }
    by_depth.pop().unwrap_or_default()
}

/// What `T` traces for a tree's node: its kind as kubectl names it, with its group where the
/// kind is not one known without asking; None for a Secret (never read).
fn of_entry(entry: &crate::fleet::tree::Entry) -> Option<Asked> {
    let known = match Resource::named(&entry.kind) {
        Err(crate::fleet::trace::resource::Untraceable::Secret) => return None,
        answer => answer.ok().flatten(),
    };
    let kind = match (&known, entry.group.is_empty()) {
        (Some(_), _) | (None, true) => entry.kind.clone(),
        (None, false) => format!("{}.{}", entry.kind, entry.group),
    };
    Some(Asked {
        resource: known,
        kind,
        namespace: entry.namespace.clone(),
        name: entry.name.clone(),
    })
}
