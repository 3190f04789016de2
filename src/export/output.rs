//! What `fluxfleet get` prints: the objects or the rollups, as a table, JSON or NDJSON.

use std::io::{self, Write};

use jiff::Timestamp;
use serde::Serialize;

use super::query::Query;
use super::{Filter, shapes};
use crate::fleet::{ClusterEntry, FluxKind, FluxSummary, Health, Index};
use crate::headless::Output;
use crate::headless::opening::sorted;
use crate::headless::table::{Table, ready_and_message};
use crate::headless::writing::{write_json, write_line};
use crate::units::{age, truncate_hex};

pub(crate) fn selected<'a>(
    index: &'a Index,
    filter: &'a Filter,
) -> impl Iterator<Item = (&'a ClusterEntry, &'a FluxSummary)> {
    sorted(index)
        .filter(|c| filter.cluster(c))
        .flat_map(move |c| {
            c.objects
                .values()
                .filter(|s| filter.object(s))
                .map(move |s| (c, s))
        })
}

#[derive(Serialize)]
struct GetJson<'a> {
    clusters: Vec<shapes::Cluster<'a>>,
    objects: Vec<shapes::Object<'a>>,
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    fleet: shapes::FleetRollup<'a>,
    workspaces: Vec<shapes::Workspace<'a>>,
    clusters: Clusters<'a>,
}

/// Clusters written one view at a time: 100,000 views held at once cost a reader tens of MiB.
struct Clusters<'a>(&'a [&'a ClusterEntry]);

impl Serialize for Clusters<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|c| shapes::Cluster::new(c)))
    }
}

#[derive(Serialize)]
struct Line<T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<&'static str>,
    #[serde(flatten)]
    item: T,
}

/// The selected objects as `request.output` asks; false when a table would be empty (nothing
/// is written then: the caller says so).
pub(super) fn objects(index: &Index, request: &Query, out: &mut dyn Write) -> io::Result<bool> {
    let filter = &request.filter;
    match request.output {
        Output::Json => {
            let doc = GetJson {
                clusters: sorted(index)
                    .filter(|c| filter.cluster(c))
                    .map(shapes::Cluster::new)
                    .collect(),
                objects: selected(index, filter)
                    .map(|(c, s)| shapes::Object::new(c, s))
                    .collect(),
            };
            write_json(out, &doc).map(|()| true)
        }
        Output::Ndjson => {
            for c in sorted(index).filter(|c| filter.cluster(c)) {
                if !c.connection.is_complete() {
                    write_cluster_line(out, c, None)?;
                }
            }
            for (c, s) in selected(index, filter) {
                write_object_line(out, c, s, None)?;
            }
            Ok(true)
        }
        Output::Table => {
            let kinds: std::collections::BTreeSet<FluxKind> =
                selected(index, filter).map(|(_, s)| s.key.kind).collect();
            let qualified = kinds.len() > 1;
            let mut t = Table::new(vec![
                "WORKSPACE",
                "CLUSTER",
                "NAMESPACE",
                "NAME",
                "REVISION",
                "SUSPENDED",
                "READY",
                "MESSAGE",
            ]);
            for (c, s) in selected(index, filter) {
                let (ready, message) = ready_and_message(s);
                let name = if qualified {
                    format!(
                        "{}/{}",
                        s.key.kind.as_str().to_ascii_lowercase(),
                        s.key.name
                    )
                } else {
                    s.key.name.to_string()
                };
                t.row(vec![
                    c.info.workspace.clone(),
                    c.info.name.clone(),
                    s.key.namespace.to_string(),
                    name,
                    s.shown_revision(),
                    if s.suspended { "True" } else { "False" }.into(),
                    ready.into(),
                    truncate_hex(&message),
                ]);
            }
            if t.is_empty() {
                return Ok(false);
            }
            t.write(out).map(|()| true)
        }
    }
}

