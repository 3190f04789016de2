//! Pieces every list view uses: the windowed table, health cells and bars, fuzzy highlights.

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Cell, Row, Table};

use crate::app::model::{Model, RowId};
use crate::config::theme::{Slot, Theme};
use crate::fleet::{Health, HealthCounts};

/// What a list shows above its rows.
pub struct Columns<'a> {
    pub title: &'a str,
    pub header: &'a [&'a str],
    pub widths: &'a [Constraint],
}

/// A bordered table of the model's rows, building only the visible window.
pub fn list<'a>(
    frame: &mut Frame,
    area: Rect,
    model: &'a Model,
    theme: &Theme,
    columns: Columns<'_>,
    row: impl Fn(&'a RowId) -> Vec<Cell<'a>>,
) {
    let Columns {
        title,
        header,
        widths,
    } = columns;
    let screen = model.screen();
    let ids = &model.rows().ids;
    let height = usize::from(area.height.saturating_sub(3)).max(1);
    // The model's offset is where the last scroll left the window; a view with less room than
    // the loop assumed (the cluster view's state line) still keeps the selection in sight.
    let start = if screen.cursor >= screen.offset + height {
        screen.cursor + 1 - height
    } else {
        screen.offset.min(screen.cursor)
    }
    .min(ids.len());
    let end = (start + height).min(ids.len());
    let rows = ids[start..end].iter().enumerate().map(|(i, id)| {
        let r = Row::new(row(id));
        let marked = !model.marks().is_empty()
            && matches!(id, RowId::Object(c, k) if model.marks().contains(&(*c, k.clone())));
        if start + i == screen.cursor {
            r.style(theme.style(Slot::Selected))
        } else if marked {
            r.style(theme.style(Slot::Match))
        } else {
            r
        }
    });
    let header = Row::new(header.iter().map(|h| Cell::from(*h))).style(theme.style(Slot::Header));
    let mut decorations = vec![format!("{title} ({})", ids.len())];
    if screen.sort > 0 || screen.reverse {
        let column = screen.sort_by().map_or("", |c| c.header());
        decorations.push(format!(
            "sort {column}{}",
            if screen.reverse { " ↑" } else { "" }
        ));
    }
    if screen.failing_only {
        decorations.push("failing only".into());
    }
    if screen.suspended_only {
        decorations.push("suspended only".into());
    }
    if !screen.filter.is_empty() {
        decorations.push(format!("/{}", screen.filter));
    }
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Slot::BorderFocused))
        .title(Span::styled(
            format!(" {} ", decorations.join(" · ")),
            theme.style(Slot::Title),
        ));
    let table = Table::new(rows, widths.to_vec())
        .header(header)
        .block(block)
        .column_spacing(1);
    frame.render_widget(table, area);
    if ids.is_empty() {
        let inner = Rect {
            x: area.x + 2,
            y: area.y + 2,
            width: area.width.saturating_sub(4),
            height: 1.min(area.height.saturating_sub(3)),
        };
        let text = if screen.filter.is_empty() && !screen.failing_only && !screen.suspended_only {
            "nothing here yet"
        } else {
            "nothing matches (esc clears the filter)"
        };
        frame.render_widget(Span::styled(text, theme.style(Slot::Dim)), inner);
    }
}

pub fn health_cell(health: Health, theme: &Theme) -> Cell<'static> {
    Cell::from(Span::styled(
        health.as_str(),
        theme.style(Slot::of_health(health)),
    ))
}

pub fn count_cell(n: u32, health: Health, theme: &Theme) -> Cell<'static> {
    if n == 0 {
        Cell::from(Span::styled("0", theme.style(Slot::Dim)))
    } else {
        Cell::from(Span::styled(
            n.to_string(),
            theme.style(Slot::of_health(health)),
        ))
    }
}

/// A bar of `width` cells split by health, worst on the left.
pub fn health_bar(counts: &HealthCounts, width: usize, theme: &Theme) -> Line<'static> {
    let parts: Vec<(u32, Style)> = counts
        .iter()
        .map(|(health, n)| (n, theme.style(Slot::of_health(health))))
        .collect();
    split_bar(&parts, width, theme)
}

