//! The rows of a screen: which workspaces, clusters, objects or triage groups it lists, filtered
//! (fuzzy), toggled (failing / suspended only) and sorted. Rows are ids; the views look the data
//! up for the rows they draw, and only for those.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher, Hash, Hasher};

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use jiff::Timestamp;

use super::model::{RowId, Scope, Screen, SortBy, View};
use super::spreads::SpreadCache;
use crate::config::Rollout;
use crate::fleet::rollouts::{self, Matrix, Spread, Standing};
use crate::fleet::{
    ClusterEntry, ClusterId, FluxKind, FluxSummary, Health, Index, ObjectKey, Phase,
};

/// What the members of a triage group share.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub what: GroupOf,
    pub members: Vec<RowId>,
    pub workspaces: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GroupOf {
    /// The same object failing the same way on several clusters.
    Object {
        kind: FluxKind,
        namespace: std::sync::Arc<str>,
        name: std::sync::Arc<str>,
        health: Health,
        reason: Option<std::sync::Arc<str>>,
        message: Option<std::sync::Arc<str>>,
    },
    /// Clusters that cannot be watched, for the same reason.
    Connection {
        phase: Phase,
        error: Option<Box<str>>,
    },
}

impl GroupOf {
    /// The severity order: broken connections first (nothing is known there), then by health.
    fn rank(&self) -> (u8, Option<Health>) {
        match self {
            GroupOf::Connection { .. } => (0, None),
            GroupOf::Object { health, .. } => (1, Some(*health)),
        }
    }
}

/// The rows of a screen, and what its triage, rollout and matrix rows refer to.
#[derive(Default)]
pub struct Rows {
    pub ids: Vec<RowId>,
    pub groups: HashMap<u64, Group>,
    /// The rollout view's rows.
    pub spreads: HashMap<ObjectKey, Spread>,
    /// The matrix view's rings and places, and where each cluster's place is.
    pub matrix: Option<Matrix>,
    pub places: HashMap<ClusterId, usize>,
}

/// What rows are built with beside the index and the screen: the rollout settings, the clock and
/// the kept spreads.
pub struct With<'a> {
    pub rollout: &'a Rollout,
    pub now: Timestamp,
    pub spreads: &'a mut SpreadCache,
}

