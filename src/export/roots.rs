//! `fluxfleet get --root-causes`: the selected not-ready objects explained by their root causes
//! — the first not-ready objects up their chains that nothing holds back — grouped across the
//! fleet (the same object failing the same way), each with the clusters it is on and what it
//! holds back there. `dependsOn` cycles are reported as their own causes. Above them, the
//! **incidents**: the causes whose messages say the same endpoint outside the clusters fails
//! the same way (`fleet::incident`), one over every object and cluster they hit — a registry's
//! outage read once, not once per source that uses it (`fluxfleet alert` sends one alert for
//! each).

use crate::fleet::SharedText;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, Write};

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::Filter;
use crate::fleet::graph::{Cause, Holds};
use crate::fleet::incident::{ErrorClass, Shared, shared_cause};
use crate::fleet::suspect::{Suspect, suspect};
use crate::fleet::{ClusterEntry, FluxSummary, Index, ObjectKey};
use crate::headless::Output;
use crate::headless::opening::sorted;
use crate::headless::table::{Table, safe};
use crate::headless::writing::write_json;
use crate::units::age;

/// One root cause across the fleet.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RootCause<'a> {
    pub(super) kind: &'static str,
    pub(super) namespace: &'a str,
    pub(super) name: &'a str,
    /// Its health, as `get` names it (a cycle: `failed`).
    pub(super) status: &'static str,
    pub(super) reason: Option<&'a str>,
    pub(super) message: Option<&'a str>,
    /// A `dependsOn` cycle: its objects, `Kind/namespace/name`, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cycle: Option<Vec<String>>,
    /// Since when its oldest copy is not ready.
    pub(super) since: Option<Timestamp>,
    /// Copies that turned not ready within the last hour.
    pub(super) started_last_hour: usize,
    pub(super) workspaces: usize,
    /// What it holds back: the fewest and the most on one cluster, the total, and their names.
    pub(super) blocks: Holds,
    /// The change its copies came by before failing, with the evidence; None when none records
    /// a change (the cause is then outside the GitOps change).
    pub(super) suspect: Option<Suspect>,
    /// The endpoint outside the clusters its message says fails, and how: the incident it is
    /// part of with every cause naming the same.
    pub(super) incident: Option<Shared>,
    pub(super) clusters: Vec<Copy<'a>>,
}

/// The root cause on one cluster.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Copy<'a> {
    pub(super) workspace: &'a str,
    pub(super) cluster: &'a str,
    pub(super) since: Option<Timestamp>,
    /// The selected objects it holds back there, `Kind/namespace/name`.
    pub(super) blocks: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RootsJson<'a> {
    incidents: Vec<Incident<'a>>,
    root_causes: &'a [RootCause<'a>],
}

pub(super) fn named(k: &ObjectKey) -> String {
    format!("{}/{}/{}", k.kind, k.namespace, k.name)
}

/// The roots of the selected not-ready objects of one cluster, each with the selected objects
/// it holds back (a cycle stands under its first object).
fn roots_of<'a>(
    c: &'a ClusterEntry,
    filter: &Filter,
) -> BTreeMap<&'a ObjectKey, Vec<&'a ObjectKey>> {
    let mut roots: BTreeMap<&ObjectKey, Vec<&ObjectKey>> = BTreeMap::new();
    for o in c.objects.values() {
        if !filter.object(o) || !o.is_not_ready() {
            continue;
        }
        let k = &o.key;
        let cause = c.graph.cause(k);
        let held_by = cause.map_or(&[][..], |cause| cause.held_by(k));
        // A root, or the first object of a cycle: a cause of its own — unless it is suspended
        // (deliberately stopped: a cause only where it holds something back, counted below by
        // what it holds), or waits only for its controller's retry (nothing holds it back now).
        if held_by.is_empty() && !o.suspended && cause.is_none_or(Cause::is_own) {
            roots.entry(k).or_default();
        }
        for root in held_by {
            roots.entry(root).or_default().push(k);
        }
    }
    roots
}

