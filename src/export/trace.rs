//! `fluxfleet trace KIND NAME`: the chain of every copy of an object across the clusters of a
//! scope — its owners up to what Flux applied, the Kustomizations and HelmReleases that applied
//! it, their sources and revisions — folded by shape, the majority first, with the clusters
//! that do not have it and those not read.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::Filter;
use super::outcome::{Ended, ReadFailed};
use super::workloads::clusters_text;
use crate::fleet::trace::{Asked, Chain, ClusterUnread, Shape, Trace};
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::opening::{fleet, not_live};
use crate::headless::table::safe;
use crate::headless::writing;
use crate::session::Session;
use crate::session::evidence::Gather;
use crate::session::resolve::Sources;
use crate::session::traced::{gather, in_scope};

/// What `trace` was asked.
#[derive(Clone, Debug)]
pub struct TraceQuery {
    pub sources: Sources,
    /// The clusters to look on: workspace and cluster globs.
    pub clusters: Filter,
    pub asked: Asked,
    pub output: Output,
    pub timeout: Duration,
}

/// A trace as `-o json` writes it (and the MCP tool answers).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Traced<'a> {
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    /// Clusters in the scope.
    pub clusters: usize,
    /// The copies found do not share one chain.
    pub diverges: bool,
    pub shapes: Vec<ShapeJson<'a>>,
    pub absent: &'a [String],
    pub unread: &'a [ClusterUnread],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapeJson<'a> {
    pub says: &'a str,
    pub shape: &'a Shape,
    pub clusters: &'a [String],
    /// Each copy's own chain (its owners by their own names).
    pub copies: Vec<CopyJson<'a>>,
}

#[derive(Serialize)]
pub struct CopyJson<'a> {
    pub cluster: &'a str,
    #[serde(flatten)]
    pub chain: &'a Chain,
}

impl<'a> Traced<'a> {
    pub fn of(asked: &'a Asked, trace: &'a Trace) -> Traced<'a> {
        // As the clusters name it (`deployments.apps` is a Deployment), else as known.
        let found = trace
            .shapes
            .iter()
            .flat_map(|g| &g.chains)
            .find_map(|c| c.objects.first())
            .map(|l| l.kind.as_str());
        let known = asked.resource.as_ref().map(|r| r.kind.as_str());
        let kind = found.or(known).unwrap_or(asked.kind.as_str());
        Traced {
            kind,
            namespace: &asked.namespace,
            name: &asked.name,
            clusters: trace.clusters,
            diverges: trace.diverges(),
            shapes: trace
                .shapes
                .iter()
                .map(|g| ShapeJson {
                    says: &g.says,
                    shape: &g.shape,
                    clusters: &g.clusters,
                    copies: g
                        .clusters
                        .iter()
                        .zip(&g.chains)
                        .map(|(cluster, chain)| CopyJson { cluster, chain })
                        .collect(),
                })
                .collect(),
            absent: &trace.absent,
            unread: &trace.unread,
        }
    }
}

/// The fleet opened, every cluster of `scope` read by `read` (a trace, a tree), the clusters not
/// live said, and the fleet closed: what was read, and whether the inventory was clean.
pub(super) async fn read_scope<T, F, Fut>(
    (sources, scope, timeout): (&Sources, &Filter, Duration),
    edge: &dyn Edge,
    read: F,
) -> Result<(T, bool), ReadFailed>
where
    F: FnOnce(crate::session::Reader, Vec<crate::fleet::ClusterInfo>, Gather) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let opened = fleet(sources, edge).await?;
    let (config, clean) = (opened.config, opened.clean);
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    let settled = live.settle(timeout).await;
    let clusters = in_scope(&live.index, scope);
    let how = Gather {
        timeout: timeout.min(Gather::default().timeout),
        ..Gather::default()
    };
    let answer = read(live.reader(), clusters, how).await;
    not_live(&live.index, scope, settled, jiff::Timestamp::now(), edge);
    live.shutdown().await;
    Ok((answer, clean))
}

/// `fluxfleet trace`.
pub async fn trace(request: TraceQuery, edge: Arc<dyn Edge>) -> Result<Ended, ReadFailed> {
    let edge = edge.as_ref();
    let asked = &request.asked;
    let scope = (&request.sources, &request.clusters, request.timeout);
    let (trace, clean) = read_scope(scope, edge, |reader, clusters, how| async move {
        gather(&reader, &clusters, asked, how).await
    })
    .await?;
    let traced = Traced::of(&request.asked, &trace);
    let mut out = io::BufWriter::new(io::stdout());
    let written = match request.output {
        Output::Json => writing::write_json(&mut out, &traced),
        _ => write_table(&traced, &trace, &mut out),
    };
    written.and_then(|()| out.flush())?;
    let nowhere = trace.shapes.is_empty() && trace.clusters > 0;
    Ok(match (clean, trace.unread.is_empty(), trace.diverges()) {
        (false, ..) => Ended::Unclean,
        (true, false, _) => Ended::Incomplete,
        (true, true, _) if nowhere => Ended::Nowhere,
        (true, true, true) => Ended::Diverged,
        (true, true, false) => Ended::Done,
    })
}

fn write_table(traced: &Traced<'_>, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    let found: usize = trace.shapes.iter().map(|g| g.clusters.len()).sum();
    let what = format!(
        "{} {}",
        safe(traced.kind),
        safe(&match traced.namespace.is_empty() {
            true => traced.name.to_string(),
            false => format!("{}/{}", traced.namespace, traced.name),
        })
    );
    let chains = match trace.shapes.len() {
        0 => String::new(),
        1 => ", one chain".to_string(),
        n => format!(", {n} chains"),
    };
    writeln!(
        out,
        "{what}: on {found} of {} clusters{chains}",
        trace.clusters
    )?;
    for (i, g) in trace.shapes.iter().enumerate() {
        let mark = if i == 0 { "" } else { "differs: " };
        writeln!(out)?;
        writeln!(out, "{:>5}  {mark}{}", g.clusters.len(), safe(&g.says))?;
        writeln!(out, "       {}", clusters_text(&g.clusters))?;
    }
    if !trace.absent.is_empty() {
        writeln!(
            out,
            "\nnot on {} clusters: {}",
            trace.absent.len(),
            clusters_text(&trace.absent)
        )?;
    }
    for u in &trace.unread {
        writeln!(
            out,
            "\nnot read on {}: {}",
            safe(&u.cluster),
            safe(&u.error.to_string())
        )?;
    }
    Ok(())
}
