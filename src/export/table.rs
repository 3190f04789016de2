//! Plain-text tables in the style of `kubectl get` and `flux get`: upper-case headers, columns
//! padded with three spaces, the last column unpadded.

use std::io::{self, Write};

use jiff::Timestamp;

use crate::fleet::{FluxKind, FluxSummary, Ready};

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

/// `text` fit to print on a terminal: every [`unsafe_char`] written as an escape (`\u{1b}`).
/// Texts from servers (messages, names, errors) go through this before any headless output.
pub fn safe(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| {
        unsafe_char(c).then(|| c.escape_unicode().to_string())
    })
}

/// `text` with every character `escape` has a replacement for replaced; borrowed when none.
pub(super) fn escaped(
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

/// Shortens every run of 40–128 hex digits to its first 8, as `flux get` does for revisions and
/// messages (`main@sha1:2f22765d`).
pub fn truncate_hex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let is_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let at_boundary = i == 0 || !word(bytes[i - 1]);
        if at_boundary && is_hex(bytes[i]) {
            let end = (i..bytes.len())
                .find(|&j| !is_hex(bytes[j]))
                .unwrap_or(bytes.len());
            let run = end - i;
            let ends_word = end == bytes.len() || !word(bytes[end]);
            if (40..=128).contains(&run) && ends_word {
                out.push_str(&text[i..i + 8]);
                i = end;
                continue;
            }
            out.push_str(&text[i..end]);
            i = end;
            continue;
        }
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + ch_len]);
        i += ch_len;
    }
    out
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

/// The revision as `flux get` shows it: hex shortened, except for chart versions.
pub fn revision(s: &FluxSummary) -> String {
    match (&s.revision, s.key.kind) {
        (None, _) => String::new(),
        (Some(r), FluxKind::HelmChart) => r.to_string(),
        (Some(r), _) => truncate_hex(r),
    }
}

/// "12s", "5m", "3h", "2d" since `then`.
pub fn age(then: Option<Timestamp>, now: Timestamp) -> String {
    let Some(then) = then else {
        return "-".into();
    };
    let secs = now.duration_since(then).as_secs().max(0);
    match secs {
        0..120 => format!("{secs}s"),
        120..7_200 => format!("{}m", secs / 60),
        7_200..172_800 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_runs_are_shortened_like_flux_get() {
        let sha = "2f22765d04931a078909145ca628d2264c852d7d";
        assert_eq!(
            truncate_hex(&format!("main@sha1:{sha}")),
            "main@sha1:2f22765d"
        );
        assert_eq!(
            truncate_hex(&format!("applied {sha} and {sha}")),
            "applied 2f22765d and 2f22765d"
        );
        assert_eq!(truncate_hex("v1.2.3 deadbeef"), "v1.2.3 deadbeef");
        // Not a whole word: left alone.
        assert_eq!(truncate_hex(&format!("x{sha}")), format!("x{sha}"));
        assert_eq!(truncate_hex("é ü"), "é ü");
    }

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