/// What makes two roots on different clusters the same cause.
fn group_key(c: &ClusterEntry, root: &FluxSummary) -> (u64, Option<Vec<ObjectKey>>) {
    match c.graph.cause(&root.key) {
        Some(Cause::Cycle(cycle)) => {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            cycle.hash(&mut h);
            (h.finish(), Some(cycle.to_vec()))
        }
        _ => (root.fingerprint, None),
    }
}

pub(super) fn causes<'a>(
    index: &'a Index,
    filter: &Filter,
    (now, window): (Timestamp, SignedDuration),
) -> Vec<RootCause<'a>> {
    let hour_ago = now - SignedDuration::from_hours(1);
    let mut found: Vec<RootCause> = Vec::new();
    let mut slots: HashMap<u64, usize> = HashMap::new();
    let mut seen: Vec<BTreeSet<&str>> = Vec::new();
    let mut copies: Vec<Vec<(&ClusterEntry, &FluxSummary)>> = Vec::new();
    // Sorted once: every group's suspect is weighed against all the scope's copies.
    let scope: Vec<&ClusterEntry> = sorted(index).filter(|c| filter.cluster(c)).collect();
    for &c in &scope {
        for (root, held) in roots_of(c, filter) {
            let Some(o) = c.objects.get(root) else {
                continue;
            };
            let (key, cycle) = group_key(c, o);
            let slot = *slots.entry(key).or_insert_with(|| {
                found.push(RootCause {
                    kind: o.key.kind.as_str(),
                    namespace: &o.key.namespace,
                    name: &o.key.name,
                    status: o.health.key(),
                    reason: o.reason.as_deref(),
                    message: o.message.as_deref(),
                    cycle: cycle.as_ref().map(|c| c.iter().map(named).collect()),
                    since: None,
                    started_last_hour: 0,
                    workspaces: 0,
                    blocks: Holds::default(),
                    suspect: None,
                    incident: match cycle {
                        Some(_) => None,
                        None => o.message.as_deref().and_then(shared_cause),
                    },
                    clusters: Vec::new(),
                });
                seen.push(BTreeSet::new());
                copies.push(Vec::new());
                found.len() - 1
            });
            let cause = &mut found[slot];
            let since = o.since;
            cause.since = match (cause.since, since) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            cause.started_last_hour += usize::from(since.is_some_and(|t| t > hour_ago));
            seen[slot].insert(&c.info.workspace);
            copies[slot].push((c, o));
            cause.blocks.add(&held);
            cause.clusters.push(Copy {
                workspace: &c.info.workspace,
                cluster: &c.info.name,
                since,
                blocks: held.iter().map(|k| named(k)).collect(),
            });
        }
    }
    for ((cause, workspaces), copies) in found.iter_mut().zip(&seen).zip(&copies) {
        cause.workspaces = workspaces.len();
        if cause.cycle.is_none()
            && let Some((_, first)) = copies.first()
        {
            let all = scope.iter().filter_map(|c| c.objects.get(&first.key));
            cause.suspect = suspect(copies, window).map(|s| s.weigh(all));
        }
    }
    // The widest first: its clusters and what it holds back there.
    found.sort_by_key(|c| std::cmp::Reverse(c.clusters.len() + c.blocks.total));
    found
}

/// Root causes sharing an endpoint's failure.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Incident<'a> {
    pub(super) endpoint: &'a str,
    pub(super) class: ErrorClass,
    /// What it says, for people: "github.com does not resolve".
    pub(super) summary: String,
    /// Since when its oldest copy fails.
    pub(super) since: Option<Timestamp>,
    /// Distinct clusters and workspaces it hits.
    pub(super) clusters: usize,
    pub(super) workspaces: usize,
    /// Failing copies of its root causes, and what they hold back.
    pub(super) objects: usize,
    pub(super) blocks: usize,
    /// Its root causes, `Kind/namespace/name`, the widest first.
    pub(super) root_causes: Vec<String>,
    /// Where its root causes are in the list given (for the alert's and the TUI's own use).
    #[serde(skip)]
    pub(super) members: Vec<usize>,
}

