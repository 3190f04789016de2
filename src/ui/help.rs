//! The keys of a view, generated from the keymap in effect: what the help says is what the keys do.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use crate::app::keymap::Context;
use crate::app::model::Model;
use crate::config::theme::{Slot, Theme};

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, of: Context) {
    let mut lines = Vec::new();
    for (action, keys) in model.keymap().effective(of) {
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<18}", keys.join(" ")), theme.style(Slot::Key)),
            Span::styled(action.describe(), theme.style(Slot::Text)),
        ]));
    }
    plugins(&mut lines, model, theme, of);
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "  keys come from [keymap] and [[plugins]] in the config file; ? or esc closes this",
        theme.style(Slot::Dim),
    )));
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Slot::BorderFocused))
        .title(Span::styled(
            format!(" keys: {} view ", of.name()),
            theme.style(Slot::Title),
        ));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The plugins of view `of`: bound ones with their keys, marked when they write; those whose
/// program is not on PATH, so the user knows why their key does nothing.
fn plugins(lines: &mut Vec<Line<'static>>, model: &Model, theme: &Theme, of: Context) {
    let bound = model.keymap().plugins_in(of);
    let missing: Vec<_> = model
        .settings()
        .plugins
        .iter()
        .filter(|p| p.missing.is_some() && p.contexts.contains(&of))
        .collect();
    if bound.is_empty() && missing.is_empty() {
        return;
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "  plugins (they get a kubeconfig holding only the selected cluster)",
        theme.style(Slot::Header),
    )));
    for (i, key) in bound {
        let Some(p) = model.settings().plugins.get(i) else {
            continue;
        };
        let what = if p.description.is_empty() {
            format!("{}: {} {}", p.name, p.command, p.args.join(" "))
        } else {
            format!("{}: {}", p.name, p.description)
        };
        let mut spans = vec![
            Span::styled(format!("  {:<18}", key.to_string()), theme.style(Slot::Key)),
            Span::styled(what, theme.style(Slot::Text)),
        ];
        let mark = match (
            p.writes,
            p.read_only_args.is_empty(),
            model.settings().read_only,
        ) {
            (false, ..) => None,
            (true, true, true) => Some(" [writes: not in read-only mode]"),
            (true, false, true) => Some(" [writes; read-only here, runs with its read-only flag]"),
            (true, ..) => Some(" [writes: journaled]"),
        };
        if let Some(mark) = mark {
            spans.push(Span::styled(mark, theme.style(Slot::Warning)));
        }
        lines.push(Line::from(spans));
    }
    for p in missing {
        lines.push(Line::from(Span::styled(
            format!(
                "  {:<18}{}: {} is not on PATH",
                p.key.to_string(),
                p.name,
                p.missing.as_deref().unwrap_or("")
            ),
            theme.style(Slot::Dim),
        )));
    }
}
