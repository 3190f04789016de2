//! `T`: where an object comes from on every cluster — each chain the copies have, the most
//! clusters first, its clusters under it; the clusters without it and those not read. `i`: a
//! Kustomization's or HelmRelease's tree on every cluster, folded into one.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::model::{Fetched, Model};
use crate::config::theme::{Slot, Theme};
use crate::fleet::ObjectKey;
use crate::fleet::trace::{Asked, ClusterUnread, Trace};
use crate::fleet::tree::{Tree, drawn};
use crate::fleet::workload::visible;

/// The clusters named under a chain, at most; the rest counted.
const NAMED: usize = 12;

fn clusters(names: &[String]) -> String {
    let mut out = names
        .iter()
        .take(NAMED)
        .map(|n| visible(n).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMED {
        out.push_str(&format!(" and {} more", names.len() - NAMED));
    }
    out
}

pub fn lines(trace: &Trace, theme: &Theme) -> Vec<Line<'static>> {
    items(trace, theme).0
}

/// A trace's lines, and where each chain's is (the items `enter` picks from).
fn items(trace: &Trace, theme: &Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let dim = theme.style(Slot::Dim);
    let mut starts = Vec::with_capacity(trace.shapes.len());
    let found: usize = trace.shapes.iter().map(|g| g.clusters.len()).sum();
    let mut out = vec![Line::from(format!(
        "on {found} of {} clusters{}",
        trace.clusters,
        match trace.shapes.len() {
            0 | 1 => String::new(),
            n => format!(" — {n} chains: the copies differ"),
        }
    ))];
    for (i, group) in trace.shapes.iter().enumerate() {
        out.push(Line::from(""));
        let style = match (i, group.shape.managed()) {
            (0, true) => theme.style(Slot::Ready),
            (_, false) => theme.style(Slot::Failed),
            _ => theme.style(Slot::Warning),
        };
        let mark = if i == 0 { "" } else { "differs: " };
        starts.push(out.len());
        out.push(Line::from(vec![
            Span::styled(format!("{:>5}  {mark}", group.clusters.len()), style),
            Span::raw(visible(&group.says).into_owned()),
        ]));
        out.push(Line::from(Span::styled(
            format!("       {}", clusters(&group.clusters)),
            dim,
        )));
    }
    out.extend(elsewhere(&trace.absent, &trace.unread, theme));
    (out, starts)
}

/// The clusters without the object, and those not read with why.
fn elsewhere(absent: &[String], unread: &[ClusterUnread], theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if !absent.is_empty() {
        out.push(Line::from(""));
        out.push(Line::from(Span::styled(
            format!("not on {} clusters: {}", absent.len(), clusters(absent)),
            theme.style(Slot::Dim),
        )));
    }
    for u in unread {
        out.push(Line::from(Span::styled(
            format!(
                "not read on {}: {}",
                visible(&u.cluster),
                visible(&u.error.to_string())
            ),
            theme.style(Slot::Warning),
        )));
    }
    out
}

fn shown_lines(fetched: Option<&Fetched>, theme: &Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    match fetched {
        Some(Fetched::Trace(trace)) => items(trace, theme),
        _ => (
            vec![Line::from(Span::styled(
                "reading its chain from every cluster…",
                theme.style(Slot::Dim),
            ))],
            Vec::new(),
        ),
    }
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, asked: &Asked) {
    let what = match asked.namespace.is_empty() {
        true => asked.name.clone(),
        false => format!("{}/{}", asked.namespace, asked.name),
    };
    let title = format!(
        " where {} {} comes from ",
        visible(&asked.kind),
        visible(&what)
    );
    let shown = shown_lines(model.reads().fetched(), theme);
    super::widgets::picked_view(frame, area, model, theme, (title, shown));
}

/// How far the view can scroll at this size.
pub fn max_scroll(model: &Model, theme: &Theme, area: Rect) -> usize {
    super::widgets::overflow(shown_lines(model.reads().fetched(), theme).0, area)
}

/// `i`: a tree's lines, as `fluxfleet tree` prints them: the nodes drawn as `flux tree` draws
/// them, each with its clusters and, for a Flux object, how many hold it ready.
pub fn tree_lines(tree: &Tree, theme: &Theme) -> Vec<Line<'static>> {
    tree_items(tree, theme).0
}

/// A tree's lines, and where each node's is.
fn tree_items(tree: &Tree, theme: &Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let (dim, found) = (theme.style(Slot::Dim), tree.found.len());
    let mut starts = Vec::with_capacity(tree.nodes.len());
    let mut out = vec![Line::from(format!(
        "on {found} of {} clusters{}",
        tree.clusters,
        if tree.differs() {
            " — the clusters' trees differ"
        } else {
            ""
        }
    ))];
    out.push(Line::from(""));
    for (node, drawn) in tree.nodes.iter().zip(drawn(&tree.nodes)) {
        let on = match node.on == found {
            true => Span::styled(format!("  on {}", node.on), dim),
            false => Span::styled(
                format!("  on {} of {found}", node.on),
                theme.style(Slot::Warning),
            ),
        };
        let mut spans = vec![Span::raw(visible(&drawn).into_owned()), on];
        if let Some(ready) = node.ready {
            let style = match ready == node.on {
                true => theme.style(Slot::Ready),
                false => theme.style(Slot::Failed),
            };
            spans.push(Span::styled(format!("  ready {ready}"), style));
        }
        starts.push(out.len());
        out.push(Line::from(spans));
        if !node.without.is_empty() {
            out.push(Line::from(Span::styled(
                format!("      not on {}", clusters(&node.without)),
                dim,
            )));
        }
        if !node.missing.is_empty() {
            out.push(Line::from(Span::styled(
                format!("      named but not found on {}", clusters(&node.missing)),
                theme.style(Slot::Warning),
            )));
        }
    }
    out.extend(elsewhere(&tree.absent, &tree.unread, theme));
    (out, starts)
}

fn tree_shown(fetched: Option<&Fetched>, theme: &Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    match fetched {
        Some(Fetched::Tree(tree)) => tree_items(tree, theme),
        _ => (
            vec![Line::from(Span::styled(
                "reading its tree from every cluster…",
                theme.style(Slot::Dim),
            ))],
            Vec::new(),
        ),
    }
}

pub fn draw_tree(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, root: &ObjectKey) {
    let title = format!(
        " tree of {} {}/{} ",
        root.kind,
        visible(&root.namespace),
        visible(&root.name)
    );
    let shown = tree_shown(model.reads().fetched(), theme);
    super::widgets::picked_view(frame, area, model, theme, (title, shown));
}

/// How far the tree view can scroll at this size.
pub fn tree_max_scroll(model: &Model, theme: &Theme, area: Rect) -> usize {
    super::widgets::overflow(tree_shown(model.reads().fetched(), theme).0, area)
}
