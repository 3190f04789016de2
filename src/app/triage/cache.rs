//! Each cluster's part of triage, kept until the cluster changes. Working out a cluster's part
//! reads its not-ready objects and their causes; a batch of events touches a few clusters, so a
//! rebuild works out only theirs and groups the kept parts of the others.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use jiff::{SignedDuration, Timestamp};

use crate::fleet::graph::Cause;
use crate::fleet::suspect::FailingCopy;
use crate::fleet::{ClusterEntry, ClusterId, ObjectKey};

/// A not-ready object as triage lists it: the group it joins and what the screen's toggles and
/// the group's columns read.
#[derive(Debug)]
pub(super) struct Entry {
    /// The group's key: the failure's fingerprint, or the cycle's.
    pub key: u64,
    pub object: ObjectKey,
    /// The group is the `dependsOn` cycle this object comes first in.
    pub cycle: bool,
    pub since: Option<Timestamp>,
    pub suspended: bool,
    pub failing: bool,
    /// What it holds back on its cluster (root causes only).
    pub holds: Box<[ObjectKey]>,
    /// The change before it failed, what it runs and what it tried: its part of its group's
    /// suspect.
    pub copy: FailingCopy,
}

/// One cluster's entries, as of its stamp.
#[derive(Debug, Default)]
struct Part {
    stamp: u64,
    roots_first: bool,
    window: SignedDuration,
    entries: Vec<Entry>,
}

/// The kept parts, by cluster id.
#[derive(Debug, Default)]
pub struct TriageCache {
    parts: Vec<Part>,
}

impl TriageCache {
    /// The cluster's entries, worked out again if it changed since they were.
    pub(super) fn entries(
        &mut self,
        id: ClusterId,
        cluster: &ClusterEntry,
        (roots_first, window): (bool, SignedDuration),
    ) -> &[Entry] {
        let i = id.0 as usize;
        if self.parts.len() <= i {
            self.parts.resize_with(i + 1, Part::default);
        }
        let part = &mut self.parts[i];
        if part.stamp != cluster.stamp || part.roots_first != roots_first || part.window != window {
            part.entries.clear();
            work_out(cluster, (roots_first, window), &mut part.entries);
            part.stamp = cluster.stamp;
            part.roots_first = roots_first;
            part.window = window;
        }
        &part.entries
    }
}

pub(super) fn hash_of(value: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

/// A cluster's entries: in root-cause mode its roots (and each cycle once, by its first object),
/// each with what it holds back; a suspended root holding others back is one too. Otherwise
/// every object that needs attention.
fn work_out(
    cluster: &ClusterEntry,
    (roots_first, window): (bool, SignedDuration),
    entries: &mut Vec<Entry>,
) {
    if cluster.health.not_ready() == 0 {
        return;
    }
    // What each root (and each cycle's first object) holds back here: a few per cluster, found
    // by scanning, unless a cluster has many.
    let mut held: Vec<(&ObjectKey, Vec<&ObjectKey>)> = Vec::new();
    if roots_first {
        for (k, cause) in cluster.graph.causes() {
            for root in cause.held_by(k) {
                match held.iter_mut().find(|(r, _)| *r == root) {
                    Some((_, ks)) => ks.push(k),
                    None => held.push((root, vec![k])),
                }
            }
        }
    }
    let by_root: Option<HashMap<&ObjectKey, usize>> =
        (held.len() > 64).then(|| held.iter().enumerate().map(|(i, (r, _))| (*r, i)).collect());
    for (k, o) in &cluster.objects {
        let holds = match &by_root {
            Some(map) => map.get(k).map_or(&[][..], |i| held[*i].1.as_slice()),
            None => held
                .iter()
                .find(|(r, _)| *r == k)
                .map_or(&[][..], |(_, ks)| ks.as_slice()),
        };
        // A suspended root that holds others back is a cause worth seeing.
        if !o.health.needs_attention() && holds.is_empty() {
            continue;
        }
        let cause = if roots_first {
            cluster.graph.cause(k)
        } else {
            None
        };
        let (key, cycle) = match cause {
            Some(Cause::Blocked(_)) => continue,
            // Waits for its controller's retry, its dependencies Ready: no cause to triage.
            Some(Cause::AwaitsRetry) if holds.is_empty() => continue,
            Some(Cause::Cycle(objects)) => {
                if objects.first() != Some(k) {
                    continue;
                }
                (hash_of(&("cycle", objects)), true)
            }
            Some(Cause::Root | Cause::AwaitsRetry) | None => (o.fingerprint, false),
        };
        entries.push(Entry {
            key,
            object: k.clone(),
            cycle,
            since: o.since,
            suspended: o.suspended,
            failing: o.health.is_failing(),
            holds: holds.iter().map(|k| (*k).clone()).collect(),
            // Only a failure has a change before it (what waits or is suspended has none).
            copy: match cycle || !o.health.is_failing() {
                true => FailingCopy::default(),
                false => FailingCopy::of(cluster, o, window),
            },
        });
    }
}
