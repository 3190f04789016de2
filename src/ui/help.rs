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
    for (action, keys) in model.keymap.effective(of) {
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<18}", keys.join(" ")), theme.style(Slot::Key)),
            Span::styled(action.describe(), theme.style(Slot::Text)),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "  keys come from [keymap] in the config file; ? or esc closes this",
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
