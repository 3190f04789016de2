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
    let lines: Vec<Line> = match &model.audit {
        None => vec![Line::from(Span::styled(
            "reading the journal…",
            theme.style(Slot::Dim),
        ))],
        Some(Err(e)) => vec![Line::from(Span::styled(
            e.clone(),
            theme.style(Slot::Error),
        ))],
        Some(Ok(entries)) if entries.is_empty() => vec![Line::from(Span::styled(
            "no action has been journaled yet",
            theme.style(Slot::Dim),
        ))],
        Some(Ok(entries)) => {
            let parsed: Vec<(&String, Option<Value>)> = entries
                .iter()
                .map(|raw| (raw, serde_json::from_str::<Value>(raw).ok()))
                .collect();
            // An attempt is two lines, its intent and its outcomes: show the outcomes, and an
            // intent alone only when its outcomes never came.
            let token = |v: &Value| v.get("token").and_then(Value::as_str).map(str::to_string);
            let is_intent = |v: &Value| v.get("stage").and_then(Value::as_str) == Some("intent");
            let ended: std::collections::HashSet<String> = parsed
                .iter()
                .filter_map(|(_, v)| v.as_ref().filter(|v| !is_intent(v)).and_then(token))
                .collect();
            parsed
                .iter()
                .filter(|(_, v)| {
                    v.as_ref().is_none_or(|v| {
                        !is_intent(v) || token(v).is_none_or(|t| !ended.contains(&t))
                    })
                })
                .skip(model.fetched_scroll)
                .take(usize::from(area.height))
                .map(|(raw, v)| match v {
                    Some(v) => summary(v, theme),
                    None => Line::from(Span::styled((*raw).clone(), text)),
                })
                .collect()
        }
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
    if v.get("stage").and_then(Value::as_str) == Some("intent") {
        return Line::from(vec![
            Span::styled(format!("{} ", s("time")), theme.style(Slot::Dim)),
            Span::styled(format!("{} ", s("user")), theme.style(Slot::Header)),
            Span::styled(format!("{} ", s("action")), theme.style(Slot::Title)),
            Span::styled(
                format!(
                    "{total} objects: no outcome recorded — still running, or interrupted{reason}"
                ),
                theme.style(Slot::Warning),
            ),
        ]);
    }
    let slot = if outcomes.iter().all(|o| o.ends_with(" done")) {
        Slot::Text
    } else {
        Slot::Warning
    };
    Line::from(vec![
        Span::styled(format!("{} ", s("time")), theme.style(Slot::Dim)),
        Span::styled(format!("{} ", s("user")), theme.style(Slot::Header)),
        Span::styled(format!("{} ", s("action")), theme.style(Slot::Title)),
        Span::styled(
            format!("{total} objects: {}{reason}", outcomes.join(", ")),
            theme.style(slot),
        ),
    ])
}
