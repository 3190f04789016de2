//! `fluxfleet rollout [KIND] [NAME]`: which revision runs where. Without a name, one row per
//! deployed thing (the TUI's rollout view); with one, its matrix: the rings, then every cluster.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;

use super::Filter;
use super::outcome::{Ended, Misuse, NotOne, ReadFailed};
use crate::fleet::rollouts::{self, Matrix, Place, Ring, Spread};
use crate::fleet::{ClusterEntry, ClusterId, FluxKind, Index, ObjectKey, Rollout};
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::opening::{fleet, incomplete, not_live};
use crate::headless::table::Table;
use crate::headless::writing;
use crate::session::Session;
use crate::session::resolve::Sources;
use crate::units::age;

/// What `rollout` was asked.
#[derive(Clone, Debug)]
pub struct RolloutQuery {
    pub sources: Sources,
    /// Kind, name, namespace, workspace and cluster globs (no status).
    pub filter: Filter,
    pub output: Output,
    pub timeout: Duration,
    /// `--metrics`: how each ring delivered, from the collectors' history of this long.
    pub metrics: Option<Duration>,
}

/// `fluxfleet rollout`.
pub async fn rollout(request: RolloutQuery, edge: Arc<dyn Edge>) -> Result<Ended, ReadFailed> {
    let edge = edge.as_ref();
    if let Some(since) = request.metrics {
        let how = (request.output, request.timeout);
        return super::delivery::metrics(&request.sources, &request.filter, how, since, edge).await;
    }
    let filter = &request.filter;
    if let Some(kind) = filter.kind.filter(|k| !Rollout::followed(*k)) {
        return Err(Misuse::NoRevisions(kind).into());
    }
    if filter.name.is_some() && filter.kind.is_none() {
        return Err(Misuse::NameWithoutKind.into());
    }
    let opened = fleet(&request.sources, edge).await?;
    let (config, clean) = (opened.config, opened.clean);
    let mut engine = config.engine.clone();
    // Printed once: listed, not watched.
    engine.list_only = true;
    if let Some(kind) = filter.kind
        && !engine.kinds.contains(&kind)
    {
        engine.kinds.push(kind);
    }
    let mut live = Session::start(opened.fleet.sources(&engine, false));
    let settled = live.settle(request.timeout).await;
    let now = Timestamp::now();
    let mut out = io::BufWriter::new(io::stdout());
    let printed = write(
        &live.index,
        filter,
        request.output,
        &config.rollout,
        now,
        &mut out,
    )
    .map_err(ReadFailed::from)
    .and_then(|written| Ok(written.and_then(|()| out.flush())?));
    drop(out);
    not_live(&live.index, filter, settled, now, edge);
    let incomplete = incomplete(&live.index, filter);
    live.shutdown().await;
    printed?;
    Ok(Ended::written(clean, incomplete))
}

/// Writes the rows (no name in the filter) or the matrix of the one object it names; Err says
/// what was not found.
pub fn write(
    index: &Index,
    filter: &Filter,
    output: Output,
    rollout: &crate::config::RolloutSection,
    now: Timestamp,
    out: &mut dyn Write,
) -> Result<io::Result<()>, NotOne> {
    let crate::config::RolloutSection { rings, rules } = rollout;
    let clusters = || index.entries().filter(|(_, c)| filter.cluster(c));
    Ok(match (filter.kind, &filter.name) {
        (Some(kind), Some(name)) => {
            let key = one_key(clusters(), kind, name, filter.namespace.as_deref())?;
            match rollouts::matrix(clusters(), &key, rings, rules, now) {
                Some(m) => write_matrix(index, &m, output, now, out),
                None => Ok(()),
            }
        }
        (kind, _) => {
            let rows: Vec<Spread> = rollouts::spreads(clusters(), kind, rules, now)
                .into_iter()
                .filter(|s| {
                    filter
                        .namespace
                        .as_deref()
                        .is_none_or(|n| n == &*s.key.namespace)
                })
                .collect();
            write_spreads(&rows, output, now, out)
        }
    })
}

