//! `D`: drift of the object the rollout matrix or the detail view is about — at once from what
//! the index holds, then from its copies read (the summarized clusters' copies, the norm's and
//! the variants' inventories, a Kustomization's events), as `fluxfleet drift KIND NAME` reads
//! them. Elsewhere, drift of everything in the view's scope, from the index.

use std::sync::Arc;

use super::message::Effect;
use super::model::Model;
use super::view::{ListScope, View, clusters_in};
use crate::fleet::drift::Drift;
use crate::fleet::filter::Filter;
use crate::fleet::{FluxKind, ObjectKey};

/// Opens the drift view for the view in front, and reads the copies of its object if it has
/// one.
pub(super) fn ask(model: &mut Model) -> Vec<Effect> {
    let view = &model.screen().view;
    let key = match view {
        View::Matrix { key, .. } | View::Detail { key, .. } => Some(key.clone()),
        _ => None,
    };
    let scope = match view {
        // An object's copies are on other clusters: across the fleet.
        View::Detail { .. } => ListScope::Fleet,
        other => other.scope(),
    };
    let Some(key) = key else {
        model.push(View::Drift { scope, key: None });
        return Vec::new();
    };
    if !matches!(key.kind, FluxKind::Kustomization | FluxKind::HelmRelease) {
        model.say(format!(
            "a {} applies nothing: drift compares what Kustomizations and HelmReleases applied",
            key.kind
        ));
        return Vec::new();
    }
    let filter = Filter {
        kind: Some(key.kind),
        name: Some(key.name.to_string()),
        namespace: Some(key.namespace.to_string()),
        ..Filter::default()
    };
    let clusters = clusters_in(model.index(), scope);
    let plan = crate::session::drift::plan_of(clusters.iter().map(|(_, c)| *c), &filter);
    model.push(View::Drift {
        scope,
        key: Some(key.clone()),
    });
    let Some(plan) = plan else {
        return Vec::new();
    };
    model.reads_mut().drift_asked(scope, key.clone());
    vec![Effect::ReadDrift {
        scope,
        key,
        plan: Arc::new(plan),
    }]
}

/// The copies were read: shown if the user still looks at (or will come back to) that view.
pub(super) fn arrived(model: &mut Model, (scope, key): (ListScope, ObjectKey), drift: Box<Drift>) {
    // An answer to an earlier question is dropped.
    if !model.reads_mut().drift_read((scope, key), drift) {
        return;
    }
    let shown = model
        .reads()
        .drift()
        .is_some_and(|a| a.is_for(&model.screen().view));
    if shown {
        model.rows_changed();
    }
}
