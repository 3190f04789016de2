//! `:audit`: the journal of actions, newest first, one line per attempt.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};
use serde_json::Value;

use crate::app::model::Model;
use crate::config::theme::{Slot, Theme};

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let text = theme.style(Slot::Text);
    let lines: Vec<Line> = match model.reads().audit() {
        None => vec![Line::from(Span::styled(
            "reading the journal…",
            theme.style(Slot::Dim),
        ))],
        Some(Err(e)) => vec![Line::from(Span::styled(
            e.to_string(),
            theme.style(Slot::Error),
        ))],
        Some(Ok(entries)) if entries.is_empty() => vec![Line::from(Span::styled(
            "no action has been journaled yet",
            theme.style(Slot::Dim),
        ))],
        // One line per attempt already (paired when the journal was read): only the visible
        // ones are parsed.
        Some(Ok(entries)) => entries
            .iter()
            .skip(model.reads().fetched_scroll())
            .take(usize::from(area.height))
            .map(|raw| match serde_json::from_str::<Value>(raw) {
                Ok(v) => summary(&v, theme),
                Err(_) => Line::from(Span::styled(raw.clone(), text)),
            })
            .collect(),
    };
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Slot::BorderFocused))
        .title(Span::styled(
            " audit journal, newest first ",
            theme.style(Slot::Title),
        ));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `2026-11-21T10:00:00Z alice suspend 50 objects: 50 done — reason: flapping`
fn summary(v: &Value, theme: &Theme) -> Line<'static> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("-").to_string();
    let targets = v.get("targets").and_then(Value::as_array);
    let total = targets.map_or(0, Vec::len);
    let mut outcomes: Vec<(String, usize)> = Vec::new();
    for t in targets.into_iter().flatten() {
        let o = t
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        match outcomes.iter_mut().find(|(name, _)| *name == o) {
            Some((_, n)) => *n += 1,
            None => outcomes.push((o, 1)),
        }
    }
    let outcomes: Vec<String> = outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
    let reason = v
        .get("reason")
        .and_then(Value::as_str)
        .map(|r| format!(" — reason: {r}"))
        .unwrap_or_default();
    let (what, slot) = if v.get("stage").and_then(Value::as_str) == Some("intent") {
        (
            "no outcome recorded — still running, or interrupted".to_string(),
            Slot::Warning,
        )
    } else if outcomes.iter().all(|o| o.ends_with(" done")) {
        (outcomes.join(", "), Slot::Text)
    } else {
        (outcomes.join(", "), Slot::Warning)
    };
    // A plugin's run: which plugin, where, and how it exited.
    let (action, what) = if s("action") == "plugin" {
        let target = targets.and_then(|t| t.first());
        let field = |k: &str| {
            target
                .and_then(|t| t.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let object = match field("kind").as_str() {
            "" => String::new(),
            kind => format!("{kind} {}/{} on ", field("namespace"), field("name")),
        };
        let ended = match field("message").as_str() {
            "" => what,
            message => message.to_string(),
        };
        (
            format!("plugin {}", s("plugin")),
            format!("{object}{}: {ended}", field("cluster")),
        )
    } else {
        (s("action"), format!("{total} objects: {what}{reason}"))
    };
    Line::from(vec![
        Span::styled(format!("{} ", s("time")), theme.style(Slot::Dim)),
        Span::styled(format!("{} ", s("user")), theme.style(Slot::Header)),
        Span::styled(format!("{action} "), theme.style(Slot::Title)),
        Span::styled(what, theme.style(slot)),
    ])
}
