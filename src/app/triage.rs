//! Triage's rows: everything not ready in a scope, grouped. By default the groups are root
//! causes — the not-ready objects nothing they depend on holds back — each with its blast radius
//! (what it holds back on each cluster); objects held back by a root are counted there, not
//! listed again. The flat grouping (`c`) puts every not-ready object in a group of its own
//! failure. Broken connections come first either way: nothing is known behind them.

mod cache;
mod group;
mod incidents;

use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use jiff::{SignedDuration, Timestamp};

use super::view::{ListScope, RowId, Screen, SortBy, clusters_in};
use crate::fleet::graph::{Cause, Holds};
use crate::fleet::suspect::{FailingCopy, RevisionTally};
use crate::fleet::{ClusterEntry, Index};
pub use cache::TriageCache;
use cache::{Entry, hash_of};
pub use group::{Group, GroupOf, group_text, headline};

/// For keys that are hashes already (fingerprints): used as they are.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A group while it is being filled: its id, what it is, members, workspaces seen, and its
/// failing copies' changes.
struct Forming {
    key: u64,
    group: Group,
    seen: Vec<u32>,
    tally: RevisionTally,
}

/// The groups being formed, found by their key.
#[derive(Default)]
struct Groups {
    forming: Vec<Forming>,
    slots: HashMap<u64, usize, BuildHasherDefault<Prehashed>>,
}

impl Groups {
    fn join(
        &mut self,
        key: u64,
        what: impl FnOnce() -> Option<GroupOf>,
        (member, copy): (RowId, Option<&FailingCopy>),
        ws: u32,
        since: Option<Timestamp>,
        recent: bool,
    ) -> Option<&mut Group> {
        let slot = match self.slots.get(&key) {
            Some(slot) => *slot,
            None => {
                self.forming.push(Forming {
                    key,
                    group: Group {
                        what: what()?,
                        members: Vec::new(),
                        workspaces: 0,
                        since: None,
                        recent: 0,
                        holds: Holds::default(),
                        suspect: None,
                        incident: None,
                    },
                    seen: Vec::new(),
                    tally: RevisionTally::default(),
                });
                self.slots.insert(key, self.forming.len() - 1);
                self.forming.len() - 1
            }
        };
        let f = &mut self.forming[slot];
        f.group.members.push(member);
        if let Some(copy) = copy {
            f.tally.add(copy);
        }
        if !f.seen.contains(&ws) {
            f.seen.push(ws);
        }
        f.group.since = match (f.group.since, since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        f.group.recent += usize::from(recent);
        Some(&mut f.group)
    }
}

/// The group an entry opens, when it is the first of its group.
fn group_of(cluster: &ClusterEntry, entry: &Entry) -> Option<GroupOf> {
    if entry.cycle {
        return match cluster.graph.cause(&entry.object)? {
            Cause::Cycle(objects) => Some(GroupOf::Cycle {
                objects: objects.to_vec(),
            }),
            _ => None,
        };
    }
    let o = cluster.objects.get(&entry.object)?;
    Some(GroupOf::Object {
        kind: o.key.kind,
        namespace: o.key.namespace.clone(),
        name: o.key.name.clone(),
        health: o.health,
        reason: o.reason.clone(),
        message: o.message.clone(),
    })
}

pub(super) fn triage(
    index: &Index,
    screen: &Screen,
    scope: ListScope,
    (now, window): (Timestamp, SignedDuration),
    matches: &dyn Fn(&str) -> bool,
    cache: &mut TriageCache,
    (ids, found): (&mut Vec<RowId>, &mut HashMap<u64, Group>),
) {
    let roots_first = !screen.flat;
    let hour_ago = now - SignedDuration::from_hours(1);
    let recent = |t: Option<Timestamp>| t.is_some_and(|t| t > hour_ago);
    let mut groups = Groups::default();
    for (cid, cluster) in clusters_in(index, scope) {
        let conn = &cluster.connection;
        let ws = cluster.workspace.0;
        if conn.phase.is_failure() {
            // The stable id is the lookup key too.
            let key = hash_of(&("connection", conn.phase, &conn.error));
            let what = || {
                Some(GroupOf::Connection {
                    phase: conn.phase,
                    error: conn.error.clone(),
                })
            };
            let since = conn.since;
            let member = (RowId::Cluster(cid), None);
            groups.join(key, what, member, ws, since, recent(since));
            continue;
        }
        if cluster.health.not_ready() == 0 {
            continue;
        }
        for e in cache.entries(cid, cluster, (roots_first, window)) {
            if (screen.suspended_only && !e.suspended) || (screen.failing_only && !e.failing) {
                continue;
            }
            let member = (RowId::Object(cid, e.object.clone()), Some(&e.copy));
            let what = || group_of(cluster, e);
            if let Some(group) = groups.join(e.key, what, member, ws, e.since, recent(e.since))
                && roots_first
            {
                group.holds.add(&e.holds);
            }
        }
    }
    let mut order: Vec<(u64, usize)> = Vec::with_capacity(groups.forming.len());
    let mut seen = HashMap::new();
    for f in groups.forming {
        if !matches(&group_text(&f.group)) {
            continue;
        }
        let mut group = f.group;
        group.workspaces = f.seen.len();
        if let GroupOf::Object { .. } = group.what {
            group.suspect = f.tally.suspect(window);
        }
        // What it costs: its members and what they hold back.
        order.push((f.key, group.members.len() + group.holds.total));
        found.insert(f.key, group);
        seen.insert(f.key, f.seen);
    }
    if roots_first {
        incidents::fold(found, &mut order, &seen);
    }
    let groups = &*found;
    let count = |key: &u64| groups.get(key).map_or(0, |g| g.members.len());
    match screen.sort_by() {
        Some(SortBy::Clusters) => order.sort_by_key(|(k, _)| Reverse(count(k))),
        Some(SortBy::Name) => order.sort_by_key(|(k, _)| groups.get(k).map(group_text)),
        Some(SortBy::Age) => order.sort_by_key(|(k, _)| groups.get(k).and_then(|g| g.since)),
        // Where it hurts most first: what a group costs (its members and what they hold back),
        // then the unwatched before the stalled before the failing.
        _ => order.sort_by_key(|(k, cost)| (Reverse(*cost), groups.get(k).map(|g| g.what.rank()))),
    }
    for (key, _) in order {
        ids.push(RowId::Group(key));
        let Some(g) = groups.get(&key).filter(|_| screen.expanded.contains(&key)) else {
            continue;
        };
        for member in &g.members {
            ids.push(member.clone());
            // An incident's groups open in turn.
            if let RowId::Group(inner) = member
                && screen.expanded.contains(inner)
                && let Some(inner) = groups.get(inner)
            {
                ids.extend(inner.members.iter().cloned());
            }
        }
    }
}
