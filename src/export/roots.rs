//! `fluxfleet get --root-causes`: the selected not-ready objects explained by their root causes
//! — the first not-ready objects up their chains that nothing holds back — grouped across the
//! fleet (the same object failing the same way), each with the clusters it is on and what it
//! holds back there. `dependsOn` cycles are reported as their own causes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, Write};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::Filter;
use super::output::{sorted, write_json};
use super::request::Output;
use super::table::{Table, safe};
use crate::fleet::graph::{Cause, Holds};
use crate::fleet::suspect::{Suspect, suspect};
use crate::fleet::{ClusterEntry, FluxSummary, Index, ObjectKey};
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
    root_causes: Vec<RootCause<'a>>,
}

fn named(k: &ObjectKey) -> String {
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
        if !filter.object(o) || !o.health.is_not_ready() {
            continue;
        }
        let k = &o.key;
        let held_by = c.graph.cause(k).map_or(&[][..], |cause| cause.held_by(k));
        if held_by.is_empty() {
            // A root, or the first object of a cycle: a cause of its own.
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
            (h.finish(), Some(cycle.clone()))
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
                    cycle: cycle.map(|c| c.iter().map(named).collect()),
                    since: None,
                    started_last_hour: 0,
                    workspaces: 0,
                    blocks: Holds::default(),
                    suspect: None,
                    clusters: Vec::new(),
                });
                seen.push(BTreeSet::new());
                copies.push(Vec::new());
                found.len() - 1
            });
            let cause = &mut found[slot];
            let since = o.last_transition;
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
            let all = scope
                .iter()
                .filter_map(|c| c.objects.get(&first.key).map(|o| &**o));
            cause.suspect = suspect(copies, window).map(|s| s.weigh(all));
        }
    }
    // The widest first: its clusters and what it holds back there.
    found.sort_by_key(|c| std::cmp::Reverse(c.clusters.len() + c.blocks.total));
    found
}

/// Writes the root causes of the selected not-ready objects as a table or JSON.
pub(crate) fn write(
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
                root_causes: causes,
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
                        Some(s) if s.likely => {
                            safe(&crate::units::truncate_hex(&s.revision)).into_owned()
                        }
                        _ => "-".to_string(),
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

fn join(names: &BTreeSet<Arc<str>>) -> String {
    names.iter().map(|n| &**n).collect::<Vec<_>>().join(",")
}
