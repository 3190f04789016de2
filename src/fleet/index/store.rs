//! An object's summary stored in its cluster's map, counted in the rollups it touches, and the
//! dependency graph told what changed.

use std::collections::btree_map::Entry;

use super::Names;
use crate::fleet::graph::{self, Graph, Objects, kind_range};
use crate::fleet::{FluxKind, FluxSummary, HealthCounts, ObjectKey};

/// An object's new summary, counted and stored. Most changes are a status: what the object
/// needs stays, and the graph is not touched unless where it stands changes (graph::standing).
pub(super) fn applied(
    (objects, graph): (&mut Objects, &mut Graph),
    counts: &mut Counts,
    names: &mut Names,
    summary: FluxSummary,
) {
    counts.add(&summary);
    let key = summary.key.clone();
    let (blocked, upstream) = match objects.entry(key.clone()) {
        Entry::Occupied(mut e) => {
            let mut summary = summary;
            summary.carry(e.get());
            let old = e.insert(Box::new(summary));
            counts.sub(&old);
            let new = e.get();
            let same = old.depends_on == new.depends_on && old.source == new.source;
            let before = graph::standing(&old);
            if same && before == graph::standing(new) {
                return;
            }
            (Some(before), (!same).then(|| names.upstream(new)))
        }
        Entry::Vacant(e) => {
            let upstream = names.upstream(&summary);
            e.insert(Box::new(summary));
            (None, Some(upstream))
        }
    };
    graph.changed(objects, &key, blocked, upstream);
}

/// A kind listed afresh: its objects replaced by the list, counted again, the graph told.
pub(super) fn replaced(
    (objects, graph): (&mut Objects, &mut Graph),
    counts: &mut Counts,
    names: &mut Names,
    kind: FluxKind,
    listed: Vec<FluxSummary>,
) {
    let stale: Vec<ObjectKey> = objects
        .range(kind_range(kind))
        .map(|(k, _)| k.clone())
        .collect();
    // Since when each is not ready, kept (a relist after a watch broke is no new failure).
    let mut before: Vec<Box<FluxSummary>> = Vec::new();
    for key in stale {
        if let Some(old) = objects.remove(&key) {
            counts.sub(&old);
            before.push(old);
        }
    }
    for mut summary in listed.into_iter().filter(|s| s.key.kind == kind) {
        if let Ok(i) = before.binary_search_by(|o| o.key.cmp(&summary.key)) {
            summary.carry(&before[i]);
        }
        counts.add(&summary);
        if let Some(old) = objects.insert(summary.key.clone(), Box::new(summary)) {
            counts.sub(&old);
        }
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
