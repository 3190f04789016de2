//! The rows of a screen: which workspaces, clusters, objects or triage groups it lists, filtered
//! (fuzzy), toggled (failing / suspended only) and sorted. Rows are ids; the views look the data
//! up for the rows they draw, and only for those.

use std::cmp::Reverse;
use std::collections::HashMap;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use jiff::Timestamp;

use super::links::links;
use super::spreads::SpreadCache;
use super::triage::{Group, TriageCache, triage};
use super::view::{ListScope, RowId, Screen, SortBy, View, clusters_in};
use crate::config::RolloutSection;
use crate::fleet::drift::{Drift, drift};
use crate::fleet::rollouts::{self, Matrix, Spread, Standing};
use crate::fleet::{
    ClusterEntry, ClusterId, FluxKind, FluxSummary, Health, Index, ObjectKey, WorkspaceId,
};

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
    /// The drift view's drift, and for each of its rows how that copy differs.
    pub drift: Option<Drift>,
    pub differs: HashMap<(ClusterId, ObjectKey), Vec<Differs>>,
}

/// How a copy in the drift view differs: what it applied where most applied the norm (a
/// digest of manifests, a release's values), its live objects (the controller's words), or how
/// it reconciles beside its other copies.
#[derive(Clone, Debug, PartialEq)]
pub enum Differs {
    Applied {
        revision: crate::fleet::SharedText,
        digest: crate::fleet::SharedText,
        norm: crate::fleet::SharedText,
        /// Which objects its inventory and the norm's disagree on, where both were read.
        objects: Option<crate::fleet::SharedText>,
    },
    Live(crate::fleet::SharedText),
    /// Not run for `since_s` seconds, on an interval of `interval_s`.
    Stuck {
        since_s: i64,
        interval_s: u32,
    },
    /// Its runs go back and forth between success and failure.
    Flapping,
    /// Its last run took `took_ms` where the median copy took `median_ms`.
    Slow {
        took_ms: u32,
        median_ms: u32,
    },
}

/// What rows are built with beside the index and the screen: the rollout settings, the clock,
/// the kept spreads and triage's kept parts.
pub struct With<'a> {
    pub rollout: &'a RolloutSection,
    pub now: Timestamp,
    pub spreads: &'a mut SpreadCache,
    pub triage: &'a mut TriageCache,
    /// The drift view's object, its copies read: shown instead of what the index tells.
    pub asked: Option<&'a Drift>,
}

/// Whether a row's text passes the screen's filter.
type Matches<'a> = &'a dyn Fn(&str) -> bool;

pub fn build(index: &Index, screen: &Screen, with: With) -> Rows {
    let With {
        rollout,
        now,
        spreads: cache,
        triage: parts,
        asked,
    } = with;
    let matcher = SkimMatcherV2::default();
    let matches =
        |hay: &str| screen.filter.is_empty() || matcher.fuzzy_match(hay, &screen.filter).is_some();
    let mut rows = Rows::default();
    match &screen.view {
        View::Fleet => rows.ids = fleet_rows(index, screen, &matches),
        View::Workspace(w) => rows.ids = workspace_rows(index, screen, *w, &matches),
        View::Cluster(id) => rows.ids = cluster_rows(index, screen, *id, &matches),
        View::Objects { scope, kind } => {
            rows.ids = object_rows(index, screen, (*scope, *kind), &matches)
        }
        View::Triage { scope } => {
            let into = (&mut rows.ids, &mut rows.groups);
            let window = rollout.rules.suspect_window;
            triage(index, screen, *scope, (now, window), &matches, parts, into)
        }
        View::Rollout { scope, kind } => rollout_rows(
            (index, screen, &matches),
            (*scope, *kind),
            (rollout, now, cache),
            &mut rows,
        ),
        View::Matrix { scope, key } => matrix_rows(
            (index, screen, &matches),
            (*scope, key),
            (rollout, now),
            &mut rows,
        ),
        // The objects it links to, each opened with enter.
        View::Detail { cluster, key } => {
            if let Some(c) = index.cluster(*cluster) {
                let (links, _) = links(c, key);
                rows.ids = links
                    .into_iter()
                    .map(|l| RowId::Object(*cluster, l.key))
                    .collect();
            }
        }
        View::Drift { scope, key } => {
            let found = match asked {
                Some(read) => read.clone(),
                None => {
                    let clusters = clusters_in(index, *scope);
                    let key = key.as_ref();
                    let wanted = |o: &FluxSummary| key.is_none_or(|k| *k == o.key);
                    drift(clusters.iter().map(|(_, c)| *c), wanted, now)
                }
            };
            drift_rows((index, &matches), (*scope, found), &mut rows)
        }
        View::Help { .. }
        | View::Results
        | View::Audit
        | View::Proposals
        | View::History { .. }
        | View::Workloads { .. }
        | View::Trace(_)
        | View::Tree(_) => {}
    }
    if screen.reverse {
        rows.ids.reverse();
    }
    rows
}

