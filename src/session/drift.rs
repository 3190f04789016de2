//! Drift asked of one object (a kind and a name): besides what the index holds, its copies are
//! read — on the clusters the engine only summarizes (FluxReport tier), the object itself, as
//! `workloads` reads them; for each variant and the norm one copy, to say which objects their
//! inventories disagree on; for a Kustomization every copy's events, to find a controller that
//! keeps correcting live objects. A bounded number of clusters at a time, each within a timeout.

use crate::fleet::SharedText;
use std::collections::BTreeSet;
use std::sync::Arc;

use futures::StreamExt;
use jiff::Timestamp;

use super::Reader;
use super::evidence::Gather;
use crate::fleet::drift::asked::{Between, ExtraReads, NotRead};
use crate::fleet::drift::{Drift, corrected, drift_of_copies};
use crate::fleet::filter::Filter;
use crate::fleet::workload::ReadError;
use crate::fleet::{ClusterEntry, ClusterInfo, Counted, FluxKind, FluxSummary, Index, ObjectKey};

/// The most variants of one object whose inventories are read.
const VARIANTS_READ: usize = 8;

/// Whether `filter` asks of one object: its kind and its name.
pub fn is_asked(filter: &Filter) -> Option<(FluxKind, &str)> {
    Some((filter.kind?, filter.name.as_deref()?))
}

/// What drift asked of one object reads, taken from the index (owned: the index is not held
/// while its copies are read).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    filter: Filter,
    kind: FluxKind,
    /// The object in each namespace it may be in: where it is seen, else Flux's own.
    keys: Vec<ObjectKey>,
    /// Every cluster of the scope.
    clusters: Vec<ClusterInfo>,
    /// Those the engine only summarizes: their copies are read.
    summarized: Vec<ClusterInfo>,
    /// The copies the index holds on the others.
    held: Vec<(usize, FluxSummary)>,
}

/// The reads drift asked of one object needs; None unless `filter` names a kind and a name.
pub fn plan(index: &Index, filter: &Filter) -> Option<Plan> {
    plan_of(index.entries().map(|(_, c)| c), filter)
}

/// [`plan`] over `clusters` (a view's scope) rather than the whole index.
pub fn plan_of<'a>(
    clusters: impl Iterator<Item = &'a ClusterEntry>,
    filter: &Filter,
) -> Option<Plan> {
    let (kind, name) = is_asked(filter)?;
    let mut plan = Plan {
        filter: filter.clone(),
        kind,
        keys: Vec::new(),
        clusters: Vec::new(),
        summarized: Vec::new(),
        held: Vec::new(),
    };
    let mut namespaces: BTreeSet<String> = filter.namespace.iter().cloned().collect();
    for c in clusters.filter(|c| !c.retired && filter.cluster(c)) {
        let at = plan.clusters.len();
        plan.clusters.push((*c.info).clone());
        let copies = c.objects.values().filter(|o| filter.key(&o.key));
        if filter.namespace.is_none() {
            namespaces.extend(copies.clone().map(|o| o.key.namespace.to_string()));
        }
        // A summarized cluster holds its failing objects only: its copy is read.
        match c.counted {
            Counted::Report => plan.summarized.push((*c.info).clone()),
            Counted::Objects => plan.held.extend(copies.map(|o| (at, o.clone()))),
        }
    }
    if namespaces.is_empty() {
        namespaces.insert("flux-system".into());
    }
    plan.keys = namespaces
        .iter()
        .map(|ns| ObjectKey::new(kind, ns, name))
        .collect();
    Some(plan)
}

