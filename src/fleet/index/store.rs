//! An object's summary stored in its cluster's map, counted in the rollups it touches, and the
//! dependency graph told what changed.

use super::Names;
use crate::fleet::graph::{self, ClusterObjects, Graph};
use crate::fleet::{FluxKind, FluxSummary, HealthCounts};

/// An object's new summary, counted and stored. Most changes are a status: what the object
/// needs stays, and the graph is not touched unless where it stands changes (graph::standing).
pub(super) fn applied(
    (objects, graph): (&mut ClusterObjects, &mut Graph),
    counts: &mut Counts,
    names: &mut Names,
    mut summary: FluxSummary,
) {
    counts.add(&summary);
    let key = summary.key.clone();
    let Some(held) = objects.get(&key) else {
        let upstream = names.upstream(&summary);
        objects.insert(summary);
        graph.changed(objects, &key, None, Some(upstream));
        return;
    };
    summary.carry(held);
    let same = held.depends_on == summary.depends_on && held.source == summary.source;
    let before = graph::standing(held);
    let unmoved = same && before == graph::standing(&summary);
    let upstream = (!same).then(|| names.upstream(&summary));
    if let Some(old) = objects.insert(summary) {
        counts.sub(&old);
    }
    if !unmoved {
        graph.changed(objects, &key, Some(before), upstream);
    }
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
    for old in &before {
        counts.sub(old);
    }
    let listed: Vec<FluxSummary> = listed
        .into_iter()
        .filter(|s| s.key.kind == kind)
        .map(|mut summary| {
            if let Ok(i) = before.binary_search_by(|old| old.key.cmp(&summary.key)) {
                summary.carry(&before[i]);
            }
            summary
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
