//! What an object on one cluster depends on, and the root cause of what is not ready: the first
//! not-ready object up its chains (`dependsOn`, its source, a HelmRelease's chart and the chart's
//! source) that is not itself blocked. Pure: reads one cluster's objects.
//!
//! [`causes`] computes every cause of a cluster from scratch; a cluster's [`Graph`] keeps them as
//! its objects change, recomputing only what a change can reach (the object and what stands
//! behind it). Both solve the same way, so they agree whatever the order of changes.

use crate::fleet::SharedText;
use std::collections::{HashMap, HashSet};

use super::{FluxKind, FluxSummary, ObjectKey, ObjectRef};
pub use crate::fleet::sorted::{Sorted, SortedVec};
pub use cause::Cause;
pub use holds::Holds;
use standing::says_dependency_not_ready;
pub use standing::{GraphStanding, blocks, holds_back, standing};

/// One cluster's objects, each under its own key, inline in one vector: 152 bytes an object. A
/// key beside a boxed summary cost 24 + 8 bytes and the box the allocator's 160-byte class, 192
/// bytes an object (200,000 in a fleet of 10,000 clusters watched whole: 7.6 MiB more). Inserting
/// or removing one shifts the summaries after it, which a new or deleted object rarely costs.
pub type ClusterObjects = SortedVec<FluxSummary>;

/// The objects `o` needs ready before it can be: its `dependsOn` (same kind unless named), its
/// source (`sourceRef`, `chartRef`), and for a HelmRelease with `spec.chart` the HelmChart Flux
/// creates for it (`<namespace>-<name>` in the HelmRepository's namespace).
pub fn upstream(o: &FluxSummary) -> Vec<ObjectKey> {
    upstream_with(o, &mut |text| text.into())
}

/// [`upstream`], its names made by `text` (the index shares them instead of copying).
pub fn upstream_with(o: &FluxSummary, text: &mut dyn FnMut(&str) -> SharedText) -> Vec<ObjectKey> {
    let mut out: Vec<ObjectKey> = Vec::with_capacity(o.depends_on.len() + 1);
    for d in &o.depends_on {
        let Some(kind) = dependency_kind(o, d) else {
            continue;
        };
        out.push(ObjectKey {
            kind,
            namespace: text(&d.namespace),
            name: text(&d.name),
        });
    }
    if let Some((kind, namespace, name)) = o.source.as_ref().and_then(|r| source_of(&o.key, r)) {
        out.push(ObjectKey {
            kind,
            namespace: text(namespace),
            name: text(&name),
        });
    }
    out
}

/// The kind a `dependsOn` entry of `o` names: `o`'s own unless it says another.
fn dependency_kind(o: &FluxSummary, d: &ObjectRef) -> Option<FluxKind> {
    match &*d.kind {
        "" => Some(o.key.kind),
        kind => FluxKind::from_kind(kind),
    }
}

/// The object a `sourceRef` or `chartRef` of `of` names. A HelmRelease's `spec.chart` names the
/// chart's source — a HelmRepository, a GitRepository or a Bucket (or gives no kind): what the
/// release runs, and waits on, is the HelmChart helm-controller makes from it,
/// `<namespace>-<name>` beside that source. A `chartRef` names an OCIRepository, a HelmChart or
/// an ExternalArtifact directly.
pub fn source_key(of: &ObjectKey, r: &ObjectRef) -> Option<ObjectKey> {
    let (kind, namespace, name) = source_of(of, r)?;
    Some(ObjectKey::new(kind, namespace, &name))
}

fn source_of<'a>(
    of: &ObjectKey,
    r: &'a ObjectRef,
) -> Option<(FluxKind, &'a str, std::borrow::Cow<'a, str>)> {
    match (of.kind, FluxKind::from_kind(&r.kind)) {
        (
            FluxKind::HelmRelease,
            Some(FluxKind::HelmRepository | FluxKind::GitRepository | FluxKind::Bucket) | None,
        ) => Some((
            FluxKind::HelmChart,
            &r.namespace,
            format!("{}-{}", of.namespace, of.name).into(),
        )),
        (_, Some(kind)) => Some((kind, &r.namespace, (&*r.name).into())),
        (_, None) => None,
    }
}

/// The cause of each not-ready object of a cluster, by key.
pub type Causes = Sorted<Cause>;