/// Drift of the object `plan` is for, its copies read where the index cannot tell: by `now`.
/// A summarized cluster is opened to be read, no more at once than stay open (`warm`, the
/// engine's `warm_clusters`): one more would close one not yet read.
pub async fn asked(
    plan: &Plan,
    reader: &Reader,
    now: Timestamp,
    (how, warm): (Gather, usize),
) -> Drift {
    let mut reads = ExtraReads::default();
    let summarized: Vec<&ClusterInfo> = plan.summarized.iter().collect();
    let opening = Gather {
        concurrency: how.concurrency.min(warm),
        ..how
    };
    let read = read_copies(reader, &summarized, &plan.keys, opening).await;
    reads.summarized = summarized.len();
    let mut extra: Vec<(&ClusterInfo, FluxSummary)> = Vec::new();
    for (cluster, copies) in read {
        match copies {
            Ok(copies) => extra.extend(copies.into_iter().map(|s| (cluster, s))),
            Err(why) => reads.not_read.push(NotRead {
                cluster: cluster.name.clone(),
                why,
            }),
        }
    }
    let held = plan.held.iter().map(|(at, o)| (&plan.clusters[*at], o));
    let copies: Vec<(&ClusterInfo, &FluxSummary)> =
        held.chain(extra.iter().map(|(c, s)| (*c, s))).collect();
    let filter = &plan.filter;
    let mut found = drift_of_copies(
        copies.iter().map(|(c, o)| (*c, *o, false)),
        |o| filter.key(&o.key),
        now,
    );
    if plan.kind == FluxKind::Kustomization {
        let applied: Vec<(&ClusterInfo, &FluxSummary)> = copies
            .iter()
            .copied()
            .filter(|(_, o)| !o.suspended)
            .filter(|(_, o)| o.rollout.as_deref().is_some_and(|r| r.applied.is_some()))
            .collect();
        reads.events = applied.len();
        corrections(reader, &applied, how, &mut found, &mut reads).await;
    }
    let clusters: Vec<&ClusterInfo> = plan.clusters.iter().collect();
    reads.inventories = inventories(reader, &clusters, how, &mut found, &mut reads).await;
    found.reads = Some(reads);
    found
}

/// The object of each of `keys` on every one of `clusters`: those there (a namespace where it
/// is not is no copy), or why the cluster could not be read.
async fn read_copies<'a>(
    reader: &Reader,
    clusters: &[&'a ClusterInfo],
    keys: &[ObjectKey],
    how: Gather,
) -> Vec<(&'a ClusterInfo, Result<Vec<FluxSummary>, ReadError>)> {
    // Owned per cluster: a future borrowing across the stream is not Send for every lifetime.
    let keys: Arc<[ObjectKey]> = keys.into();
    let owned: Vec<(usize, ClusterInfo)> =
        clusters.iter().map(|c| (*c).clone()).enumerate().collect();
    let read = at_once(how, owned, |(i, cluster)| {
        let (reader, keys) = (reader.clone(), keys.clone());
        async move {
            let mut copies = Vec::new();
            for key in keys.iter() {
                match within(how, reader.object(&cluster, key)).await {
                    Ok(value) => copies.extend(FluxSummary::of(key.kind, &value).ok()),
                    Err(ReadError::NotFound) => {}
                    Err(why) => return (i, Err(why)),
                }
            }
            (i, Ok(copies))
        }
    })
    .await;
    read.into_iter().map(|(i, r)| (clusters[i], r)).collect()
}

/// `read` of each of `items`, no more than `how.concurrency` at once, in the order they end.
/// The items are owned: a future borrowing across the stream is not Send for every lifetime.
async fn at_once<T, F, Fut>(how: Gather, items: Vec<T>, read: F) -> Vec<Fut::Output>
where
    F: FnMut(T) -> Fut,
    Fut: std::future::Future,
{
    futures::stream::iter(items)
        .map(read)
        .buffer_unordered(how.concurrency.max(1))
        .collect()
        .await
}

/// `read`, or [`ReadError::TimedOut`] once `how.timeout` has passed.
async fn within<T>(
    how: Gather,
    read: impl std::future::Future<Output = Result<T, ReadError>>,
) -> Result<T, ReadError> {
    tokio::time::timeout(how.timeout, read)
        .await
        .unwrap_or(Err(ReadError::TimedOut(how.timeout)))
}

