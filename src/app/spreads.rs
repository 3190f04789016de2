//! The rollout view's spreads, kept between rebuilds. Computing every deployed thing's spread
//! reads every object of the scope (tens of milliseconds at 60,000 objects), while a batch of
//! events touches a few: a rebuild recomputes only the things a batch touched. Everything is
//! recomputed when the view's scope or kind changes, when clusters join or leave or a kind is
//! relisted, and every [`FULL_EVERY`]: whether a cluster is stuck depends on the clock and on its
//! sources, which change without touching the thing itself.

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};

use super::view::{ListScope, clusters_in};
use crate::fleet::index::Change;
use crate::fleet::rollouts::{self, Spread, StuckRules};
use crate::fleet::{FluxKind, Index, ObjectKey, Rollout};

/// How stale a stuck count may get.
pub const FULL_EVERY: SignedDuration = SignedDuration::from_secs(30);

#[derive(Debug, Default)]
pub struct SpreadCache {
    /// What the spreads are of; None before the first computation.
    of: Option<(ListScope, Option<FluxKind>)>,
    spreads: HashMap<ObjectKey, Spread>,
    /// Things changed since the last computation.
    dirty: HashSet<ObjectKey>,
    everything: bool,
    computed: Option<Timestamp>,
}

impl SpreadCache {
    /// Notes what an event is about to change (call before the index applies it).
    pub fn touched(&mut self, change: &Change) {
        // Before the view first opens nothing is kept; once everything is due, nothing to note.
        if self.of.is_none() || self.everything {
            return;
        }
        match change {
            Change::Applied(s) if Rollout::followed(s.key.kind) => {
                self.dirty.insert(s.key.clone());
            }
            Change::Deleted(key) if Rollout::followed(key.kind) => {
                self.dirty.insert(key.clone());
            }
            Change::Replaced(..)
            | Change::Held(_)
            | Change::Added(_)
            | Change::Retired
            | Change::Counted(_) => {
                self.everything = true;
                self.dirty.clear();
            }
            Change::Applied(_)
            | Change::Deleted(_)
            | Change::Connection(_)
            | Change::Report(_)
            | Change::Recounted(..) => {}
        }
    }

    /// The spreads of `kind` (or every followed kind) on the clusters of `scope`, brought up to
    /// date.
    pub fn current(
        &mut self,
        index: &Index,
        scope: ListScope,
        kind: Option<FluxKind>,
        rules: &StuckRules,
        now: Timestamp,
    ) -> &HashMap<ObjectKey, Spread> {
        let stale = self
            .computed
            .is_none_or(|at| now.duration_since(at) >= FULL_EVERY || now < at);
        if self.everything || stale || self.of != Some((scope, kind)) {
            self.spreads = rollouts::spreads(clusters_in(index, scope), kind, rules, now)
                .into_iter()
                .map(|s| (s.key.clone(), s))
                .collect();
            self.of = Some((scope, kind));
            self.computed = Some(now);
            self.everything = false;
            self.dirty.clear();
        } else if !self.dirty.is_empty() {
            let clusters = clusters_in(index, scope);
            for key in self.dirty.drain() {
                if kind.is_some_and(|k| k != key.kind) {
                    continue;
                }
                match rollouts::spread_of(clusters.iter().copied(), &key, rules, now) {
                    Some(s) => self.spreads.insert(key, s),
                    None => self.spreads.remove(&key),
                };
            }
        }
        &self.spreads
    }
}