/// The one object named `name` of `kind` in the scope; its namespace from `-n` or, when only
/// one namespace has it, from there.
fn one_key<'a>(
    clusters: impl Iterator<Item = (ClusterId, &'a ClusterEntry)>,
    kind: FluxKind,
    name: &str,
    namespace: Option<&str>,
) -> Result<ObjectKey, NotOne> {
    let mut namespaces: Vec<&str> = Vec::new();
    for (_, c) in clusters {
        for key in c.objects.keys() {
            if key.kind == kind
                && &*key.name == name
                && namespace.is_none_or(|n| n == &*key.namespace)
                && !namespaces.contains(&&*key.namespace)
            {
                namespaces.push(&key.namespace);
            }
        }
    }
    match namespaces[..] {
        [ns] => Ok(ObjectKey::new(kind, ns, name)),
        [] => Err(NotOne::Missing {
            kind,
            name: name.to_string(),
        }),
        _ => {
            namespaces.sort();
            Err(NotOne::Namespaces {
                kind,
                name: name.to_string(),
                namespaces: namespaces.iter().map(|n| n.to_string()).collect(),
            })
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SpreadsJson<'a> {
    rollouts: &'a [Spread],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MatrixJson<'a> {
    rollout: &'a Spread,
    rings: &'a [Ring],
    clusters: Vec<PlaceJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PlaceJson<'a> {
    cluster: &'a str,
    workspace: &'a str,
    ring: &'a str,
    #[serde(flatten)]
    place: &'a Place,
}

fn write_spreads(
    rows: &[Spread],
    output: Output,
    now: Timestamp,
    out: &mut dyn Write,
) -> io::Result<()> {
    if output != Output::Table {
        return writing::write_json(out, &SpreadsJson { rollouts: rows });
    }
    let mut t = Table::new(vec![
        "KIND",
        "NAMESPACE",
        "NAME",
        "NEWEST",
        "AGE",
        "CURRENT",
        "BEHIND",
        "FAILING",
        "SUSPENDED",
        "STUCK",
    ]);
    for s in rows {
        let c = &s.clusters;
        t.row(vec![
            s.key.kind.to_string(),
            s.key.namespace.to_string(),
            s.key.name.to_string(),
            rollouts::shown(s.newest.as_ref()),
            age(s.newest_since, now),
            format!("{}/{}", c.current, c.total()),
            s.behind.to_string(),
            c.failing.to_string(),
            c.suspended.to_string(),
            s.stuck.to_string(),
        ]);
    }
    t.write(out)
}

fn write_matrix(
    index: &Index,
    m: &Matrix,
    output: Output,
    now: Timestamp,
    out: &mut dyn Write,
) -> io::Result<()> {
    let cluster = |id: ClusterId| index.cluster(id).map(|c| &c.info);
    if output != Output::Table {
        let clusters = m
            .places
            .iter()
            .filter_map(|p| {
                let info = cluster(p.cluster)?;
                Some(PlaceJson {
                    cluster: &info.name,
                    workspace: &info.workspace,
                    ring: &m.rings[p.ring].name,
                    place: p,
                })
            })
            .collect();
        return writing::write_json(
            out,
            &MatrixJson {
                rollout: &m.spread,
                rings: &m.rings,
                clusters,
            },
        );
    }
    let s = &m.spread;
    writeln!(
        out,
        "{} {}/{}: newest {} ({} ago), on {}/{} clusters, {} behind, {} stuck\n",
        s.key.kind,
        s.key.namespace,
        s.key.name,
        rollouts::shown(s.newest.as_ref()),
        age(s.newest_since, now),
        s.on_newest(),
        s.clusters.total(),
        s.behind,
        s.stuck
    )?;
    let mut t = Table::new(vec![
        "RING",
        "CLUSTERS",
        "ON-NEWEST",
        "SHARE",
        "TOOK",
        "STUCK",
    ]);
    for r in &m.rings {
        t.row(vec![
            r.name.clone(),
            r.clusters.to_string(),
            r.on_newest.to_string(),
            format!("{:.0}%", r.share() * 100.0),
            r.took_text(now),
            r.stuck.to_string(),
        ]);
    }
    t.write(out)?;
    writeln!(out)?;
    let mut t = Table::new(vec![
        "RING",
        "WORKSPACE",
        "CLUSTER",
        "REVISION",
        "SINCE",
        "STATE",
        "REASON",
    ]);
    for p in &m.places {
        let Some(info) = cluster(p.cluster) else {
            continue;
        };
        t.row(vec![
            m.rings[p.ring].name.clone(),
            info.workspace.clone(),
            info.name.clone(),
            rollouts::shown(p.revision.as_ref()),
            age(p.since, now),
            p.state(),
            p.reason(now),
        ]);
    }
    t.write(out)
}