/// The drift view: every copy in the scope off its revision's norm, the objects with the most
/// such copies first, then the releases drifted live, then the copies stuck, flapping or slow.
/// A copy odd in several ways is one row that says each.
fn drift_rows(
    (index, matches): (&Index, Matches<'_>),
    (scope, found): (ListScope, Drift),
    rows: &mut Rows,
) {
    let clusters = clusters_in(index, scope);
    let ids: HashMap<&str, ClusterId> = clusters
        .iter()
        .map(|(id, c)| (c.info.name.as_str(), *id))
        .collect();
    let mut push = |cluster: &str, key: ObjectKey, differs: Differs| {
        let Some(id) = ids.get(cluster).copied() else {
            return;
        };
        let hay = format!("{cluster} {} {}/{}", key.kind, key.namespace, key.name);
        if matches(&hay) {
            let said = rows.differs.entry((id, key.clone())).or_default();
            if said.is_empty() {
                rows.ids.push(RowId::Object(id, key));
            }
            said.push(differs);
        }
    };
    for d in &found.differ {
        let key = ObjectKey::new(d.kind, &d.namespace, &d.name);
        for v in &d.variants {
            // Read on one of its clusters: said of each, as of the variant.
            let objects: Option<crate::fleet::SharedText> =
                v.objects.as_ref().map(|b| b.said().into());
            for cluster in &v.clusters {
                let differs = Differs::Applied {
                    revision: d.revision.clone(),
                    digest: v.digest.clone(),
                    norm: d.norm.digest.clone(),
                    objects: objects.clone(),
                };
                push(cluster, key.clone(), differs);
            }
        }
    }
    for l in &found.live {
        let key = ObjectKey::new(l.kind, &l.namespace, &l.name);
        push(&l.cluster, key, Differs::Live(l.message.clone()));
    }
    for r in &found.reconciles {
        let key = ObjectKey::new(r.kind, &r.namespace, &r.name);
        for s in &r.stuck {
            let stuck = Differs::Stuck {
                since_s: s.since_s,
                interval_s: s.interval_s,
            };
            push(&s.cluster, key.clone(), stuck);
        }
        for cluster in &r.flapping {
            push(cluster, key.clone(), Differs::Flapping);
        }
        for t in &r.slow {
            let slow = Differs::Slow {
                took_ms: t.took_ms,
                median_ms: r.median_ms.unwrap_or_default(),
            };
            push(&t.cluster, key.clone(), slow);
        }
    }
    rows.drift = Some(found);
}

/// The fleet view: its workspaces.
fn fleet_rows(index: &Index, screen: &Screen, matches: Matches<'_>) -> Vec<RowId> {
    let mut ws: Vec<_> = index
        .workspaces()
        .iter()
        .enumerate()
        .filter(|(_, w)| matches(&w.name))
        .filter(|(_, w)| !screen.failing_only || w.health.failing() > 0 || w.phases.failed() > 0)
        .filter(|(_, w)| !screen.suspended_only || w.health.get(Health::Suspended) > 0)
        .collect();
    match screen.sort_by() {
        Some(SortBy::Failing) => {
            ws.sort_by_key(|(_, w)| Reverse((w.health.failing(), w.phases.failed())))
        }
        Some(SortBy::NotLive) => ws.sort_by_key(|(_, w)| Reverse(w.phases.total() - w.phases.up())),
        _ => ws.sort_by(|a, b| a.1.name.cmp(&b.1.name)),
    }
    ws.into_iter()
        .map(|(i, _)| RowId::Workspace(crate::fleet::WorkspaceId(i as u32)))
        .collect()
}

/// A workspace's clusters.
fn workspace_rows(
    index: &Index,
    screen: &Screen,
    w: WorkspaceId,
    matches: Matches<'_>,
) -> Vec<RowId> {
    let Some(ws) = index.workspace(w) else {
        return Vec::new();
    };
    let mut clusters: Vec<(ClusterId, &ClusterEntry)> = ws
        .clusters
        .iter()
        .filter_map(|id| Some((*id, index.cluster(*id)?)))
        .filter(|(_, c)| matches(&c.info.name))
        .filter(|(_, c)| {
            !screen.failing_only || c.health.failing() > 0 || c.connection.phase.is_failure()
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
            (&a.1.info.management, &a.1.info.name).cmp(&(&b.1.info.management, &b.1.info.name))
        }),
        _ => clusters.sort_by(|a, b| a.1.info.name.cmp(&b.1.info.name)),
    }
    clusters
        .into_iter()
        .map(|(id, _)| RowId::Cluster(id))
        .collect()
}