pub fn build(index: &Index, screen: &Screen, with: With) -> Rows {
    let With {
        rollout,
        now,
        spreads: cache,
    } = with;
    let matcher = SkimMatcherV2::default();
    let matches =
        |hay: &str| screen.filter.is_empty() || matcher.fuzzy_match(hay, &screen.filter).is_some();
    let mut rows = Rows::default();
    match &screen.view {
        View::Fleet => {
            let mut ws: Vec<_> = index
                .workspaces()
                .iter()
                .enumerate()
                .filter(|(_, w)| matches(&w.name))
                .filter(|(_, w)| {
                    !screen.failing_only || w.health.failing() > 0 || w.phases.failed() > 0
                })
                .filter(|(_, w)| !screen.suspended_only || w.health.get(Health::Suspended) > 0)
                .collect();
            match screen.sort_by() {
                Some(SortBy::Failing) => {
                    ws.sort_by_key(|(_, w)| Reverse((w.health.failing(), w.phases.failed())))
                }
                Some(SortBy::NotLive) => {
                    ws.sort_by_key(|(_, w)| Reverse(w.phases.total() - w.phases.get(Phase::Live)))
                }
                _ => ws.sort_by(|a, b| a.1.name.cmp(&b.1.name)),
            }
            rows.ids = ws
                .into_iter()
                .map(|(i, _)| RowId::Workspace(crate::fleet::WorkspaceId(i as u32)))
                .collect();
        }
        View::Workspace(w) => {
            let Some(ws) = index.workspace(*w) else {
                return rows;
            };
            let mut clusters: Vec<(ClusterId, &ClusterEntry)> = ws
                .clusters
                .iter()
                .filter_map(|id| Some((*id, index.cluster(*id)?)))
                .filter(|(_, c)| matches(&c.info.name))
                .filter(|(_, c)| {
                    !screen.failing_only
                        || c.health.failing() > 0
                        || c.connection.phase.is_failure()
                })
                .filter(|(_, c)| !screen.suspended_only || c.health.get(Health::Suspended) > 0)
                .collect();
            match screen.sort_by() {
                Some(SortBy::State) => clusters.sort_by(|a, b| {
                    a.1.connection
                        .phase
                        .cmp(&b.1.connection.phase)
                        .then(a.1.info.name.cmp(&b.1.info.name))
                }),
                Some(SortBy::Failing) => clusters.sort_by_key(|(_, c)| Reverse(c.health.failing())),
                Some(SortBy::Fresh) => clusters.sort_by_key(|(_, c)| c.last_event),
                Some(SortBy::Management) => clusters.sort_by(|a, b| {
                    (&a.1.info.management, &a.1.info.name)
                        .cmp(&(&b.1.info.management, &b.1.info.name))
                }),
                _ => clusters.sort_by(|a, b| a.1.info.name.cmp(&b.1.info.name)),
            }
            rows.ids = clusters
                .into_iter()
                .map(|(id, _)| RowId::Cluster(id))
                .collect();
        }
        View::Cluster(id) => {
            let Some(cluster) = index.cluster(*id) else {
                return rows;
            };
            let mut objects: Vec<&FluxSummary> = cluster
                .objects
                .values()
                .filter(|o| object_wanted(screen, o))
                .filter(|o| {
                    screen.filter.is_empty()
                        || matches(&format!(
                            "{} {}/{}",
                            o.key.kind, o.key.namespace, o.key.name
                        ))
                })
                .collect();
            match screen.sort_by() {
                Some(SortBy::Health) => objects.sort_by_key(|o| o.health),
                Some(SortBy::Age) => objects.sort_by_key(|o| Reverse(o.last_transition)),
                Some(SortBy::Name) => objects.sort_by(|a, b| a.key.name.cmp(&b.key.name)),
                _ => {}
            }
            rows.ids = objects
                .into_iter()
                .map(|o| RowId::Object(*id, o.key.clone()))
                .collect();
        }
        View::Objects { scope, kind } => {
            let mut objects: Vec<(ClusterId, &FluxSummary)> = Vec::new();
            for (cid, cluster) in clusters_in(index, *scope) {
                let mut hay = String::new();
                for o in cluster.objects.values() {
                    if kind.is_some_and(|k| k != o.key.kind) || !object_wanted(screen, o) {
                        continue;
                    }
                    if !screen.filter.is_empty() {
                        hay.clear();
                        use std::fmt::Write;
                        let _ = write!(
                            hay,
                            "{} {} {}/{}",
                            cluster.info.name, o.key.kind, o.key.namespace, o.key.name
                        );
                        if !matches(&hay) {
                            continue;
                        }
                    }
                    objects.push((cid, o));
                }
            }
            match screen.sort_by() {
                Some(SortBy::Health) => objects.sort_by_key(|(_, o)| o.health),
                Some(SortBy::Age) => objects.sort_by_key(|(_, o)| Reverse(o.last_transition)),
                Some(SortBy::Name) => objects.sort_by(|a, b| a.1.key.name.cmp(&b.1.key.name)),
                _ => {}
            }
            rows.ids = objects
                .into_iter()
                .map(|(cid, o)| RowId::Object(cid, o.key.clone()))
                .collect();
        }
        View::Triage { scope } => triage(index, screen, *scope, &matches, &mut rows),
        View::Rollout { scope, kind } => {
            let mut spreads: Vec<&Spread> = cache
                .current(index, *scope, *kind, &rollout.rules, now)
                .values()
                .filter(|s| {
                    (!screen.failing_only || s.stuck > 0 || s.clusters.failing > 0)
                        && (!screen.suspended_only || s.clusters.suspended > 0)
                })
                .filter(|s| {
                    screen.filter.is_empty()
                        || matches(&format!(
                            "{} {}/{}",
                            s.key.kind, s.key.namespace, s.key.name
                        ))
                })
                .collect();
            spreads.sort_by(|a, b| a.key.cmp(&b.key));
            match screen.sort_by() {
                Some(SortBy::Behind) => spreads.sort_by_key(|s| Reverse(s.behind)),
                Some(SortBy::Stuck) => spreads.sort_by_key(|s| Reverse(s.stuck)),
                // Newest rollouts first.
                Some(SortBy::Age) => spreads.sort_by_key(|s| Reverse(s.newest_since)),
                _ => {}
            }
            rows.ids = spreads
                .iter()
                .map(|s| RowId::Rollout(s.key.clone()))
                .collect();
            rows.spreads = spreads
                .into_iter()
                .map(|s| (s.key.clone(), s.clone()))
                .collect();
        }
        View::Matrix { scope, key } => {
            let clusters = clusters_in(index, *scope);
            let Some(m) = rollouts::matrix(clusters, key, &rollout.rings, &rollout.rules, now)
            else {
                return rows;
            };
            let mut ring = None;
            for (i, p) in m.places.iter().enumerate() {
                let wanted =
                    (!screen.failing_only || p.stuck.is_some() || p.standing != Standing::Current)
                        && (!screen.suspended_only || p.standing == Standing::Suspended)
                        && (screen.filter.is_empty()
                            || index.cluster(p.cluster).is_some_and(|c| {
                                matches(&format!("{} {}", c.info.workspace, c.info.name))
                            }));
                if !wanted {
                    continue;
                }
                if ring != Some(p.ring) {
                    ring = Some(p.ring);
                    rows.ids.push(RowId::Ring(p.ring));
                }
                rows.ids.push(RowId::Object(p.cluster, key.clone()));
                rows.places.insert(p.cluster, i);
            }
            rows.matrix = Some(m);
        }
        View::Detail { .. } | View::Help { .. } | View::Results | View::Audit => {}
    }
    if screen.reverse {
        rows.ids.reverse();
    }
    rows
}