/// A bar of `width` cells split in proportion to `parts`, in their order. Every part present
/// gets at least one cell, so one failure in 5,000 still shows.
pub fn split_bar(parts: &[(u32, Style)], width: usize, theme: &Theme) -> Line<'static> {
    let present: Vec<&(u32, Style)> = parts.iter().filter(|(n, _)| *n > 0).collect();
    let total: usize = present.iter().map(|(n, _)| *n as usize).sum();
    if total == 0 || width == 0 {
        return Line::from(Span::styled("·".repeat(width), theme.style(Slot::Dim)));
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for (i, (n, style)) in present.iter().enumerate() {
        let left = width - used;
        let rest = present.len() - i - 1;
        let share = ((*n as usize * width) / total)
            .max(1)
            .min(left.saturating_sub(rest));
        let share = if i + 1 == present.len() { left } else { share };
        used += share;
        spans.push(Span::styled("█".repeat(share), *style));
    }
    Line::from(spans)
}

/// `text` with the characters the filter matched in the match style.
pub fn highlighted(text: &str, filter: &str, base: Style, theme: &Theme) -> Line<'static> {
    if filter.is_empty() {
        return Line::from(Span::styled(text.to_string(), base));
    }
    let Some((_, indices)) = SkimMatcherV2::default().fuzzy_indices(text, filter) else {
        return Line::from(Span::styled(text.to_string(), base));
    };
    let hit = base.patch(theme.style(Slot::Match));
    Line::from(
        text.chars()
            .enumerate()
            .map(|(i, c)| {
                Span::styled(c.to_string(), if indices.contains(&i) { hit } else { base })
            })
            .collect::<Vec<_>>(),
    )
}

/// An object's message, in its health's style when it is a problem.
pub fn message_cell(o: &crate::fleet::FluxSummary, theme: &Theme) -> Cell<'static> {
    let slot = if o.health.is_failing() {
        Slot::of_health(o.health)
    } else {
        Slot::Dim
    };
    let text = o
        .suspension()
        .unwrap_or_else(|| crate::units::one_line(o.message.as_deref().unwrap_or("")).into_owned());
    Cell::from(Span::styled(text, theme.style(slot)))
}

/// A view of items read (workloads, a trace's chains, a tree's nodes): `lines` with the picked
/// item's first line (`starts[picked]`) marked and shown a third down the pane; with one item
/// or none, scrolled as the arrows said.
pub fn picked_view(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    (title, (mut lines, starts)): (String, (Vec<Line<'static>>, Vec<usize>)),
) {
    use ratatui::widgets::{Paragraph, Wrap};
    // One item (or none): nothing to pick, the arrows scroll.
    let picked = starts
        .get(model.reads().picked())
        .copied()
        .filter(|_| starts.len() > 1);
    if let Some(line) = picked.and_then(|at| lines.get_mut(at)) {
        *line = std::mem::take(line).patch_style(theme.style(Slot::Selected));
    }
    let max = overflow(lines.clone(), area);
    let width = area.width.saturating_sub(2);
    let height = usize::from(area.height.saturating_sub(2));
    let scroll = picked.map_or(model.reads().fetched_scroll(), |at| {
        let above = Paragraph::new(lines[..at].to_vec())
            .wrap(Wrap { trim: false })
            .line_count(width);
        above.saturating_sub(height / 3)
    });
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Slot::BorderFocused))
        .title(Span::styled(title, theme.style(Slot::Title)));
    let paragraph = Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false });
    let scroll = u16::try_from(scroll.min(max)).unwrap_or(u16::MAX);
    frame.render_widget(paragraph.scroll((scroll, 0)), area);
}

/// How many of `lines`, wrapped inside a border, do not fit in `area`.
pub fn overflow(lines: Vec<Line<'static>>, area: Rect) -> usize {
    use ratatui::widgets::{Paragraph, Wrap};
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .line_count(area.width.saturating_sub(2))
        .saturating_sub(usize::from(area.height.saturating_sub(2)))
}