/// Each copy's events: a controller that keeps correcting its objects is live drift.
async fn corrections(
    reader: &Reader,
    copies: &[(&ClusterInfo, &FluxSummary)],
    how: Gather,
    found: &mut Drift,
    reads: &mut ExtraReads,
) {
    let owned: Vec<(usize, ClusterInfo, ObjectKey)> = copies
        .iter()
        .enumerate()
        .map(|(i, (c, o))| (i, (*c).clone(), o.key.clone()))
        .collect();
    let read = at_once(how, owned, |(i, cluster, key)| {
        let (reader, keys) = (reader.clone(), [key]);
        async move { (i, within(how, reader.events(&cluster, &keys)).await) }
    })
    .await;
    for (i, events) in read {
        let (cluster, o) = copies[i];
        let events = match events {
            Ok(events) => events,
            Err(why) => {
                reads.not_read.push(NotRead {
                    cluster: cluster.name.clone(),
                    why,
                });
                continue;
            }
        };
        found.live.extend(corrected(o, cluster, &events));
    }
    found.sort_live();
}

/// For each object on a revision whose copies differ, the inventory of the norm's copy and of
/// one copy of each variant (the first [`VARIANTS_READ`]): which objects they disagree on.
/// How many copies were read.
async fn inventories(
    reader: &Reader,
    clusters: &[&ClusterInfo],
    how: Gather,
    found: &mut Drift,
    reads: &mut ExtraReads,
) -> usize {
    let by_name = |name: &str| clusters.iter().copied().find(|c| c.name == name);
    // What to read: (differ, variant or None for the norm, cluster).
    let mut wanted: Vec<(usize, Option<usize>, &ClusterInfo)> = Vec::new();
    for (d, differ) in found.differ.iter().enumerate() {
        if let Some(c) = by_name(&differ.norm.cluster) {
            wanted.push((d, None, c));
        }
        for (v, variant) in differ.variants.iter().enumerate().take(VARIANTS_READ) {
            if let Some(c) = variant.clusters.first().and_then(|n| by_name(n)) {
                wanted.push((d, Some(v), c));
            }
        }
    }
    let owned: Vec<(usize, ClusterInfo, ObjectKey)> = wanted
        .iter()
        .enumerate()
        .map(|(i, (d, _, cluster))| {
            let d = &found.differ[*d];
            (
                i,
                (*cluster).clone(),
                ObjectKey::new(d.kind, &d.namespace, &d.name),
            )
        })
        .collect();
    let read = at_once(how, owned, |(i, cluster, key)| {
        let reader = reader.clone();
        async move { (i, within(how, reader.object(&cluster, &key)).await) }
    })
    .await;
    let count = read.len();
    let read = read.into_iter().map(|(i, object)| {
        let (d, v, cluster) = wanted[i];
        (d, v, cluster, object)
    });
    let mut norms: Vec<Option<(BTreeSet<String>, SharedText)>> = vec![None; found.differ.len()];
    let mut variants = Vec::new();
    for (d, v, cluster, object) in read {
        let object = match object {
            Ok(object) => object,
            Err(why) => {
                reads.not_read.push(NotRead {
                    cluster: cluster.name.clone(),
                    why,
                });
                continue;
            }
        };
        let Some(inventory) = crate::fleet::drift::asked::inventory(&object) else {
            continue;
        };
        let on: SharedText = cluster.name.as_str().into();
        match v {
            None => norms[d] = Some((inventory, on)),
            Some(v) => variants.push((d, v, inventory, on)),
        }
    }
    for (d, v, inventory, on) in variants {
        if let Some((norm, norm_on)) = &norms[d] {
            found.differ[d].variants[v].objects =
                Some(Between::of((&inventory, on), (norm, norm_on.clone())));
        }
    }
    count
}