pub(super) fn summary(
    index: &Index,
    request: &Query,
    now: Timestamp,
    out: &mut dyn Write,
) -> io::Result<()> {
    let filter = &request.filter;
    let clusters: Vec<&ClusterEntry> = sorted(index).filter(|c| filter.cluster(c)).collect();
    match request.output {
        Output::Json => {
            let doc = SummaryJson {
                fleet: shapes::FleetRollup::new(index),
                workspaces: index
                    .workspaces()
                    .iter()
                    .filter(|w| filter.workspace(w))
                    .map(shapes::Workspace::new)
                    .collect(),
                clusters: Clusters(&clusters),
            };
            write_json(out, &doc)
        }
        Output::Ndjson => {
            for w in index.workspaces().iter().filter(|w| filter.workspace(w)) {
                write_line(
                    out,
                    &Line {
                        kind: "workspace",
                        event: None,
                        item: shapes::Workspace::new(w),
                    },
                )?;
            }
            for c in clusters {
                write_cluster_line(out, c, None)?;
            }
            Ok(())
        }
        Output::Table => summary_tables(index, filter, clusters, (now, out)),
    }
}

/// `get --summary` as tables: workspaces, then clusters.
fn summary_tables(
    index: &Index,
    filter: &super::Filter,
    clusters: Vec<&ClusterEntry>,
    (now, out): (Timestamp, &mut dyn Write),
) -> io::Result<()> {
    let mut ws = Table::new(vec![
        "WORKSPACE",
        "CLUSTERS",
        "LIVE",
        "NOT-LIVE",
        "OBJECTS",
        "READY",
        "RUNNING",
        "FAILING",
        "SUSPENDED",
        "PROGRESSING",
        "OTHER",
    ]);
    let mut workspaces: Vec<_> = index
        .workspaces()
        .iter()
        .filter(|w| filter.workspace(w))
        .collect();
    workspaces.sort_by(|a, b| a.name.cmp(&b.name));
    for w in workspaces {
        let h = &w.health;
        let live = w.phases.up();
        let other = h.total()
            - h.get(Health::Ready)
            - h.get(Health::Running)
            - h.failing()
            - h.get(Health::Suspended)
            - h.get(Health::Progressing);
        ws.row(vec![
            w.name.clone(),
            w.clusters.len().to_string(),
            live.to_string(),
            (w.clusters.len() as u32 - live).to_string(),
            h.total().to_string(),
            h.get(Health::Ready).to_string(),
            h.get(Health::Running).to_string(),
            h.failing().to_string(),
            h.get(Health::Suspended).to_string(),
            h.get(Health::Progressing).to_string(),
            other.to_string(),
        ]);
    }
    ws.write(out)?;
    writeln!(out)?;
    let mut cs = Table::new(vec![
        "WORKSPACE",
        "CLUSTER",
        "STATE",
        "LAST EVENT",
        "OBJECTS",
        "READY",
        "FAILING",
        "WORST",
    ]);
    for c in clusters {
        let h = &c.health;
        cs.row(vec![
            c.info.workspace.clone(),
            c.info.name.clone(),
            c.connection.phase.to_string(),
            age(c.last_event, now),
            h.total().to_string(),
            h.get(Health::Ready).to_string(),
            h.failing().to_string(),
            h.worst().map(|w| w.as_str()).unwrap_or("-").to_string(),
        ]);
    }
    cs.write(out)
}

pub(super) fn write_object_line(
    out: &mut dyn Write,
    c: &ClusterEntry,
    s: &FluxSummary,
    event: Option<&'static str>,
) -> io::Result<()> {
    write_line(
        out,
        &Line {
            kind: "object",
            event,
            item: shapes::Object::new(c, s),
        },
    )
}

pub(super) fn write_cluster_line(
    out: &mut dyn Write,
    c: &ClusterEntry,
    event: Option<&'static str>,
) -> io::Result<()> {
    write_line(
        out,
        &Line {
            kind: "cluster",
            event,
            item: shapes::Cluster::new(c),
        },
    )
}
