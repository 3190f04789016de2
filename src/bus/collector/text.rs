//! Prometheus' text exposition format, as a collector's `/metrics` writes it: label values
//! escaped, each family's HELP and TYPE.

use std::fmt::Write;

/// Label values escaped as the text format asks (backslash, quote, newline).
pub(super) fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}
