//! Fleet-wide drift's corrections: the Kustomizations whose controller keeps correcting live
//! objects (kustomize-controller's apply events on a revision it had applied), found without
//! asking of one object — one Event list per cluster and namespace (`involvedObject.kind=
//! Kustomization`), at most [`LISTS`] of them, a bounded number at a time, each within a
//! timeout. A summarized cluster is not read: the index holds only its failing objects.

use std::collections::BTreeMap;

use super::Reader;
use super::evidence::{Gather, each};
use crate::fleet::drift::asked::NotRead;
use crate::fleet::drift::{Drift, corrected as live};
use crate::fleet::filter::Filter;
use crate::fleet::workload::ReadError;
use crate::fleet::{ClusterInfo, Counted, FluxKind, FluxSummary, Index, ObjectEvent};

/// The Event lists one fleet-wide drift reads, at most (a cluster's Kustomizations mostly
/// share one namespace: about one list a cluster).
pub const LISTS: usize = 5_000;

/// What to read: the Kustomizations of one cluster and namespace running a revision they
/// applied, not suspended.
#[derive(Clone, Debug)]
pub struct Wanted {
    cluster: ClusterInfo,
    namespace: String,
    copies: Vec<FluxSummary>,
}

/// The reads fleet-wide drift's corrections need in `filter`'s scope (none when it asks of
/// another kind than Kustomization).
pub fn wanted(index: &Index, filter: &Filter) -> Vec<Wanted> {
    if filter.kind.is_some_and(|k| k != FluxKind::Kustomization) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (_, c) in index.entries() {
        if c.retired || !filter.cluster(c) || c.counted == Counted::Report {
            continue;
        }
        let mut by_namespace: BTreeMap<String, Vec<FluxSummary>> = BTreeMap::new();
        let copies = c.objects.values().filter(|o| {
            o.key.kind == FluxKind::Kustomization
                && filter.key(&o.key)
                && !o.suspended
                && o.rollout.as_deref().is_some_and(|r| r.applied.is_some())
        });
        for o in copies {
            by_namespace
                .entry(o.key.namespace.to_string())
                .or_default()
                .push(o.clone());
        }
        out.extend(by_namespace.into_iter().map(|(namespace, copies)| Wanted {
            cluster: (*c.info).clone(),
            namespace,
            copies,
        }));
    }
    out
}

/// The Kustomizations' Event lists of every namespace `wanted` names on each of `clusters`.
async fn lists_of(
    reader: &Reader,
    clusters: &[ClusterInfo],
    wanted: &[Wanted],
    how: Gather,
) -> Vec<(String, Result<Vec<(String, Vec<ObjectEvent>)>, ReadError>)> {
    each(clusters, how, |cluster| {
        let reader = reader.clone();
        let namespaces: Vec<String> = wanted
            .iter()
            .filter(|w| w.cluster.key == cluster.key)
            .map(|w| w.namespace.clone())
            .collect();
        async move {
            let mut events = Vec::new();
            for ns in namespaces {
                let listed = reader
                    .kind_events(&cluster, &ns, FluxKind::Kustomization)
                    .await?;
                events.push((ns, listed));
            }
            Ok(events)
        }
    })
    .await
}

/// Reads `wanted` (the first [`LISTS`]; the others named as not read) and adds to `found` the
/// copies whose controller keeps correcting, and what was read.
pub async fn corrected(reader: &Reader, wanted: Vec<Wanted>, how: Gather, found: &mut Drift) {
    let mut reads = found.reads.take().unwrap_or_default();
    let (read, past): (Vec<_>, Vec<_>) = wanted
        .into_iter()
        .enumerate()
        .partition(|(i, _)| *i < LISTS);
    for (_, w) in past {
        reads.not_read.push(NotRead {
            cluster: w.cluster.name.clone(),
            why: ReadError::Rejected(format!(
                "not read: fleet-wide drift reads at most {LISTS} Event lists; ask drift of one \
                 Kustomization"
            )),
        });
    }
    let wanted: Vec<Wanted> = read.into_iter().map(|(_, w)| w).collect();
    // One read per cluster: its namespaces in turn.
    let mut clusters: Vec<ClusterInfo> = Vec::new();
    for w in &wanted {
        if !clusters.iter().any(|c| c.key == w.cluster.key) {
            clusters.push(w.cluster.clone());
        }
    }
    let mut lists = lists_of(reader, &clusters, &wanted, how).await;
    // A cluster that did not answer in time, or turned the read away for now, is asked once
    // more, fewer at a time: one busy moment would hide a correction.
    let again: Vec<ClusterInfo> = lists
        .iter()
        .filter(|(_, r)| {
            matches!(
                r,
                Err(ReadError::TimedOut(_) | ReadError::Unreachable(_) | ReadError::Server(_))
            )
        })
        .filter_map(|(name, _)| clusters.iter().find(|c| c.name == *name).cloned())
        .collect();
    if !again.is_empty() {
        let fewer = Gather {
            concurrency: how.concurrency.div_ceil(4),
            ..how
        };
        let retried = lists_of(reader, &again, &wanted, fewer).await;
        lists.retain(|(name, _)| !again.iter().any(|c| c.name == *name));
        lists.extend(retried);
    }
    for (name, listed) in lists {
        let listed = match listed {
            Ok(listed) => listed,
            Err(why) => {
                reads.not_read.push(NotRead {
                    cluster: name.clone(),
                    why,
                });
                continue;
            }
        };
        for (namespace, events) in listed {
            let Some(w) = wanted
                .iter()
                .find(|w| w.cluster.name == name && w.namespace == namespace)
            else {
                continue;
            };
            for o in &w.copies {
                reads.events += 1;
                let own = format!("Kustomization/{}", o.key.name);
                let its: Vec<_> = events.iter().filter(|e| e.object == own).cloned().collect();
                found.live.extend(live(o, &w.cluster, &its));
            }
        }
    }
    found.sort_live();
    found.reads = Some(reads);
}
