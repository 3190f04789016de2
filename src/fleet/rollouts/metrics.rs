//! How each ring delivers, from the transitions seen: per ring and deployed thing (a
//! Kustomization or HelmRelease), for each revision that reached the ring, its **lead time** —
//! from the revision first seen anywhere (its source's new artifact, or the first copy that
//! applied it) to applied on 50 %, 90 % and 100 % of the ring's copies; whether it **failed** —
//! a copy turned failed or stalled within the suspect window after applying it, as the suspect
//! evidence reads a failure; and its **time to restore** — from the first such failure until
//! every copy that failed was ready again. Flux's own metrics keep the previous revision's label
//! while a reconcile fails; the transitions do not.
//!
//! Pure: the changes are given (the collectors' history), and so is which ring each cluster is in
//! and how many copies each ring has. Times are the clusters' own where a change carries one
//! (`happened`: a revision's first reconcile, a source's artifact time, a transition), else when
//! it was seen.

use std::collections::{BTreeMap, HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::super::history::RecordedChange;
use super::super::{FluxKind, Health, ObjectKey, content_of, same_content};

/// Revisions kept per ring and thing, the newest.
pub const KEPT: usize = 20;

/// One revision in one ring.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub revision: String,
    /// When it was first seen anywhere in the history.
    pub first_seen: Timestamp,
    /// Seconds from then to applied on 50 %, 90 % and 100 % of the ring's copies; None until
    /// that many have.
    pub lead_seconds: [Option<i64>; 3],
    /// Copies of the ring that applied it.
    pub applied: usize,
    /// Copies that failed within the window after applying it.
    pub failed: usize,
    /// When the first of them failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_at: Option<Timestamp>,
    /// Seconds from the first failure until every copy that failed was ready again; None while
    /// one is not (or none failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored_seconds: Option<i64>,
}

/// A ring's record for one thing.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RingDelivery {
    pub ring: String,
    #[serde(flatten)]
    pub key: ObjectKey,
    /// Its copies in the ring.
    pub clusters: usize,
    /// The medians over its revisions of the lead times to 50 %, 90 % and 100 %, in seconds.
    pub lead_seconds: [Option<i64>; 3],
    /// Revisions after which a failure began, of the revisions that reached the ring.
    pub change_failure_rate: Option<f64>,
    /// The median time to restore, in seconds, over the failures restored.
    pub restore_seconds: Option<i64>,
    /// Its revisions, oldest first (the last [`KEPT`]).
    pub revisions: Vec<Delivery>,
}

/// Where one copy stands.
#[derive(Default)]
struct Copy {
    revision: Option<String>,
    applied_at: Option<Timestamp>,
    /// The revision whose failure it is part of, while it is.
    failing: Option<String>,
}

/// One revision in one ring, while it is worked out.
struct Tally {
    applied: Vec<Timestamp>,
    seen: HashSet<String>,
    failed: HashSet<String>,
    failing: HashSet<String>,
    failed_at: Option<Timestamp>,
    restored_at: Option<Timestamp>,
}

/// The ring deliveries, worked out one change at a time (oldest first) as the history streams
/// in: what it keeps is a copy's place and a tally per ring, thing and revision — not the
/// history.
pub struct Deliveries<F> {
    ring_of: F,
    window: SignedDuration,
    /// When each revision was first seen anywhere (a source's artifact, a copy applying it).
    first_seen: HashMap<String, Timestamp>,
    copies: HashMap<(String, ObjectKey), Copy>,
    tallies: BTreeMap<(String, ObjectKey), Vec<(String, Tally)>>,
    rings: HashMap<String, Option<String>>,
}

impl<F: Fn(&str) -> Option<String>> Deliveries<F> {
    /// `ring_of` names each cluster's ring (clusters it does not know are left out); `window`
    /// is the suspect window.
    pub fn new(ring_of: F, window: SignedDuration) -> Self {
        Deliveries {
            ring_of,
            window,
            first_seen: HashMap::new(),
            copies: HashMap::new(),
            tallies: BTreeMap::new(),
            rings: HashMap::new(),
        }
    }

