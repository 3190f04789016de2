//! Hostile bytes for the property tests of every parser of untrusted input: deterministic
//! mutations of valid samples — bytes changed, cut, repeated and spliced with what breaks
//! parsers (quotes, brackets, deep nesting, huge numbers, NUL, BOM, terminal escapes, YAML
//! anchors and tags, very long runs). A parser must answer each with a value or an error that
//! says what is wrong: never a panic, never a hang.

/// What is spliced in: the pieces parsers of JSON, YAML, TOML and PEM stumble on.
const PIECES: &[&str] = &[
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\n",
    "\r\n",
    "\t",
    "\0",
    "\u{feff}",
    "- ",
    "? ",
    "*a",
    "&a ",
    "!!binary ",
    "!!python/object ",
    "<<: *a",
    "---\n",
    "...\n",
    "#",
    "=",
    "'''",
    "\"\"\"",
    "[[",
    "]]",
    "99999999999999999999999999",
    "-1",
    "1e999",
    "NaN",
    "null",
    "~",
    "true",
    "\u{202e}",
    "\x1b[2J",
    "\x1b]52;c;",
    "-----BEGIN CERTIFICATE-----\n",
    "-----END PRIVATE KEY-----\n",
    "%00",
    "../../etc/passwd",
    "$(id)",
    "\u{10ffff}",
];

/// `count` mutations of `sample`, the same every run.
pub fn mutations(sample: &[u8], count: usize) -> Vec<Vec<u8>> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ sample.len() as u64;
    let mut next = move |below: usize| -> usize {
        // xorshift64*: enough to spread mutations, reproducible without a dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % below.max(1)
    };
    (0..count)
        .map(|i| {
            let mut bytes = sample.to_vec();
            // Every 50th is one of the classic bombs instead of a small change.
            if i % 50 == 49 {
                return bomb(i / 50);
            }
            for _ in 0..=next(3) {
                let at = next(bytes.len() + 1);
                match next(6) {
                    0 if !bytes.is_empty() => {
                        let at = at.min(bytes.len() - 1);
                        bytes[at] = next(256) as u8;
                    }
                    1 => bytes.truncate(at),
                    2 => {
                        let piece = PIECES[next(PIECES.len())].as_bytes();
                        bytes.splice(at..at, piece.iter().copied());
                    }
                    3 => {
                        let end = (at + next(64)).min(bytes.len());
                        let copy = bytes[at..end].to_vec();
                        bytes.splice(at..at, copy);
                    }
                    4 => {
                        let end = (at + next(64)).min(bytes.len());
                        bytes.drain(at..end);
                    }
                    _ => {
                        let at = at.min(bytes.len());
                        bytes.splice(at..at, vec![b'a'; 1 + next(100_000)]);
                    }
                }
            }
            bytes
        })
        .collect()
}

/// Inputs that sink naive parsers: deep nesting (stack), aliases of aliases (the billion
/// laughs), one enormous token.
fn bomb(n: usize) -> Vec<u8> {
    match n % 4 {
        0 => format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        1 => format!("{}1{}", "{\"a\":".repeat(50_000), "}".repeat(50_000)).into_bytes(),
        2 => {
            let mut yaml =
                String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
            for (i, prev) in ('b'..='j').zip('a'..='i') {
                yaml.push_str(&format!(
                    "{i}: &{i} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
                ));
            }
            yaml.into_bytes()
        }
        _ => format!("key: \"{}\"\n", "x".repeat(5_000_000)).into_bytes(),
    }
}

/// The mutations as text, for parsers that take `&str`.
pub fn text_mutations(sample: &str, count: usize) -> Vec<String> {
    mutations(sample.as_bytes(), count)
        .into_iter()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

/// A sample object of `tests/fixtures/samples` (real Flux and Cluster API objects), for unit
/// tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn sample(file: &str) -> serde_json::Value {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
