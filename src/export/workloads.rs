//! `fluxfleet workloads KIND NAME`: what broke inside a Kustomization or HelmRelease, on every
//! cluster in the scope where it is not ready (with `--all`, everywhere it is) — its workloads'
//! verdicts folded across those clusters, with the clusters not read and why.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::outcome::{Ended, Misuse, ReadFailed};
use super::{Filter, output};
use crate::fleet::workload::fold::{Folded, Line};
use crate::fleet::workload::visible;
use crate::fleet::{ClusterInfo, FluxKind, Index, ObjectKey};
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::opening::{fleet, incomplete, not_live};
use crate::headless::table::{Table, safe};
use crate::headless::writing;
use crate::session::Session;
use crate::session::evidence::{Gather, gather};
use crate::session::resolve::Sources;

/// What `workloads` was asked.
#[derive(Clone, Debug)]
pub struct WorkloadsQuery {
    pub sources: Sources,
    /// Kind and name (required), namespace, workspace and cluster globs.
    pub filter: Filter,
    /// Every cluster that has the object, not only where it is not ready.
    pub all: bool,
    pub output: Output,
    pub timeout: Duration,
}

/// One Flux object's evidence, as `-o json` writes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectEvidence {
    pub kind: FluxKind,
    pub namespace: String,
    pub name: String,
    #[serde(flatten)]
    pub folded: Folded,
}

#[derive(Serialize)]
struct Json<'a> {
    objects: &'a [ObjectEvidence],
}

/// The clusters of the scope that hold each object the filter names (kind and name; any
/// namespace unless it names one): where it is not ready, or everywhere with `all`.
pub fn targets(index: &Index, filter: &Filter, all: bool) -> Vec<(ObjectKey, Vec<ClusterInfo>)> {
    let mut out: Vec<(ObjectKey, Vec<ClusterInfo>)> = Vec::new();
    for (cluster, object) in output::selected(index, filter) {
        if !all && !object.health.is_not_ready() {
            continue;
        }
        match out.iter_mut().find(|(k, _)| *k == object.key) {
            Some((_, clusters)) => clusters.push((*cluster.info).clone()),
            None => out.push((object.key.clone(), vec![(*cluster.info).clone()])),
        }
    }
    out
}

/// `fluxfleet workloads`.
pub async fn workloads(request: WorkloadsQuery, edge: Arc<dyn Edge>) -> Result<Ended, ReadFailed> {
    let edge = edge.as_ref();
    let filter = &request.filter;
    let (Some(kind), Some(_)) = (filter.kind, &filter.name) else {
        return Err(Misuse::WorkloadsUnnamed.into());
    };
    if !matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease) {
        return Err(Misuse::NoWorkloads(kind).into());
    }
    let opened = fleet(&request.sources, edge).await?;
    let (config, clean) = (opened.config, opened.clean);
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    let settled = live.settle(request.timeout).await;
    let reader = live.reader();
    let mut found = Vec::new();
    for (key, clusters) in targets(&live.index, filter, request.all) {
        let how = Gather {
            timeout: request.timeout.min(Gather::default().timeout),
            ..Gather::default()
        };
        let folded = gather(&reader, &clusters, &key, how).await;
        found.push(ObjectEvidence {
            kind: key.kind,
            namespace: key.namespace.to_string(),
            name: key.name.to_string(),
            folded,
        });
    }
    not_live(&live.index, filter, settled, jiff::Timestamp::now(), edge);
    let incomplete = incomplete(&live.index, filter);
    live.shutdown().await;
    let mut out = io::BufWriter::new(io::stdout());
    let written = match request.output {
        Output::Json => writing::write_json(&mut out, &Json { objects: &found }),
        _ => write_table(&found, request.all, &mut out),
    };
    written.and_then(|()| out.flush())?;
    let unread = found.iter().any(|o| o.folded.read < o.folded.clusters);
    Ok(Ended::written(clean, unread || incomplete))
}

/// The clusters of a line, the first few by name.
pub fn clusters_text(clusters: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut out = clusters
        .iter()
        .take(SHOWN)
        .map(|c| safe(c).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    if clusters.len() > SHOWN {
        out.push_str(&format!(" and {} more", clusters.len() - SHOWN));
    }
    out
}

fn write_table(found: &[ObjectEvidence], all: bool, out: &mut dyn Write) -> io::Result<()> {
    if found.is_empty() {
        let where_ = if all { "" } else { " not ready" };
        return writeln!(out, "no cluster in the scope has it{where_}");
    }
    for (i, o) in found.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let f = &o.folded;
        writeln!(
            out,
            "{} {}/{}: {} of {} clusters read, {} requests",
            o.kind,
            safe(&o.namespace),
            safe(&o.name),
            f.read,
            f.clusters,
            f.requests
        )?;
        let mut table = Table::new(vec!["CLUSTERS", "WORKLOAD", "VERDICT"]);
        for line in &f.lines {
            table.row(vec![
                line.clusters.len().to_string(),
                safe(&line.workload.to_string()).into_owned(),
                safe(&line.headline).into_owned(),
            ]);
        }
        writeln!(out)?;
        table.write(out)?;
        for line in f.lines.iter().filter(|l| !l.verdict.healthy()) {
            write_line(line, out)?;
        }
        for n in &f.not_read {
            writeln!(
                out,
                "\nnot read on {}: {} ({}): {}",
                n.clusters.len(),
                safe(&n.why),
                clusters_text(&n.clusters),
                safe(&n.detail)
            )?;
        }
    }
    Ok(())
}

/// A failing line's facts: its rollout, clusters, reads missing and its log tail.
fn write_line(line: &Line, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\n{} on {}: {}",
        safe(&line.workload.to_string()),
        crate::units::count(line.clusters.len(), "cluster", "clusters"),
        safe(&line.headline)
    )?;
    if let Some(rollout) = line.verdict.rollout() {
        writeln!(out, "  replicas: {rollout}")?;
    }
    writeln!(out, "  clusters: {}", clusters_text(&line.clusters))?;
    for n in &line.not_read {
        writeln!(
            out,
            "  {} on {}: {}",
            safe(&n.why),
            crate::units::count(n.clusters.len(), "cluster", "clusters"),
            clusters_text(&n.clusters)
        )?;
        // What the API server said, on the first of them (kubectl's `Error from server`).
        if let Some(first) = n.clusters.first() {
            writeln!(out, "    {}: {}", safe(first), safe(&n.detail))?;
        }
    }
    if let Some(log) = line.verdict.log.as_ref()
        && let Some(empty) = log.empty.filter(|_| log.lines.is_empty())
    {
        let which = match log.previous {
            true => "previous instance",
            false => "current instance",
        };
        writeln!(out, "  log ({which}, on {}): {empty}", safe(&line.from))?;
    }
    if let Some(log) = line.verdict.log.as_ref().filter(|l| !l.lines.is_empty()) {
        let which = if log.previous {
            "previous instance"
        } else {
            "current instance"
        };
        writeln!(out, "  log ({which}, on {}):", safe(&line.from))?;
        for l in &log.lines {
            writeln!(out, "    {}", safe(&visible(&l.replace('\t', "    "))))?;
        }
        if log.cut {
            writeln!(
                out,
                "    … (cut at {} bytes)",
                crate::fleet::workload::limits::LOG_BYTES
            )?;
        }
    }
    Ok(())
}
