//! How a headless command writes its output: a table, one JSON document, or a JSON line per
//! item (NDJSON), every one safe to show on a terminal.

use std::io::{self, Write};

use serde::Serialize;

/// The output a headless command writes (`-o`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Table,
    Json,
    Ndjson,
}

/// Writes `value` as pretty JSON as it is serialized (a fleet's document can be tens of MiB:
/// it is never held whole), terminal-safe as [`json_safe`] makes it.
pub fn write_json(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    let mut safe = SafeJson {
        out: io::BufWriter::with_capacity(64 * 1024, &mut *out),
        pending: Vec::new(),
    };
    serde_json::to_writer_pretty(&mut safe, value).map_err(io::Error::other)?;
    safe.flush()?;
    drop(safe);
    writeln!(out)
}

/// Passes JSON through, writing every character [`json_safe`] escapes as `\uXXXX`; a UTF-8
/// sequence split between two writes waits for its end.
struct SafeJson<W: Write> {
    out: W,
    pending: Vec<u8>,
}

impl<W: Write> Write for SafeJson<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let (text, rest) = match std::str::from_utf8(&self.pending) {
            Ok(text) => (text, 0),
            // An incomplete sequence at the end: kept for the next write.
            Err(e) if e.error_len().is_none() => {
                let valid = e.valid_up_to();
                // Valid by the check above.
                let text = std::str::from_utf8(&self.pending[..valid]).unwrap_or_default();
                (text, self.pending.len() - valid)
            }
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        };
        self.out.write_all(json_safe(text).as_bytes())?;
        let done = self.pending.len() - rest;
        self.pending.drain(..done);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Writes `value` as one line of JSON (NDJSON), terminal-safe as [`json_safe`] makes it.
pub fn write_line(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    let text = serde_json::to_string(value).map_err(io::Error::other)?;
    out.write_all(json_safe(&text).as_bytes())?;
    out.write_all(b"\n")
}

/// JSON that is safe on a terminal and means the same: serde_json escapes C0 controls but
/// writes DEL, C1 controls and bidi overrides as they are. Outside strings JSON is ASCII, so
/// each of them is inside a string, where `\uXXXX` is the same character.
fn json_safe(json: &str) -> std::borrow::Cow<'_, str> {
    use super::table::{escaped, unsafe_char};
    // Printable ASCII and the C0 controls serde_json escaped: nothing to look at one by one.
    if json.bytes().all(|b| b < 0x7f) {
        return std::borrow::Cow::Borrowed(json);
    }
    // Newlines between values are pretty-printing; inside strings they are escaped already.
    escaped(json, |c| {
        (unsafe_char(c) && c != '\n').then(|| format!("\\u{:04x}", u32::from(c)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_written_terminal_safe_as_it_is_serialized_even_split_mid_character() {
        let value = serde_json::json!({"message": "ok \u{1b}]52;c;x\u{7} é \u{202e}gnp.exe ✓"});
        let mut out = Vec::new();
        write_json(&mut out, &value).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(r"ok \u001b]52;c;x\u0007 é \u202egnp.exe ✓"),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value,
            "the same JSON"
        );
        // One byte at a time: multi-byte characters arrive in pieces.
        let mut safe = SafeJson {
            out: Vec::new(),
            pending: Vec::new(),
        };
        for b in "é\u{202e}✓".as_bytes() {
            safe.write_all(std::slice::from_ref(b)).unwrap();
        }
        assert_eq!(String::from_utf8(safe.out).unwrap(), "é\\u202e✓");
    }
}
