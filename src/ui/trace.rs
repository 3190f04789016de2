//! `T`: where an object comes from on every cluster — each chain the copies have, the most
//! clusters first, its clusters under it; the clusters without it and those not read.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::model::{Fetched, Model};
use crate::config::theme::{Slot, Theme};
use crate::fleet::trace::{Asked, Trace};
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
    let dim = theme.style(Slot::Dim);
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
        out.push(Line::from(vec![
            Span::styled(format!("{:>5}  {mark}", group.clusters.len()), style),
            Span::raw(visible(&group.says).into_owned()),
        ]));
        out.push(Line::from(Span::styled(
            format!("       {}", clusters(&group.clusters)),
            dim,
        )));
    }
    if !trace.absent.is_empty() {
        out.push(Line::from(""));
        out.push(Line::from(Span::styled(
            format!(
                "not on {} clusters: {}",
                trace.absent.len(),
                clusters(&trace.absent)
            ),
            dim,
        )));
    }
    for u in &trace.unread {
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

fn shown_lines(fetched: Option<&Fetched>, theme: &Theme) -> Vec<Line<'static>> {
    match fetched {
        Some(Fetched::Trace(trace)) => lines(trace, theme),
        _ => vec![Line::from(Span::styled(
            "reading its chain from every cluster…",
            theme.style(Slot::Dim),
        ))],
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
    let lines = shown_lines(model.reads.fetched.as_ref(), theme);
    super::widgets::fetched_view(frame, area, model, theme, (title, lines));
}

/// How far the view can scroll at this size.
pub fn max_scroll(model: &Model, theme: &Theme, area: Rect) -> usize {
    super::widgets::overflow(shown_lines(model.reads.fetched.as_ref(), theme), area)
}
