//! What broke inside a Kustomization or HelmRelease: its workloads' verdicts folded across the
//! clusters read — each line with its count, its rollout, its clusters, the reads it misses, its
//! newest Warning events and the log tail that explains it — then the clusters not read. Drawn
//! in the detail view's lower pane (one cluster) and as a view of its own (a triage group).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::model::{Fetched, Model};
use crate::config::theme::{Slot, Theme};
use crate::fleet::ObjectKey;
use crate::fleet::workload::fold::{Folded, Line as Verdict, ReadFailure};
use crate::fleet::workload::visible;

/// Events shown per line (the JSON of `fluxfleet workloads` has them all).
const EVENTS_SHOWN: usize = 3;
/// Clusters named per line before "and N more".
const CLUSTERS_SHOWN: usize = 6;

/// `text` from a cluster, shown as it is but with its controls and tabs made visible.
fn shown(text: &str) -> String {
    visible(&text.replace('\t', "    ")).replace('\n', " ")
}

fn clusters(names: &[String]) -> String {
    let mut out = names
        .iter()
        .take(CLUSTERS_SHOWN)
        .map(|n| shown(n))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > CLUSTERS_SHOWN {
        out.push_str(&format!(" and {} more", names.len() - CLUSTERS_SHOWN));
    }
    out
}

/// The folded evidence as lines of text.
pub fn lines(folded: &Folded, theme: &Theme) -> Vec<Line<'static>> {
    items(folded, theme).0
}

/// The lines, and where each workload's verdict is (the items `T` picks from).
fn items(folded: &Folded, theme: &Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let dim = theme.style(Slot::Dim);
    let mut starts = Vec::with_capacity(folded.lines.len());
    let mut out = vec![Line::from(Span::styled(
        format!(
            "{} of {} read, {} requests",
            folded.read,
            crate::units::count(folded.clusters, "cluster", "clusters"),
            folded.requests
        ),
        dim,
    ))];
    if folded.lines.is_empty() && folded.read > 0 {
        out.push(Line::from(Span::styled(
            "no workload found: its inventory names none, and nothing is labelled as its own",
            dim,
        )));
    }
    for line in &folded.lines {
        out.push(Line::default());
        starts.push(out.len());
        out.extend(verdict(line, theme));
    }
    for n in &folded.not_read {
        out.push(Line::default());
        out.push(not_read(n, "not read", theme));
    }
    (out, starts)
}

fn not_read(n: &ReadFailure, what: &str, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!("{what} on {}: {} ", n.clusters.len(), shown(&n.why)),
            theme.style(Slot::Warning),
        ),
        Span::styled(
            format!("({}): {}", clusters(&n.clusters), shown(&n.detail)),
            theme.style(Slot::Dim),
        ),
    ])
}

fn verdict(line: &Verdict, theme: &Theme) -> Vec<Line<'static>> {
    let (dim, text) = (theme.style(Slot::Dim), theme.style(Slot::Text));
    let healthy = line.verdict.healthy();
    let slot = if healthy { Slot::Text } else { Slot::Error };
    let mut out = vec![Line::from(vec![
        Span::styled(
            format!("{:>5}  ", line.clusters.len()),
            theme.style(Slot::Header),
        ),
        Span::styled(format!("{}  ", shown(&line.workload.to_string())), text),
        Span::styled(shown(&line.headline), theme.style(slot)),
    ])];
    let indent = "       ";
    let fact = |out: &mut Vec<Line<'static>>, label: &str, value: String, style| {
        out.push(Line::from(vec![
            Span::styled(format!("{indent}{label:<10}"), dim),
            Span::styled(value, style),
        ]));
    };
    if let Some(rollout) = line.verdict.rollout() {
        fact(&mut out, "replicas", rollout, text);
    }
    fact(&mut out, "clusters", clusters(&line.clusters), text);
    if healthy {
        return out;
    }
    if line.facts.pods_total > 0 {
        let cut = if line.facts.pods_cut { "+" } else { "" };
        fact(
            &mut out,
            "pods",
            format!(
                "{} shown of {}{cut}, worst first: {}",
                line.facts.pods.len(),
                line.facts.pods_total,
                line.facts
                    .pods
                    .iter()
                    .take(3)
                    .map(|p| shown(&p.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            text,
        );
    }
    for e in line.facts.events.iter().take(EVENTS_SHOWN) {
        let count = if e.count > 1 {
            format!(" ×{}", e.count)
        } else {
            String::new()
        };
        fact(
            &mut out,
            "event",
            format!("{}{count}: {}", shown(&e.reason), shown(&e.message)),
            text,
        );
    }
    for n in &line.not_read {
        fact(
            &mut out,
            "not read",
            format!(
                "{} on {}: {}",
                shown(&n.why),
                n.clusters.len(),
                clusters(&n.clusters)
            ),
            theme.style(Slot::Warning),
        );
    }
    if let Some(log) = line.verdict.log.as_ref()
        && let Some(empty) = log.empty.filter(|_| log.lines.is_empty())
    {
        let which = if log.previous { "previous" } else { "current" };
        out.push(Line::from(Span::styled(
            format!(
                "{indent}log of the {which} instance, on {}: {empty}",
                shown(&line.from)
            ),
            dim,
        )));
    }
    if let Some(log) = line.verdict.log.as_ref().filter(|l| !l.lines.is_empty()) {
        let which = if log.previous { "previous" } else { "current" };
        let on = shown(&line.from);
        out.push(Line::from(Span::styled(
            format!("{indent}log of the {which} instance, on {on}:"),
            dim,
        )));
        for l in &log.lines {
            out.push(Line::from(Span::styled(
                format!("{indent}│ {}", shown(l)),
                text,
            )));
        }
        if log.cut {
            out.push(Line::from(Span::styled(
                format!("{indent}│ … cut at 16 KiB"),
                dim,
            )));
        }
    }
    out
}

/// What the view shows: the evidence, or that it is being read.
fn shown_lines(fetched: Option<&Fetched>, theme: &Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    match fetched {
        Some(Fetched::Workloads(folded)) => items(folded, theme),
        _ => (
            vec![Line::from(Span::styled(
                "reading its workloads, pods, events and logs from the clusters…",
                theme.style(Slot::Dim),
            ))],
            Vec::new(),
        ),
    }
}

/// `w` on a triage group: the evidence from all its clusters.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    key: &ObjectKey,
    count: usize,
) {
    let title = format!(
        " what broke inside {} {}/{} · {} ",
        key.kind,
        key.namespace,
        key.name,
        crate::units::count(count, "cluster", "clusters")
    );
    let lines = shown_lines(model.reads().fetched(), theme);
    super::widgets::picked_view(frame, area, model, theme, (title, lines));
}

/// How far the view can scroll at this size.
pub fn max_scroll(model: &Model, theme: &Theme, area: Rect) -> usize {
    super::widgets::overflow(shown_lines(model.reads().fetched(), theme).0, area)
}
