//! `:history [2h]`: what changed in the scope since then, newest first, from the collectors'
//! history — a cluster's connection, an object's health and revision, deletions; on a fleet
//! read from kubeconfigs, what this session saw since it started.

use jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use crate::app::model::{ListScope, Model};
use crate::config::theme::{Slot, Theme};
use crate::fleet::history::RecordedChange;

/// The changes of `scope`, newest first.
pub fn in_scope(model: &Model, scope: ListScope) -> Vec<&RecordedChange> {
    let Some(Ok(changes)) = model.reads().history() else {
        return Vec::new();
    };
    let index = model.index();
    let workspace = match scope {
        ListScope::Workspace(w) => index.workspace(w).map(|w| w.name.as_str()),
        _ => None,
    };
    let cluster = match scope {
        ListScope::Cluster(c) => index.cluster(c).map(|c| c.info.name.as_str()),
        _ => None,
    };
    changes
        .iter()
        .rev()
        .filter(|c| workspace.is_none_or(|w| c.workspace == w))
        .filter(|c| cluster.is_none_or(|n| c.cluster == n))
        .collect()
}

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    scope: ListScope,
    since: Timestamp,
) {
    let dim = theme.style(Slot::Dim);
    let lines: Vec<Line> = match model.reads().history() {
        None => vec![Line::from(Span::styled("reading the history…", dim))],
        Some(Err(e)) => vec![Line::from(Span::styled(
            e.to_string(),
            theme.style(Slot::Error),
        ))],
        Some(Ok(_)) => {
            let changes = in_scope(model, scope);
            if changes.is_empty() {
                vec![Line::from(Span::styled(
                    "nothing changed in this scope since then",
                    dim,
                ))]
            } else {
                changes
                    .into_iter()
                    .skip(model.reads().fetched_scroll())
                    .take(usize::from(area.height))
                    .map(|c| line(c, model.now(), theme))
                    .collect()
            }
        }
    };
    let started = model
        .recorded()
        .started()
        .filter(|_| model.reads().history_own());
    let title = match started {
        // From kubeconfigs: what this session saw, since it started when that is later.
        Some(started) if started > since => format!(
            " what this session saw since it started {} ago, newest first ",
            crate::units::age(Some(started), model.now())
        ),
        _ => format!(
            " history since {} ago, newest first ",
            crate::units::age(Some(since), model.now())
        ),
    };
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Slot::BorderFocused))
        .title(Span::styled(title, theme.style(Slot::Title)));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `5m  payments  prod-eu-1  Kustomization flux-system/apps  health ready → failed  message`
fn line(c: &RecordedChange, now: Timestamp, theme: &Theme) -> Line<'static> {
    let slot = match c.to.as_deref() {
        Some("ready" | "live") => Slot::Text,
        _ if c.what == "revision" => Slot::Text,
        _ => Slot::Warning,
    };
    let change = match (&c.from, &c.to) {
        (Some(from), Some(to)) => format!("{} {from} → {to}", c.what),
        (None, Some(to)) => format!("{} → {to}", c.what),
        _ => c.what.clone(),
    };
    let mut spans = vec![
        Span::styled(
            format!("{:>5}  ", crate::units::age(Some(c.at), now)),
            theme.style(Slot::Dim),
        ),
        Span::styled(format!("{}  ", c.workspace), theme.style(Slot::Dim)),
        Span::styled(format!("{}  ", c.cluster), theme.style(Slot::Header)),
        Span::styled(format!("{}  ", c.object()), theme.style(Slot::Text)),
        Span::styled(change, theme.style(slot)),
    ];
    if let Some(message) = &c.message {
        spans.push(Span::styled(format!("  {message}"), theme.style(Slot::Dim)));
    }
    Line::from(spans)
}