    /// The next change.
    pub fn add(&mut self, c: &RecordedChange) {
        if c.what == "revision"
            && let Some(to) = c.to.as_deref()
        {
            // By what it applies: a ring's branch names a commit another ring's names too.
            match self.first_seen.get_mut(content_of(to)) {
                Some(seen) => *seen = (*seen).min(when(c)),
                None => {
                    self.first_seen.insert(content_of(to).to_string(), when(c));
                }
            }
        }
        let (Some(kind), Some(ns), Some(name)) = (c.kind, &c.namespace, &c.name) else {
            return;
        };
        if !matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease) {
            return;
        }
        let ring = match self.rings.get(c.cluster.as_str()) {
            Some(ring) => ring.clone(),
            None => {
                let ring = (self.ring_of)(&c.cluster);
                self.rings.insert(c.cluster.clone(), ring.clone());
                ring
            }
        };
        let Some(ring) = ring else {
            return;
        };
        let key = ObjectKey::new(kind, ns, name);
        let copy = self
            .copies
            .entry((c.cluster.clone(), key.clone()))
            .or_default();
        let revisions = self.tallies.entry((ring, key)).or_default();
        match c.what.as_str() {
            "revision" => {
                let Some(to) = c.to.clone() else { return };
                copy.revision = Some(to.clone());
                copy.applied_at = Some(when(c));
                let at = match revisions.iter().position(|(r, _)| same_content(r, &to)) {
                    Some(at) => at,
                    None => {
                        let tally = Tally {
                            applied: Vec::new(),
                            seen: HashSet::new(),
                            failed: HashSet::new(),
                            failing: HashSet::new(),
                            failed_at: None,
                            restored_at: None,
                        };
                        revisions.push((to, tally));
                        revisions.len() - 1
                    }
                };
                let tally = &mut revisions[at].1;
                if tally.seen.insert(c.cluster.clone()) {
                    tally.applied.push(when(c));
                }
            }
            "health" => {
                let Some(to) = c.to.as_deref().and_then(Health::parse) else {
                    return;
                };
                if matches!(to, Health::Failed | Health::Stalled) {
                    let (Some(revision), Some(applied_at)) = (&copy.revision, copy.applied_at)
                    else {
                        return;
                    };
                    if copy.failing.is_some() || when(c).duration_since(applied_at) > self.window {
                        return;
                    }
                    if let Some((_, t)) = revisions
                        .iter_mut()
                        .find(|(r, _)| same_content(r, revision))
                    {
                        t.failed.insert(c.cluster.clone());
                        t.failing.insert(c.cluster.clone());
                        t.failed_at.get_or_insert(when(c));
                        t.restored_at = None;
                        copy.failing = Some(revision.clone());
                    }
                } else if to == Health::Ready
                    && let Some(revision) = copy.failing.take()
                    && let Some((_, t)) = revisions
                        .iter_mut()
                        .find(|(r, _)| same_content(r, &revision))
                {
                    t.failing.remove(&c.cluster);
                    if t.failing.is_empty() {
                        t.restored_at = Some(when(c));
                    }
                }
            }
            _ => {}
        }
    }

    /// What the changes added say. `copies` says how many copies of a thing each ring has
    /// (else the copies the history shows).
    pub fn finish(self, copies: &dyn Fn(&str, &ObjectKey) -> Option<usize>) -> Vec<RingDelivery> {
        let first_seen = self.first_seen;
        self.tallies
            .into_iter()
            .map(|((ring, key), revisions)| {
                let seen: HashSet<&String> = revisions.iter().flat_map(|(_, t)| &t.seen).collect();
                let clusters = copies(&ring, &key).unwrap_or(seen.len()).max(1);
                let mut revisions: Vec<Delivery> = revisions
                    .into_iter()
                    .map(|(revision, t)| {
                        // A copy's applying it is a revision change: it was seen.
                        let first = first_seen.get(content_of(&revision)).copied();
                        let first = first.or(t.applied.iter().min().copied());
                        delivery(
                            revision,
                            t,
                            first.unwrap_or(Timestamp::UNIX_EPOCH),
                            clusters,
                        )
                    })
                    .collect();
                revisions.sort_by_key(|d| d.first_seen);
                if revisions.len() > KEPT {
                    revisions.drain(..revisions.len() - KEPT);
                }
                summed(ring, key, clusters, revisions)
            })
            .collect()
    }
}