/// A cluster's objects.
fn cluster_rows(index: &Index, screen: &Screen, id: ClusterId, matches: Matches<'_>) -> Vec<RowId> {
    let Some(cluster) = index.cluster(id) else {
        return Vec::new();
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
        Some(SortBy::Age) => objects.sort_by_key(|o| Reverse(o.since)),
        Some(SortBy::Name) => objects.sort_by(|a, b| a.key.name.cmp(&b.key.name)),
        _ => {}
    }
    objects
        .into_iter()
        .map(|o| RowId::Object(id, o.key.clone()))
        .collect()
}

/// Objects of a kind (or every kind) across the scope's clusters.
fn object_rows(
    index: &Index,
    screen: &Screen,
    (scope, kind): (ListScope, Option<FluxKind>),
    matches: Matches<'_>,
) -> Vec<RowId> {
    let mut objects: Vec<(ClusterId, &FluxSummary)> = Vec::new();
    for (cid, cluster) in clusters_in(index, scope) {
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
        Some(SortBy::Age) => objects.sort_by_key(|(_, o)| Reverse(o.since)),
        Some(SortBy::Name) => objects.sort_by(|a, b| a.1.key.name.cmp(&b.1.key.name)),
        _ => {}
    }
    objects
        .into_iter()
        .map(|(cid, o)| RowId::Object(cid, o.key.clone()))
        .collect()
}

/// The rollout view: every deployed thing of the scope, with its spread.
fn rollout_rows(
    (index, screen, matches): (&Index, &Screen, Matches<'_>),
    (scope, kind): (ListScope, Option<FluxKind>),
    (rollout, now, cache): (&RolloutSection, Timestamp, &mut SpreadCache),
    rows: &mut Rows,
) {
    let mut spreads: Vec<&Spread> = cache
        .current(index, scope, kind, &rollout.rules, now)
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

/// One thing's matrix: its copies ring by ring.
fn matrix_rows(
    (index, screen, matches): (&Index, &Screen, Matches<'_>),
    (scope, key): (ListScope, &ObjectKey),
    (rollout, now): (&RolloutSection, Timestamp),
    rows: &mut Rows,
) {
    let clusters = clusters_in(index, scope);
    let Some(m) = rollouts::matrix(clusters, key, &rollout.rings, &rollout.rules, now) else {
        return;
    };
    let mut ring = None;
    for (i, p) in m.places.iter().enumerate() {
        let wanted = (!screen.failing_only || p.stuck.is_some() || p.standing != Standing::Current)
            && (!screen.suspended_only || p.standing == Standing::Suspended)
            && (screen.filter.is_empty()
                || index
                    .cluster(p.cluster)
                    .is_some_and(|c| matches(&format!("{} {}", c.info.workspace, c.info.name))));
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

fn object_wanted(screen: &Screen, o: &FluxSummary) -> bool {
    (!screen.failing_only || o.health.is_failing()) && (!screen.suspended_only || o.suspended)
}