/// The cause of every not-ready object of one cluster, computed from scratch.
pub fn causes(objects: &ClusterObjects) -> Causes {
    let up: HashMap<ObjectKey, Vec<ObjectKey>> = objects
        .iter()
        .map(|(k, o)| (k.clone(), upstream(o)))
        .collect();
    let nodes: Vec<&ObjectKey> = objects
        .iter()
        .filter(|(_, o)| blocks(o))
        .map(|(k, _)| k)
        .collect();
    let mut found = Causes::default();
    found.extend(solve(
        &nodes,
        &|k| up.get(k).map_or(&[][..], Vec::as_slice),
        &holding(objects),
        &awaiting(objects),
        &found,
    ));
    found
}

/// Whether the object a key names waits only for its retry, should nothing hold it back: it says
/// `DependencyNotReady`, and every `dependsOn` it names is there (a missing dependency is its
/// own cause: the controller cannot find it).
fn awaiting(objects: &ClusterObjects) -> impl Fn(&ObjectKey) -> bool + '_ {
    |k| {
        objects.get(k).is_some_and(|o| {
            says_dependency_not_ready(o)
                && o.depends_on.iter().all(|d| {
                    dependency_kind(o, d).is_some_and(|kind| {
                        objects.contains_key(&ObjectKey::new(kind, &d.namespace, &d.name))
                    })
                })
        })
    }
}

/// Whether the object a key names holds back one of a kind that needs it.
fn holding(objects: &ClusterObjects) -> impl Fn(FluxKind, &ObjectKey) -> bool + '_ {
    |by, k| objects.get(k).is_some_and(|o| holds_back(o, by))
}