/// The ring deliveries the `changes` (oldest first) show: [`Deliveries`] over them all.
pub fn deliveries(
    changes: &[RecordedChange],
    ring_of: &dyn Fn(&str) -> Option<String>,
    copies: &dyn Fn(&str, &ObjectKey) -> Option<usize>,
    window: SignedDuration,
) -> Vec<RingDelivery> {
    let mut d = Deliveries::new(ring_of, window);
    for c in changes {
        d.add(c);
    }
    d.finish(copies)
}

/// When a change happened: as the cluster says, else when it was seen.
fn when(c: &RecordedChange) -> Timestamp {
    c.happened.unwrap_or(c.at)
}

fn delivery(revision: String, mut t: Tally, first_seen: Timestamp, clusters: usize) -> Delivery {
    t.applied.sort();
    let lead = |share: f64| {
        let k = ((clusters as f64 * share).ceil() as usize).max(1);
        t.applied
            .get(k - 1)
            .map(|at| at.duration_since(first_seen).as_secs())
    };
    Delivery {
        revision,
        first_seen,
        lead_seconds: [lead(0.5), lead(0.9), lead(1.0)],
        applied: t.applied.len(),
        failed: t.failed.len(),
        failed_at: t.failed_at,
        restored_seconds: match (t.failed_at, t.restored_at) {
            (Some(f), Some(r)) if t.failing.is_empty() => Some(r.duration_since(f).as_secs()),
            _ => None,
        },
    }
}

/// Seconds as tables show an age (`64s`, `30m`, `3h`), `-` for none.
pub fn shown(seconds: Option<i64>) -> String {
    seconds.map_or("-".into(), crate::units::span)
}

/// The median of `values` (the lower of the middle two), None for none.
pub fn median(mut values: Vec<i64>) -> Option<i64> {
    values.sort_unstable();
    values.get(values.len().checked_sub(1)? / 2).copied()
}

/// What a set of revisions says together: the medians of their lead times to 50, 90 and 100 %,
/// the share of them after which a failure began, the median time to restore.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rolled {
    pub lead_seconds: [Option<i64>; 3],
    pub change_failure_rate: Option<f64>,
    pub restore_seconds: Option<i64>,
}

/// [`Rolled`] over `revisions`.
pub fn rolled<'a>(revisions: impl Iterator<Item = &'a Delivery> + Clone) -> Rolled {
    let lead = |i: usize| {
        median(
            revisions
                .clone()
                .filter_map(|d| d.lead_seconds[i])
                .collect(),
        )
    };
    let (count, failed) = revisions
        .clone()
        .fold((0, 0), |(n, f), d| (n + 1, f + usize::from(d.failed > 0)));
    Rolled {
        lead_seconds: [lead(0), lead(1), lead(2)],
        change_failure_rate: (count > 0).then(|| failed as f64 / count as f64),
        restore_seconds: median(revisions.filter_map(|d| d.restored_seconds).collect()),
    }
}

fn summed(ring: String, key: ObjectKey, clusters: usize, revisions: Vec<Delivery>) -> RingDelivery {
    let Rolled {
        lead_seconds,
        change_failure_rate,
        restore_seconds,
    } = rolled(revisions.iter());
    RingDelivery {
        ring,
        key,
        clusters,
        lead_seconds,
        change_failure_rate,
        restore_seconds,
        revisions,
    }
}

#[cfg(test)]
mod tests;
