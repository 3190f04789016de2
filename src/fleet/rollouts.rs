//! Rollouts across clusters: for each deployed thing (kind, namespace, name), which revision is
//! the newest, how far it has spread ring by ring, which clusters are behind, and which are stuck
//! and why. Pure: reads the index; `now` is given, never read.
//!
//! The newest revision is one no cluster has moved on from (to the revision it tried, or past it
//! in its `status.history`) that arrived last: the latest of the times its clusters first ran it
//! (a Kustomization's `status.history` from Flux 2.7 on, a HelmRelease's `firstDeployed`, a
//! source's artifact time, or the artifact time of the source a Kustomization applied). Without
//! any time, chart versions compare as versions and the revision most clusters try wins.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use jiff::Timestamp;

use super::{ClusterEntry, ClusterId, FluxKind, ObjectKey, Rollout};
use study::{Instance, study};

mod halt;
pub mod metrics;
mod odd;
mod rings;
mod spread;
mod study;

pub use halt::{Halt, NoHalt, halt};
pub use rings::Rings;
pub use spread::{
    Matrix, Odd, Place, Revision, Ring, Spread, Standing, StandingCounts, Stuck, StuckRules, shown,
};

/// The rows of the rollout view: every followed thing of `kind` (or all) on `clusters`, in
/// kind, namespace, name order.
pub fn spreads<'a>(
    clusters: impl IntoIterator<Item = (ClusterId, &'a ClusterEntry)>,
    kind: Option<FluxKind>,
    rules: &StuckRules,
    now: Timestamp,
) -> Vec<Spread> {
    let mut things: HashMap<&ObjectKey, Vec<Instance<'a>>, BuildHasherDefault<Fx>> =
        HashMap::default();
    for (id, cluster) in clusters {
        if cluster.retired {
            continue;
        }
        for (key, o) in &cluster.objects {
            if kind.is_some_and(|k| k != key.kind) || !Rollout::followed(key.kind) {
                continue;
            }
            things.entry(key).or_default().push(Instance {
                cluster: id,
                entry: cluster,
                object: o,
            });
        }
    }
    let mut out: Vec<Spread> = things
        .into_iter()
        .map(|(key, copies)| study(key, &copies, rules, now, false).0)
        .collect();
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// The spread of one thing on `clusters`; None when none of them has it. What a cache of
/// [`spreads`] recomputes for the things a change touched.
pub fn spread_of<'a>(
    clusters: impl IntoIterator<Item = (ClusterId, &'a ClusterEntry)>,
    key: &ObjectKey,
    rules: &StuckRules,
    now: Timestamp,
) -> Option<Spread> {
    let copies = copies_of(clusters, key);
    (!copies.is_empty()).then(|| study(key, &copies, rules, now, false).0)
}

/// Every copy of `key` on `clusters`.
fn copies_of<'a>(
    clusters: impl IntoIterator<Item = (ClusterId, &'a ClusterEntry)>,
    key: &ObjectKey,
) -> Vec<Instance<'a>> {
    clusters
        .into_iter()
        .filter(|(_, c)| !c.retired)
        .filter_map(|(id, c)| {
            Some(Instance {
                cluster: id,
                entry: c,
                object: c.objects.get(key)?,
            })
        })
        .collect()
}

/// A fast hash for grouping keys of tens of thousands of objects (the default SipHash, built to
/// resist chosen keys, costs more than the grouping; a skewed table only costs time here).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The matrix of one thing on `clusters`, grouped by `rings`; None when no cluster has it.
pub fn matrix<'a>(
    clusters: impl IntoIterator<Item = (ClusterId, &'a ClusterEntry)>,
    key: &ObjectKey,
    rings: &Rings,
    rules: &StuckRules,
    now: Timestamp,
) -> Option<Matrix> {
    let copies = copies_of(clusters, key);
    if copies.is_empty() {
        return None;
    }
    let (spread, mut places) = study(key, &copies, rules, now, true);
    // Ring names in promotion order, then each place's ring.
    let ring_keys: Vec<_> = copies.iter().map(|c| rings.of(&c.entry.info)).collect();
    let order: Vec<_> = ring_keys
        .iter()
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut out: Vec<Ring> = order
        .iter()
        .map(|(_, name)| Ring {
            name: name.to_string(),
            clusters: 0,
            on_newest: 0,
            stuck: 0,
            first: None,
            last: None,
        })
        .collect();
    // `study` keeps the order of the copies.
    for (p, key) in places.iter_mut().zip(&ring_keys) {
        p.ring = order.binary_search(key).unwrap_or(0);
        let ring = &mut out[p.ring];
        ring.clusters += 1;
        ring.stuck += u32::from(p.stuck.is_some());
        if p.revision.is_some() && p.revision == spread.newest {
            ring.on_newest += 1;
            if let Some(since) = p.since {
                ring.first = Some(ring.first.map_or(since, |f| f.min(since)));
                ring.last = Some(ring.last.map_or(since, |l| l.max(since)));
            }
        }
    }
    let inventory: Vec<Option<u32>> = copies.iter().map(|c| c.object.inventory()).collect();
    odd::mark(&mut places, &inventory);
    // `study` keeps the order of the copies: each place's cluster name is its copy's.
    let mut named: Vec<(Place, &str)> = places
        .into_iter()
        .zip(copies.iter().map(|c| c.entry.info.name.as_str()))
        .collect();
    named.sort_by_key(|(p, name)| {
        (
            p.ring,
            p.stuck.is_none(),
            p.standing,
            Reverse(p.behind_by),
            *name,
        )
    });
    let places = named.into_iter().map(|(p, _)| p).collect();
    Some(Matrix {
        spread,
        rings: out,
        places,
    })
}

#[cfg(test)]
mod tests;