fn object_wanted(screen: &Screen, o: &FluxSummary) -> bool {
    (!screen.failing_only || o.health.is_failing()) && (!screen.suspended_only || o.suspended)
}

/// The clusters a scope covers, in index order.
pub fn clusters_in(index: &Index, scope: Scope) -> Vec<(ClusterId, &ClusterEntry)> {
    match scope {
        Scope::Fleet => index.entries().collect(),
        Scope::Workspace(w) => index
            .workspace(w)
            .map(|ws| {
                ws.clusters
                    .iter()
                    .filter_map(|id| Some((*id, index.cluster(*id)?)))
                    .collect()
            })
            .unwrap_or_default(),
        Scope::Cluster(id) => index.cluster(id).map(|c| vec![(id, c)]).unwrap_or_default(),
    }
}

fn hash_of(value: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

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

/// A group while it is being filled: its id, what it is, members, workspaces seen.
struct Forming {
    key: u64,
    group: Group,
    seen: Vec<u32>,
}

fn triage(
    index: &Index,
    screen: &Screen,
    scope: Scope,
    matches: &dyn Fn(&str) -> bool,
    rows: &mut Rows,
) {
    let mut forming: Vec<Forming> = Vec::new();
    // By fingerprint: the index has hashed what makes failures the same, no string is read here.
    let mut slots: HashMap<u64, usize, BuildHasherDefault<Prehashed>> = HashMap::default();
    let mut connections: HashMap<u64, usize> = HashMap::new();
    let join = |forming: &mut Vec<Forming>, slot: usize, member: RowId, ws: u32| {
        let f = &mut forming[slot];
        f.group.members.push(member);
        if !f.seen.contains(&ws) {
            f.seen.push(ws);
        }
    };
    for (cid, cluster) in clusters_in(index, scope) {
        let conn = &cluster.connection;
        let ws = cluster.workspace.0;
        if conn.phase.is_failure() {
            // Few clusters fail at once: the stable id is the lookup key too.
            let key = hash_of(&("connection", conn.phase, &conn.error));
            let slot = *connections.entry(key).or_insert_with(|| {
                forming.push(Forming {
                    key,
                    group: Group {
                        what: GroupOf::Connection {
                            phase: conn.phase,
                            error: conn.error.clone(),
                        },
                        members: Vec::new(),
                        workspaces: 0,
                    },
                    seen: Vec::new(),
                });
                forming.len() - 1
            });
            join(&mut forming, slot, RowId::Cluster(cid), ws);
            continue;
        }
        let healthy = cluster.health.not_ready() == cluster.health.get(Health::Suspended);
        if healthy {
            continue;
        }
        for o in cluster.objects.values() {
            if !o.health.needs_attention() || (screen.suspended_only && !o.suspended) {
                continue;
            }
            if screen.failing_only && !o.health.is_failing() {
                continue;
            }
            let k = &o.key;
            let slot = *slots.entry(o.fingerprint).or_insert_with(|| {
                // The id stays the same from frame to frame: expanded groups stay expanded.
                forming.push(Forming {
                    key: o.fingerprint,
                    group: Group {
                        what: GroupOf::Object {
                            kind: k.kind,
                            namespace: k.namespace.clone(),
                            name: k.name.clone(),
                            health: o.health,
                            reason: o.reason.clone(),
                            message: o.message.clone(),
                        },
                        members: Vec::new(),
                        workspaces: 0,
                    },
                    seen: Vec::new(),
                });
                forming.len() - 1
            });
            join(&mut forming, slot, RowId::Object(cid, k.clone()), ws);
        }
    }
    let mut order: Vec<u64> = Vec::with_capacity(forming.len());
    for f in forming {
        if !matches(&group_text(&f.group)) {
            continue;
        }
        order.push(f.key);
        let mut group = f.group;
        group.workspaces = f.seen.len();
        rows.groups.insert(f.key, group);
    }
    let groups = &rows.groups;
    let count = |key: &u64| groups.get(key).map_or(0, |g| g.members.len());
    match screen.sort_by() {
        Some(SortBy::Clusters) => order.sort_by_key(|k| Reverse(count(k))),
        Some(SortBy::Name) => order.sort_by_key(|k| groups.get(k).map(group_text)),
        _ => order.sort_by_key(|k| (groups.get(k).map(|g| g.what.rank()), Reverse(count(k)))),
    }
    for key in order {
        rows.ids.push(RowId::Group(key));
        if screen.expanded.contains(&key)
            && let Some(g) = rows.groups.get(&key)
        {
            rows.ids.extend(g.members.iter().cloned());
        }
    }
}

/// The text a triage group is filtered by and shown with.
pub fn group_text(group: &Group) -> String {
    match &group.what {
        GroupOf::Object {
            kind,
            namespace,
            name,
            reason,
            message,
            ..
        } => format!(
            "{kind} {namespace}/{name} {}: {}",
            reason.as_deref().unwrap_or("-"),
            message.as_deref().unwrap_or("")
        ),
        GroupOf::Connection { phase, error } => {
            format!("cluster {phase}: {}", error.as_deref().unwrap_or(""))
        }
    }
}