/// Solves the causes of `nodes` (objects that block, none with a cause yet), given the causes of
/// every object that blocks outside them (`known`); returns theirs. An edge counts where what is
/// needed holds back what needs it (`holding`). Strongly connected parts of what holds back are
/// found upstream first (Tarjan's, without recursion: a cluster's chains are
/// untrusted and may be long), so each part is solved after everything it depends on.
fn solve<'a>(
    nodes: &[&ObjectKey],
    up: &dyn Fn(&ObjectKey) -> &'a [ObjectKey],
    holding: &dyn Fn(FluxKind, &ObjectKey) -> bool,
    awaiting: &dyn Fn(&ObjectKey) -> bool,
    known: &Causes,
) -> HashMap<ObjectKey, Cause> {
    let mut causes: HashMap<ObjectKey, Cause> = HashMap::with_capacity(nodes.len());
    let ids: HashMap<&ObjectKey, usize> = nodes.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let edges: Vec<Vec<usize>> = nodes
        .iter()
        .map(|k| {
            up(k)
                .iter()
                .filter(|u| holding(k.kind, u))
                .filter_map(|u| ids.get(u).copied())
                .collect()
        })
        .collect();
    const NEW: usize = usize::MAX;
    let n = nodes.len();
    let (mut order, mut low, mut held) = (vec![NEW; n], vec![0; n], vec![false; n]);
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    for start in 0..n {
        if order[start] != NEW {
            continue;
        }
        let mut calls: Vec<(usize, usize)> = vec![(start, 0)];
        order[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        held[start] = true;
        while let Some((v, edge)) = calls.last_mut() {
            let v = *v;
            if let Some(&w) = edges[v].get(*edge) {
                *edge += 1;
                if order[w] == NEW {
                    order[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    held[w] = true;
                    calls.push((w, 0));
                } else if held[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            calls.pop();
            if let Some((parent, _)) = calls.last() {
                low[*parent] = low[*parent].min(low[v]);
            }
            if low[v] != order[v] {
                continue;
            }
            let mut part = Vec::new();
            while let Some(w) = stack.pop() {
                held[w] = false;
                part.push(w);
                if w == v {
                    break;
                }
            }
            if part.len() > 1 || edges[v].contains(&v) {
                let mut cycle: Vec<ObjectKey> = part.iter().map(|w| nodes[*w].clone()).collect();
                cycle.sort();
                let cycle: Box<[ObjectKey]> = cycle.into();
                for w in part {
                    causes.insert(nodes[w].clone(), Cause::Cycle(cycle.clone()));
                }
            } else {
                let key = nodes[v];
                let cause = cause_behind(key, up(key), (holding, awaiting), &|k| {
                    causes.get(k).or_else(|| known.get(k))
                });
                causes.insert(key.clone(), cause);
            }
        }
    }
    causes
}

/// Whether what a key names holds back an object of a kind that needs it.
type Holding<'a> = dyn Fn(FluxKind, &ObjectKey) -> bool + 'a;
/// Whether the object a key names waits only for its retry, should nothing hold it back.
type Awaiting<'a> = dyn Fn(&ObjectKey) -> bool + 'a;

/// The cause of the object `key` on no cycle, from the causes of what it needs that holds it
/// back: the roots up its chains; failing that, the first cycle it stands behind; failing that,
/// itself — or nothing but its retry, where it is `awaiting` one.
fn cause_behind<'a>(
    key: &ObjectKey,
    up: &[ObjectKey],
    (holding, awaiting): (&Holding, &Awaiting),
    causes: &dyn Fn(&ObjectKey) -> Option<&'a Cause>,
) -> Cause {
    let by = key.kind;
    let mut roots: Vec<ObjectKey> = Vec::new();
    let mut cycle: Option<&[ObjectKey]> = None;
    for u in up.iter().filter(|u| holding(by, u)) {
        match causes(u) {
            Some(Cause::Root | Cause::AwaitsRetry) | None => roots.push(u.clone()),
            Some(Cause::Blocked(r)) => roots.extend(r.iter().cloned()),
            Some(Cause::Cycle(c)) => cycle = Some(cycle.map_or(c, |seen| seen.min(c))),
        }
    }
    roots.sort();
    roots.dedup();
    match (roots.is_empty(), cycle) {
        (false, _) => Cause::Blocked(roots.into()),
        (true, Some(c)) => Cause::Cycle(c.into()),
        (true, None) if awaiting(key) => Cause::AwaitsRetry,
        (true, None) => Cause::Root,
    }
}

/// One cluster's dependencies and the cause of each of its not-ready objects, kept as objects
/// change. The index holds one per cluster.
#[derive(Debug, Default)]
pub struct Graph {
    /// What each object needs (only objects that need something).
    up: Sorted<Box<[ObjectKey]>>,
    /// Who needs each object, whether it exists or not (a dependency may arrive later).
    down: Sorted<Vec<ObjectKey>>,
    causes: Causes,
}

impl Graph {
    /// Why a not-ready object is not ready; None for one that is ready (or unknown).
    pub fn cause(&self, key: &ObjectKey) -> Option<&Cause> {
        self.causes.get(key)
    }

    /// The cause of every not-ready object.
    pub fn causes(&self) -> &Causes {
        &self.causes
    }

    /// What `key` needs ready: its dependencies, source and chart.
    pub fn upstream(&self, key: &ObjectKey) -> &[ObjectKey] {
        self.up.get(key).map_or(&[], |u| u)
    }

    /// What needs `key` ready.
    pub fn downstream(&self, key: &ObjectKey) -> &[ObjectKey] {
        self.down.get(key).map_or(&[], |d| d)
    }

    /// What `root` holds back, in order: the objects it is a root cause of, or for a cycle's
    /// first object the rest of the cycle and what stands behind it alone.
    pub fn held_back(&self, root: &ObjectKey) -> Vec<&ObjectKey> {
        let mut out: Vec<&ObjectKey> = self
            .causes
            .iter()
            .filter(|(k, c)| c.held_by(k).contains(root))
            .map(|(k, _)| k)
            .collect();
        out.sort();
        out
    }

    /// `key` was added or modified in `objects` (which now hold it); it stood so before (`before`
    /// None: it is new), and needs `upstream` (None: what it needed before).
    pub fn changed(
        &mut self,
        objects: &ClusterObjects,
        key: &ObjectKey,
        before: Option<GraphStanding>,
        upstream: Option<Vec<ObjectKey>>,
    ) {
        let upstream = upstream.filter(|u| self.upstream(key) != u.as_slice());
        if upstream.is_none() && before.is_some() && before == objects.get(key).map(standing) {
            return;
        }
        if let Some(upstream) = upstream {
            self.set_upstream(key, upstream);
        }
        self.recompute(objects, key);
    }

    /// `key` is gone from `objects`.
    pub fn removed(&mut self, objects: &ClusterObjects, key: &ObjectKey) {
        self.set_upstream(key, Vec::new());
        self.recompute(objects, key);
    }

    /// After a relist of `kind`: the needs of that kind's objects anew (`upstream` gives what
    /// each needs), every cause solved again. Other kinds' needs depend only on their own
    /// objects, so they stand: a cluster coming up relists each of its kinds in turn, and
    /// redoing every kind's each time cost as much as the rest of the index.
    pub fn relisted(
        &mut self,
        objects: &ClusterObjects,
        kind: FluxKind,
        upstream: &mut dyn FnMut(&FluxSummary) -> Vec<ObjectKey>,
    ) {
        let gone: Vec<ObjectKey> = self
            .up
            .keys()
            .filter(|k| k.kind == kind && !objects.contains_key(k))
            .cloned()
            .collect();
        for key in &gone {
            self.set_upstream(key, Vec::new());
        }
        for (key, o) in objects.of_kind(kind) {
            self.set_upstream(key, upstream(o));
        }
        self.shrink();
        self.solve_all(objects);
    }

    /// The graph of `objects`, from scratch (`upstream` gives what each needs).
    pub fn of(
        objects: &ClusterObjects,
        upstream: &mut dyn FnMut(&FluxSummary) -> Vec<ObjectKey>,
    ) -> Graph {
        let mut graph = Graph::default();
        for (key, o) in objects {
            graph.set_upstream(key, upstream(o));
        }
        graph.shrink();
        graph.solve_all(objects);
        graph
    }

    /// Every cause solved again.
    fn solve_all(&mut self, objects: &ClusterObjects) {
        self.causes = Causes::default();
        let nodes: Vec<&ObjectKey> = objects
            .iter()
            .filter(|(_, o)| blocks(o))
            .map(|(k, _)| k)
            .collect();
        let up = &self.up;
        let solved = solve(
            &nodes,
            &|k| up.get(k).map_or(&[][..], |u| u),
            &holding(objects),
            &awaiting(objects),
            &self.causes,
        );
        self.causes.extend(solved);
    }

    /// Gives back the room that adding edges one at a time left over.
    fn shrink(&mut self) {
        self.up.shrink();
        self.down.shrink();
        self.down.values_mut().for_each(Vec::shrink_to_fit);
    }

    /// Only the edges that change are touched, and an object's entry is replaced where it stands:
    /// a relist sets every object of a kind again, mostly to what it was.
    fn set_upstream(&mut self, key: &ObjectKey, upstream: Vec<ObjectKey>) {
        let old = self.up.get_mut(key).map(std::mem::take).unwrap_or_default();
        for u in old.iter().filter(|u| !upstream.contains(u)) {
            if let Some(down) = self.down.get_mut(u) {
                down.retain(|d| d != key);
                if down.is_empty() {
                    self.down.remove(u);
                }
            }
        }
        for u in &upstream {
            // Most objects are needed by one other: room for one (an empty Vec's first push
            // makes room for four).
            let down = self.down.get_or_insert_with(u, || Vec::with_capacity(1));
            if !down.contains(key) {
                down.push(key.clone());
            }
        }
        if upstream.is_empty() {
            self.up.remove(key);
        } else if let Some(slot) = self.up.get_mut(key) {
            *slot = upstream.into();
        } else {
            self.up.insert(key.clone(), upstream.into());
        }
    }

    /// Solves again what a change of `key` can reach: itself, and what stands behind it through
    /// objects that block (a ready object stops the change: what is behind it sees it ready; one
    /// that blocks but holds nothing back is walked through all the same, which costs only time).
    fn recompute(&mut self, objects: &ClusterObjects, key: &ObjectKey) {
        let blocking = |k: &ObjectKey| objects.get(k).is_some_and(blocks);
        // Most changes are to an object nothing needs (and so on no cycle): its own cause is
        // all there is to solve, from what it needs, without the search's sets and maps.
        if self.down.get(key).is_none_or(Vec::is_empty) {
            self.causes.remove(key);
            if blocking(key) {
                let causes = &self.causes;
                let cause = cause_behind(
                    key,
                    self.upstream(key),
                    (&holding(objects), &awaiting(objects)),
                    &|k| causes.get(k),
                );
                self.causes.insert(key.clone(), cause);
            }
            return;
        }
        let mut reached: Vec<&ObjectKey> = vec![key];
        let mut seen: HashSet<&ObjectKey> = HashSet::from([key]);
        let mut i = 0;
        while let Some(k) = reached.get(i).copied() {
            i += 1;
            if i > 1 && !blocking(k) {
                continue;
            }
            for d in self.down.get(k).into_iter().flatten() {
                if seen.insert(d) {
                    reached.push(d);
                }
            }
        }
        self.causes.retain(|k| !seen.contains(k));
        let nodes: Vec<&ObjectKey> = reached.into_iter().filter(|k| blocking(k)).collect();
        let up = &self.up;
        let solved = solve(
            &nodes,
            &|k| up.get(k).map_or(&[][..], |u| u),
            &holding(objects),
            &awaiting(objects),
            &self.causes,
        );
        self.causes.extend(solved);
    }
}

mod cause;
mod holds;
mod standing;
#[cfg(test)]
mod tests;
