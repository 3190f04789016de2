//! `w`: what broke inside the Kustomization or HelmRelease in view — on the detail view's
//! cluster, in its lower pane; on a triage group, on every cluster of the group, in a view of
//! its own — read from the clusters and folded.

use std::sync::Arc;

use super::flux_action::objects_of;
use super::message::Effect;
use super::model::Model;
use super::view::{Fetched, RowId, View};
use crate::fleet::workload::fold::Folded;
use crate::fleet::{ClusterId, FluxKind, ObjectKey};

/// What `w` asks for here: the detail view's object, or the selected group's.
pub(super) fn ask(model: &mut Model) -> Vec<Effect> {
    let (key, clusters, own_view) = match (&model.screen().view, &model.screen().selected) {
        (View::Detail { cluster, key }, _) => (key.clone(), vec![*cluster], false),
        (View::Triage { .. }, Some(id @ RowId::Group(_))) => {
            let members = objects_of(model, id);
            let Some(key) = members.first().map(|(_, k)| k.clone()) else {
                model.say("this group is not about a Flux object");
                return Vec::new();
            };
            let mut clusters: Vec<ClusterId> = members
                .into_iter()
                .filter(|(_, k)| *k == key)
                .map(|(c, _)| c)
                .collect();
            clusters.dedup();
            (key, clusters, true)
        }
        _ => return Vec::new(),
    };
    if !matches!(key.kind, FluxKind::Kustomization | FluxKind::HelmRelease) {
        model.say(format!(
            "a {} deploys no workloads: w reads a Kustomization's or a HelmRelease's",
            key.kind
        ));
        return Vec::new();
    }
    let infos = clusters
        .iter()
        .filter_map(|c| model.index().cluster(*c).map(|e| e.info.clone()))
        .collect();
    let clusters: Arc<[ClusterId]> = clusters.into();
    if own_view {
        model.push(View::Workloads {
            key: key.clone(),
            clusters: clusters.clone(),
        });
    }
    model.set_fetched(Some(Fetched::Loading("workloads")));
    vec![Effect::FetchWorkloads {
        key,
        clusters,
        infos,
    }]
}

/// The folded evidence arrived: shown if the user still looks at what it is about.
pub(super) fn arrived(
    model: &mut Model,
    key: ObjectKey,
    clusters: Arc<[ClusterId]>,
    folded: Box<Folded>,
) {
    let wanted = match &model.screen().view {
        View::Detail { cluster, key: k } => *k == key && *clusters == [*cluster],
        View::Workloads {
            key: k,
            clusters: c,
        } => *k == key && *c == clusters,
        _ => false,
    };
    if wanted {
        model.set_fetched(Some(Fetched::Workloads(folded)));
    }
}
