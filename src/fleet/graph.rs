//! What an object on one cluster depends on, and the root cause of what is not ready: the first
//! not-ready object up its chains (`dependsOn`, its source, a HelmRelease's chart and the chart's
//! source) that is not itself blocked. Pure: reads one cluster's objects.

use std::collections::{BTreeMap, HashMap};

use super::{FluxKind, FluxSummary, ObjectKey, ObjectRef, Ready};

/// The objects `o` needs ready before it can be: its `dependsOn` (same kind unless named), its
/// source (`sourceRef`, `chartRef`), and for a HelmRelease with `spec.chart` the HelmChart Flux
/// creates for it (`<namespace>-<name>` in the HelmRepository's namespace).
pub fn upstream(o: &FluxSummary) -> Vec<ObjectKey> {
    let mut out: Vec<ObjectKey> = o
        .depends_on
        .iter()
        .filter_map(|d| {
            let kind = match &*d.kind {
                "" => o.key.kind,
                k => FluxKind::from_kind(k)?,
            };
            Some(ObjectKey::new(kind, &d.namespace, &d.name))
        })
        .collect();
    if let Some(source) = o.source.as_ref().and_then(|r| source_key(&o.key, r)) {
        out.push(source);
    }
    out
}

/// The object a `sourceRef` or `chartRef` of `of` names. A HelmRelease's `spec.chart` names a
/// HelmRepository (or gives no kind): what it runs is the HelmChart Flux makes from it.
pub fn source_key(of: &ObjectKey, r: &ObjectRef) -> Option<ObjectKey> {
    match (of.kind, FluxKind::from_kind(&r.kind)) {
        (FluxKind::HelmRelease, Some(FluxKind::HelmRepository) | None) => Some(ObjectKey::new(
            FluxKind::HelmChart,
            &r.namespace,
            &format!("{}-{}", of.namespace, of.name),
        )),
        (_, Some(kind)) => Some(ObjectKey::new(kind, &r.namespace, &r.name)),
        (_, None) => None,
    }
}

/// Whether an object holds back what depends on it: its Ready condition is not True, as Flux's
/// `dependsOn` reads it (a suspended object that is Ready does not block). One without a status
/// to judge (Alert, Provider) never blocks.
pub fn blocks(o: &FluxSummary) -> bool {
    o.ready != Some(Ready::True) && o.health != super::Health::NotApplicable
}

/// Why a not-ready object is not ready.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Nothing it depends on holds it back: it is a root cause.
    Root,
    /// Held back by these roots, up its chains.
    Blocked(Vec<ObjectKey>),
    /// On a cycle of dependencies, or held back only by one: the objects of the cycle, which is
    /// reported and never followed.
    Cycle(Vec<ObjectKey>),
}

/// The cause of every not-ready object of one cluster.
pub fn causes(objects: &BTreeMap<ObjectKey, FluxSummary>) -> HashMap<ObjectKey, Cause> {
    let mut walk = Walk {
        objects,
        state: HashMap::new(),
        path: Vec::new(),
    };
    for (key, o) in objects {
        if blocks(o) {
            // Its cause, and those of everything up its chains, are kept in the walk's state.
            let _ = walk.visit(key);
        }
    }
    walk.state
        .into_iter()
        .filter_map(|(k, s)| match s {
            Visit::Done(cause) => Some((k, cause)),
            Visit::Open => None,
        })
        .collect()
}

enum Visit {
    /// On the path being walked: meeting it again closes a cycle.
    Open,
    Done(Cause),
}

struct Walk<'a> {
    objects: &'a BTreeMap<ObjectKey, FluxSummary>,
    state: HashMap<ObjectKey, Visit>,
    path: Vec<ObjectKey>,
}

impl Walk<'_> {
    /// The roots that hold `key` back (itself when nothing does), or the cycle it lies on or
    /// behind.
    fn visit(&mut self, key: &ObjectKey) -> Result<Vec<ObjectKey>, Vec<ObjectKey>> {
        match self.state.get(key) {
            Some(Visit::Done(Cause::Root)) => return Ok(vec![key.clone()]),
            Some(Visit::Done(Cause::Blocked(roots))) => return Ok(roots.clone()),
            Some(Visit::Done(Cause::Cycle(cycle))) => return Err(cycle.clone()),
            Some(Visit::Open) => {
                // Every object from the first visit of `key` on the path is on the cycle.
                let start = self.path.iter().position(|k| k == key).unwrap_or(0);
                let mut cycle = self.path[start..].to_vec();
                cycle.sort();
                for k in &cycle {
                    self.state
                        .insert(k.clone(), Visit::Done(Cause::Cycle(cycle.clone())));
                }
                return Err(cycle);
            }
            None => {}
        }
        let Some(o) = self.objects.get(key) else {
            return Ok(Vec::new());
        };
        self.state.insert(key.clone(), Visit::Open);
        self.path.push(key.clone());
        let mut roots: Vec<ObjectKey> = Vec::new();
        let mut cycle: Option<Vec<ObjectKey>> = None;
        for up in upstream(o) {
            if !self.objects.get(&up).is_some_and(blocks) {
                continue;
            }
            match self.visit(&up) {
                Ok(r) => roots.extend(r),
                Err(c) => cycle = cycle.or(Some(c)),
            }
        }
        self.path.pop();
        // Closing a cycle through this object marked it already.
        if let Some(Visit::Done(Cause::Cycle(c))) = self.state.get(key) {
            return Err(c.clone());
        }
        roots.sort();
        roots.dedup();
        let (cause, result) = match (roots.is_empty(), cycle) {
            (true, None) => (Cause::Root, Ok(vec![key.clone()])),
            // Held back only by a cycle: the cycle is its cause.
            (true, Some(c)) => (Cause::Cycle(c.clone()), Err(c)),
            (false, _) => (Cause::Blocked(roots.clone()), Ok(roots)),
        };
        self.state.insert(key.clone(), Visit::Done(cause));
        result
    }
}

#[cfg(test)]
mod tests;