/// The incidents of `causes`, the widest (most clusters, then most objects) first.
pub(super) fn incidents<'a>(causes: &'a [RootCause<'a>]) -> Vec<Incident<'a>> {
    let mut by: BTreeMap<&Shared, Vec<usize>> = BTreeMap::new();
    for (i, cause) in causes.iter().enumerate() {
        if let Some(shared) = &cause.incident {
            by.entry(shared).or_default().push(i);
        }
    }
    let mut found: Vec<Incident> = by
        .into_iter()
        .map(|(shared, members)| {
            let mut clusters = BTreeSet::new();
            let mut workspaces = BTreeSet::new();
            let (mut objects, mut blocks) = (0, 0);
            for &i in &members {
                for copy in &causes[i].clusters {
                    clusters.insert(copy.cluster);
                    workspaces.insert(copy.workspace);
                }
                objects += causes[i].clusters.len();
                blocks += causes[i].blocks.total;
            }
            Incident {
                endpoint: &shared.endpoint,
                class: shared.class,
                summary: format!("{} {}", shared.endpoint, shared.class.says()),
                since: members.iter().filter_map(|&i| causes[i].since).min(),
                clusters: clusters.len(),
                workspaces: workspaces.len(),
                objects,
                blocks,
                root_causes: members
                    .iter()
                    .map(|&i| {
                        let c = &causes[i];
                        format!("{}/{}/{}", c.kind, c.namespace, c.name)
                    })
                    .collect(),
                members,
            }
        })
        .collect();
    found.sort_by(|a, b| {
        (b.clusters, b.objects, a.endpoint, a.class)
            .cmp(&(a.clusters, a.objects, b.endpoint, b.class))
    });
    found
}

/// Writes the root causes of the selected not-ready objects as a table or JSON.
pub fn write(
    index: &Index,
    (filter, output): (&Filter, Output),
    (now, window): (Timestamp, SignedDuration),
    out: &mut dyn Write,
) -> io::Result<()> {
    let causes = causes(index, filter, (now, window));
    match output {
        Output::Json | Output::Ndjson => write_json(
            out,
            &RootsJson {
                incidents: incidents(&causes),
                root_causes: &causes,
            },
        ),
        Output::Table => {
            let mut table = Table::new(vec![
                "KIND",
                "NAMESPACE",
                "NAME",
                "STATUS",
                "REASON",
                "CLUSTERS",
                "WORKSPACES",
                "BLOCKS",
                "SINCE",
                "1H",
                "SUSPECT",
                "INCIDENT",
                "MESSAGE",
            ]);
            for c in &causes {
                let blocks = match c.blocks.text() {
                    text if text.is_empty() => "-".to_string(),
                    text => format!("{text} ({})", join(&c.blocks.names)),
                };
                let message = match &c.cycle {
                    Some(cycle) => format!("dependsOn cycle: {}", cycle.join(" -> ")),
                    None => c.message.unwrap_or("").to_string(),
                };
                table.row(vec![
                    c.kind.to_string(),
                    safe(c.namespace).into_owned(),
                    safe(c.name).into_owned(),
                    c.status.to_string(),
                    safe(c.reason.unwrap_or("-")).into_owned(),
                    c.clusters.len().to_string(),
                    c.workspaces.to_string(),
                    safe(&blocks).into_owned(),
                    age(c.since, now),
                    c.started_last_hour.to_string(),
                    match &c.suspect {
                        Some(s) if s.likely => safe(&s.short()).into_owned(),
                        _ => "-".to_string(),
                    },
                    match &c.incident {
                        Some(shared) => safe(&shared.to_string()).into_owned(),
                        None => "-".to_string(),
                    },
                    safe(&message).into_owned(),
                ]);
            }
            if table.is_empty() {
                return writeln!(out, "nothing not ready in the selection");
            }
            table.write(out)
        }
    }
}

fn join(names: &BTreeSet<SharedText>) -> String {
    names.iter().map(|n| &**n).collect::<Vec<_>>().join(",")
}
