//! Plain-text tables in the style of `kubectl get` and `flux get`: upper-case headers, columns
//! padded with three spaces, the last column unpadded.

use std::io::{self, Write};

use crate::fleet::{FluxSummary, Ready};

/// A table being built.
pub struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: Vec<&'static str>) -> Table {
        Table {
            headers,
            rows: Vec::new(),
        }
    }

    /// Adds a row; cells are made [`safe`] for a terminal.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(
            cells
                .into_iter()
                .map(|c| match safe(&c) {
                    std::borrow::Cow::Borrowed(_) => c,
                    std::borrow::Cow::Owned(escaped) => escaped,
                })
                .collect(),
        );
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |out: &mut dyn Write, cells: &mut dyn Iterator<Item = &str>| -> io::Result<()> {
            let mut text = String::new();
            for (i, cell) in cells.enumerate() {
                if i + 1 < widths.len() {
                    text.push_str(cell);
                    let pad = widths[i] - cell.chars().count() + 3;
                    text.extend(std::iter::repeat_n(' ', pad));
                } else {
                    text.push_str(cell);
                }
            }
            writeln!(out, "{}", text.trim_end())
        };
        line(out, &mut self.headers.iter().copied())?;
        for row in &self.rows {
            line(out, &mut row.iter().map(String::as_str))?;
        }
        Ok(())
    }
}

/// Whether a character can change what a terminal does or shows rather than be shown: C0 and C1
/// controls (escape sequences: OSC 52 clipboard writes, title changes, cursor moves), DEL, and
/// the bidirectional overrides that make text read differently from what it is.
pub fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` fit to print on a terminal, on one line: line breaks as the TUI shows them
/// ([`crate::units::one_line`]), every other [`unsafe_char`] written as an escape (`\u{1b}`).
/// Texts from servers (messages, names, errors) go through this before any headless output.
pub fn safe(text: &str) -> std::borrow::Cow<'_, str> {
    let escape = |c: char| unsafe_char(c).then(|| c.escape_unicode().to_string());
    match crate::units::one_line(text) {
        std::borrow::Cow::Borrowed(text) => escaped(text, escape),
        std::borrow::Cow::Owned(text) => {
            std::borrow::Cow::Owned(escaped(&text, escape).into_owned())
        }
    }
}

/// `text` with every character `escape` has a replacement for replaced; borrowed when none.
pub(crate) fn escaped(
    text: &str,
    escape: impl Fn(char) -> Option<String>,
) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| escape(c).is_some()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match escape(c) {
            Some(replacement) => out.push_str(&replacement),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// READY and MESSAGE as `flux get` prints them.
pub fn ready_and_message(s: &FluxSummary) -> (&'static str, String) {
    if s.key.kind.is_static() {
        return ("-", String::new());
    }
    let ready = match s.ready {
        Some(Ready::True) => "True",
        Some(Ready::False) => "False",
        Some(Ready::Unknown) => "Unknown",
        None => "False",
    };
    let message = match (&s.message, s.ready) {
        (Some(m), _) => m.to_string(),
        (None, None) => "waiting to be reconciled".to_string(),
        (None, Some(_)) => String::new(),
    };
    (ready, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns_and_leave_the_last_one_ragged() {
        let mut t = Table::new(vec!["NAME", "READY", "MESSAGE"]);
        t.row(vec!["apps".into(), "True".into(), "Applied".into()]);
        t.row(vec!["infrastructure".into(), "False".into(), "".into()]);
        let mut out = Vec::new();
        t.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAME             READY   MESSAGE\napps             True    Applied\ninfrastructure   False\n"
        );
    }
}
