//! Reading a crate: its source files by module path, and each file's code with comments and
//! literals blanked and its test module left out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Module;

/// Every source file of a library, by module path (`src/a/b.rs` and `src/a/b/mod.rs` are
/// `a::b`; `src/lib.rs` is the root). `main.rs` is the binary, outside the library; a folder with
/// a `Cargo.toml` of its own is another crate.
pub(super) fn files(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                if !path.join("Cargo.toml").exists() {
                    walk(&path, src, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("main.rs") {
                let rel = path.strip_prefix(src).unwrap().with_extension("");
                let mut module: Module = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                    module.pop();
                }
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The code of a file: comments, string and character literals blanked, and its `#[cfg(test)]
/// mod tests { … }` block left out (a test module imports what it tests, from below).
pub(super) fn code(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some((body, hashes)) = raw_string_start(rest)
            .filter(|_| i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let close = format!("\"{}", "#".repeat(hashes));
            i += rest[body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && char_literal_len(rest).is_some() {
            i += char_literal_len(rest).unwrap();
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    without_test_module(&out)
}

/// `r"`, `r#"`, `br##"` …: where the string's text starts, and how many `#` close it.
fn raw_string_start(rest: &str) -> Option<(usize, usize)> {
    let r = rest.strip_prefix('b').unwrap_or(rest).strip_prefix('r')?;
    let hashes = r.len() - r.trim_start_matches('#').len();
    let prefix = rest.len() - r.len();
    r[hashes..]
        .starts_with('"')
        .then_some((prefix + hashes + 1, hashes))
}

/// `'x'`, `'\n'`, `'\u{1F600}'` (not a lifetime).
fn char_literal_len(rest: &str) -> Option<usize> {
    let mut chars = rest.char_indices().skip(1);
    let (_, c) = chars.next()?;
    if c == '\\' {
        // The escaped character, then up to the closing quote (`'\''`, `'\u{1F600}'`).
        return rest.get(3..)?.find('\'').map(|e| e + 4);
    }
    let (at, close) = chars.next()?;
    (close == '\'').then_some(at + 1)
}

fn without_test_module(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = &out[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        if !trimmed.starts_with("mod tests") {
            // Another cfg(test) item: keep it, look further.
            let keep = out[..at + 1].to_string();
            return keep + &without_test_module(&out[at + 1..]);
        }
        let start = at;
        let open = out.len() - trimmed.len() + trimmed.find(['{', ';']).unwrap();
        let end = if out.as_bytes()[open] == b';' {
            open + 1
        } else {
            let mut depth = 0;
            let mut end = out.len();
            for (i, c) in out[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            end
        };
        out.replace_range(start..end, "");
    }
    out
}
