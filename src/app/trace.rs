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

/// What `T` traces here: the first workload `w` read in the detail view, else its object.
fn asked_here(model: &Model) -> Option<Asked> {
    let View::Detail { key, .. } = &model.screen().view else {
        return None;
    };
    let (kind, namespace, name) = match &model.reads.fetched {
        Some(Fetched::Workloads(folded)) if !folded.lines.is_empty() => {
            let w = &folded.lines[0].workload;
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
        model.flash =
            Some("T traces the object of a detail view (or the workload w read there)".into());
        return Vec::new();
    };
    let infos = fleet(model);
    model.push(View::Trace(Box::new(asked.clone())));
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
        .index
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
            model.flash = Some(
                "i shows the tree of a Kustomization or HelmRelease from its detail view".into(),
            );
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
