//! A rendered screen as an SVG image: the screenshots in `screenshots/` are frames of the real
//! views, drawn into a test buffer and written cell by cell, colours and bold included. Part of
//! the screenshot test only.

use std::fmt::Write;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

/// Pixels per cell.
const CELL_W: f32 = 8.4;
const CELL_H: f32 = 17.0;
const FONT: f32 = 14.0;

/// What `Color::Reset` looks like: a dark terminal.
const DEFAULT_FG: &str = "#d4d4d4";
const DEFAULT_BG: &str = "#1c1c1c";

/// The whole buffer as a standalone SVG document.
pub fn to_svg(buffer: &Buffer) -> String {
    let area = buffer.area;
    let (w, h) = (
        f32::from(area.width) * CELL_W,
        f32::from(area.height) * CELL_H,
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}">"#
    );
    let _ = writeln!(
        out,
        r#"<style>text{{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:{FONT}px;white-space:pre}}</style>"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>"#
    );
    let width = usize::from(area.width);
    for (y, row) in buffer.content.chunks(width.max(1)).enumerate() {
        let top = y as f32 * CELL_H;
        // Backgrounds first, in runs of one colour.
        for (start, len, cell) in runs(row, |a, b| bg(a) == bg(b)) {
            let fill = bg(cell);
            if fill != DEFAULT_BG {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{top:.1}" width="{:.1}" height="{CELL_H:.1}" fill="{fill}"/>"#,
                    start as f32 * CELL_W,
                    len as f32 * CELL_W,
                );
            }
        }
        // Then text, in runs of one style; each run stretched to its cells so columns line up
        // whatever font the viewer picks.
        for (start, len, cell) in runs(row, |a, b| fg(a) == fg(b) && a.modifier == b.modifier) {
            let text: String = row[start..start + len].iter().map(Cell::symbol).collect();
            if text.trim().is_empty() {
                continue;
            }
            let bold = if cell.modifier.contains(Modifier::BOLD) {
                r#" font-weight="bold""#
            } else {
                ""
            };
            let underline = if cell.modifier.contains(Modifier::UNDERLINED) {
                r#" text-decoration="underline""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" textLength="{:.1}" lengthAdjust="spacingAndGlyphs" fill="{}"{bold}{underline}>{}</text>"#,
                start as f32 * CELL_W,
                top + CELL_H * 0.78,
                len as f32 * CELL_W,
                fg(cell),
                escape(&text),
            );
        }
    }
    out.push_str("</svg>\n");
    out
}

/// Runs of cells that `same` says belong together: (start, length, first cell).
fn runs(
    row: &[Cell],
    same: impl Fn(&Cell, &Cell) -> bool,
) -> impl Iterator<Item = (usize, usize, &Cell)> {
    let mut start = 0;
    std::iter::from_fn(move || {
        let first = row.get(start)?;
        let len = row[start..]
            .iter()
            .take_while(|c| same(first, c))
            .count()
            .max(1);
        let run = (start, len, first);
        start += len;
        Some(run)
    })
}

/// The text colour (reversed cells swap foreground and background).
fn fg(cell: &Cell) -> String {
    if cell.modifier.contains(Modifier::REVERSED) {
        color(cell.bg).unwrap_or_else(|| DEFAULT_BG.into())
    } else {
        color(cell.fg).unwrap_or_else(|| DEFAULT_FG.into())
    }
}

fn bg(cell: &Cell) -> String {
    if cell.modifier.contains(Modifier::REVERSED) {
        color(cell.fg).unwrap_or_else(|| DEFAULT_FG.into())
    } else {
        color(cell.bg).unwrap_or_else(|| DEFAULT_BG.into())
    }
}

/// The colour as `#rrggbb` (the xterm palette for named and indexed colours); None for the
/// terminal's default.
fn color(c: Color) -> Option<String> {
    let (r, g, b) = match c {
        Color::Reset => return None,
        Color::Black => (0x00, 0x00, 0x00),
        Color::Red => (0xcd, 0x31, 0x31),
        Color::Green => (0x0d, 0xbc, 0x79),
        Color::Yellow => (0xe5, 0xe5, 0x10),
        Color::Blue => (0x24, 0x72, 0xc8),
        Color::Magenta => (0xbc, 0x3f, 0xbc),
        Color::Cyan => (0x11, 0xa8, 0xcd),
        Color::Gray => (0xcc, 0xcc, 0xcc),
        Color::DarkGray => (0x76, 0x76, 0x76),
        Color::LightRed => (0xf1, 0x4c, 0x4c),
        Color::LightGreen => (0x23, 0xd1, 0x8b),
        Color::LightYellow => (0xf5, 0xf5, 0x43),
        Color::LightBlue => (0x3b, 0x8e, 0xea),
        Color::LightMagenta => (0xd6, 0x70, 0xd6),
        Color::LightCyan => (0x29, 0xb8, 0xdb),
        Color::White => (0xf2, 0xf2, 0xf2),
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) => indexed(i),
    };
    Some(format!("#{r:02x}{g:02x}{b:02x}"))
}

/// The xterm 256-colour palette.
fn indexed(i: u8) -> (u8, u8, u8) {
    const BASE: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x00, 0x00),
        (0x00, 0xcd, 0x00),
        (0xcd, 0xcd, 0x00),
        (0x00, 0x00, 0xee),
        (0xcd, 0x00, 0xcd),
        (0x00, 0xcd, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x7f, 0x7f, 0x7f),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x5c, 0x5c, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    match i {
        0..=15 => BASE[usize::from(i)],
        16..=231 => {
            let n = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(n / 36), level((n / 6) % 6), level(n % 6))
        }
        _ => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn text_is_escaped_and_styled_runs_keep_their_colours() {
        let mut buffer = Buffer::empty(Rect::new(0, 0, 12, 2));
        buffer.set_string(0, 0, "<a&b>", Style::default().fg(Color::Red));
        buffer.set_string(
            6,
            0,
            "ok",
            Style::default()
                .fg(Color::Rgb(1, 2, 3))
                .add_modifier(Modifier::BOLD),
        );
        buffer.set_string(0, 1, "sel", Style::default().bg(Color::Indexed(21)));
        let svg = to_svg(&buffer);
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        assert!(
            svg.contains(r##"fill="#cd3131">&lt;a&amp;b&gt;</text>"##),
            "{svg}"
        );
        assert!(
            svg.contains(r##"fill="#010203" font-weight="bold">ok</text>"##),
            "{svg}"
        );
        // Indexed 21 is pure blue in the 6×6×6 cube; the background run covers three cells.
        assert!(
            svg.contains(&format!(
                r##"width="{:.1}" height="{CELL_H:.1}" fill="#0000ff""##,
                3.0 * CELL_W
            )),
            "{svg}"
        );
    }
}
