//! An object's summary stored in its cluster's map, counted in the rollups it touches, and the
//! dependency graph told what changed.

use super::Names;
use crate::fleet::graph::{self, ClusterObjects, Graph};
use crate::fleet::{FluxKind, FluxSummary, HealthCounts, ObjectKey};

/// An object's new summary, counted and stored. Most changes are a status: what the object
/// needs stays, and the graph is not touched unless where it stands changes (graph::standing).
pub(super) fn applied(
    (objects, graph): (&mut ClusterObjects, &mut Graph),
    counts: &mut Counts,
    names: &mut Names,
    summary: FluxSummary,
) {
    counts.add(&summary);
    let key = summary.key.clone();
    let (blocked, upstream) = match objects.get_mut(&key) {
        Some(held) => {
            let mut summary = summary;
            summary.carry(held);
            let old = std::mem::replace(held, Box::new(summary));
            counts.sub(&old);
            let new = &**held;
            let same = old.depends_on == new.depends_on && old.source == new.source;
            let before = graph::standing(&old);
            if same && before == graph::standing(new) {
                return;
            }
            (Some(before), (!same).then(|| names.upstream(new)))
        }
        None => {
            let upstream = names.upstream(&summary);
            objects.insert(key.clone(), Box::new(summary));
            (None, Some(upstream))
        }
    };
    graph.changed(objects, &key, blocked, upstream);
}

/// A kind listed afresh: its objects replaced by the list, counted again, the graph told.
pub(super) fn replaced(
    (objects, graph): (&mut ClusterObjects, &mut Graph),
    counts: &mut Counts,
    names: &mut Names,
    kind: FluxKind,
    listed: Vec<FluxSummary>,
) {
    // Since when each is not ready, kept (a relist after a watch broke is no new failure).
    let before = objects.take_kind(kind);
    for (_, old) in &before {
        counts.sub(old);
    }
    let listed: Vec<(ObjectKey, Box<FluxSummary>)> = listed
        .into_iter()
        .filter(|s| s.key.kind == kind)
        .map(|mut summary| {
            if let Ok(i) = before.binary_search_by(|(k, _)| k.cmp(&summary.key)) {
                summary.carry(&before[i].1);
            }
            (summary.key.clone(), Box::new(summary))
        })
        .collect();
    // Of two listed under one key, the last counts, as when they were put one at a time.
    objects.put_kind(listed);
    for (_, summary) in objects.of_kind(kind) {
        counts.add(summary);
    }
    graph.relisted(objects, kind, &mut |o| names.upstream(o));
}

/// The three rollups one object change touches.
pub(super) struct Counts<'a> {
    /// The cluster counts by its objects: off while it counts by its report.
    pub on: bool,
    pub cluster: &'a mut HealthCounts,
    pub workspace: &'a mut HealthCounts,
    pub fleet: &'a mut HealthCounts,
}

impl Counts<'_> {
    pub fn add(&mut self, s: &FluxSummary) {
        if self.on {
            self.cluster.add(s.health);
            self.workspace.add(s.health);
            self.fleet.add(s.health);
        }
    }

    pub fn sub(&mut self, s: &FluxSummary) {
        if self.on {
            self.cluster.sub(s.health);
            self.workspace.sub(s.health);
            self.fleet.sub(s.health);
        }
    }

    /// The cluster counts `new` where it counted `old`, whatever it counts by.
    pub fn replace(&mut self, old: &HealthCounts, new: &HealthCounts) {
        for rollup in [&mut *self.cluster, &mut *self.workspace, &mut *self.fleet] {
            rollup.sub_all(old);
            rollup.add_all(new);
        }
    }
}
