//! `fluxfleet tree ks|hr NAME`: what a Kustomization or HelmRelease put on every cluster of a
//! scope, as `flux tree` draws it on one — its inventory, the Kustomizations and HelmReleases in
//! it followed down — the clusters' trees folded into one, per node on how many clusters and
//! ready on how many, the nodes some clusters lack named with those clusters.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::Filter;
use super::outcome::{Ended, ReadFailed};
use super::trace::read_scope;
use super::workloads::clusters_text;
use crate::fleet::ObjectKey;
use crate::fleet::trace::ClusterUnread;
use crate::fleet::tree::{Node, Tree, drawn};
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::table::safe;
use crate::headless::writing;
use crate::session::resolve::Sources;
use crate::session::traced::grow;

/// What `tree` was asked.
#[derive(Clone, Debug)]
pub struct TreeQuery {
    pub sources: Sources,
    /// The clusters to look on: workspace and cluster globs.
    pub clusters: Filter,
    /// The Kustomization or HelmRelease.
    pub root: ObjectKey,
    pub output: Output,
    pub timeout: Duration,
}

/// A tree as `-o json` writes it (and the MCP tool answers, its nodes a page at a time).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Grown<'a> {
    pub kind: &'static str,
    pub namespace: &'a str,
    pub name: &'a str,
    /// Clusters in the scope.
    pub clusters: usize,
    /// Clusters that have it.
    pub found: usize,
    /// Some node is not on every cluster that has the root.
    pub differs: bool,
    pub nodes: &'a [Node],
    pub absent: &'a [String],
    pub unread: &'a [ClusterUnread],
}

impl<'a> Grown<'a> {
    pub fn of(root: &'a ObjectKey, tree: &'a Tree) -> Grown<'a> {
        Grown {
            kind: root.kind.as_str(),
            namespace: &root.namespace,
            name: &root.name,
            clusters: tree.clusters,
            found: tree.found.len(),
            differs: tree.differs(),
            nodes: &tree.nodes,
            absent: &tree.absent,
            unread: &tree.unread,
        }
    }
}

/// `fluxfleet tree`.
pub async fn tree(request: TreeQuery, edge: Arc<dyn Edge>) -> Result<Ended, ReadFailed> {
    let edge = edge.as_ref();
    let root = &request.root;
    let scope = (&request.sources, &request.clusters, request.timeout);
    let (tree, clean) = read_scope(scope, edge, |reader, clusters, how| async move {
        grow(&reader, &clusters, root, how).await
    })
    .await?;
    let mut out = io::BufWriter::new(io::stdout());
    let written = match request.output {
        Output::Json => writing::write_json(&mut out, &Grown::of(&request.root, &tree)),
        _ => write_table(&request.root, &tree, &mut out),
    };
    written.and_then(|()| out.flush())?;
    let nowhere = tree.found.is_empty() && tree.clusters > 0;
    Ok(match (clean, tree.unread.is_empty(), tree.differs()) {
        (false, ..) => Ended::Unclean,
        (true, false, _) => Ended::Incomplete,
        (true, true, _) if nowhere => Ended::Nowhere,
        (true, true, true) => Ended::Diverged,
        (true, true, false) => Ended::Done,
    })
}

/// The tree as `flux tree` draws it, each node with its clusters: `on 18 of 20` where some
/// clusters lack it (and which), `ready 17` for a Flux object.
pub fn write_table(root: &ObjectKey, tree: &Tree, out: &mut dyn Write) -> io::Result<()> {
    let found = tree.found.len();
    writeln!(
        out,
        "{}: on {found} of {} clusters",
        safe(&crate::fleet::tree::Entry::of(root).path()),
        tree.clusters
    )?;
    let drawn: Vec<String> = drawn(&tree.nodes)
        .into_iter()
        .map(|d| safe(&d).into_owned())
        .collect();
    let width = drawn.iter().map(|d| d.chars().count()).max().unwrap_or(0);
    for (node, line) in tree.nodes.iter().zip(&drawn) {
        let pad = width - line.chars().count();
        let mut text = format!("{line}{:pad$}  ", "");
        text.push_str(&match node.on == found {
            true => format!("on {:<6}", node.on),
            false => format!("on {} of {found}", node.on),
        });
        if let Some(ready) = node.ready {
            text.push_str(&format!("  ready {ready}"));
        }
        writeln!(out, "{}", text.trim_end())?;
        let indent = " ".repeat(width + 2);
        if !node.without.is_empty() {
            writeln!(out, "{indent}not on {}", clusters_text(&node.without))?;
        }
        if !node.missing.is_empty() {
            let missing = clusters_text(&node.missing);
            writeln!(out, "{indent}named but not found on {missing}")?;
        }
        for (cluster, stop) in &node.stopped {
            writeln!(out, "{indent}not followed on {}: {stop:?}", safe(cluster))?;
        }
    }
    if !tree.absent.is_empty() {
        let absent = clusters_text(&tree.absent);
        writeln!(out, "\nnot on {} clusters: {absent}", tree.absent.len())?;
    }
    for u in &tree.unread {
        writeln!(
            out,
            "\nnot read on {}: {}",
            safe(&u.cluster),
            safe(&u.error.to_string())
        )?;
    }
    Ok(())
}
