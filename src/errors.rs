//! Error text for people.

/// An error with its causes on one line, each cause once (many errors repeat their source).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

/// The first line of an error about text that may hold credentials (a kubeconfig, a plugin's
/// output), with every quoted part replaced by `…`: where and what kind of error, never the
/// text itself. Parsers quote the offending value and print the lines around it.
pub fn redacted(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default().trim();
    let mut out = String::with_capacity(first.len());
    let mut quote: Option<char> = None;
    for c in first.chars() {
        match quote {
            Some(q) if c == q => {
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') => {
                out.push(c);
                out.push('…');
                quote = Some(c);
            }
            None => out.push(c),
        }
    }
    // An unterminated quote hides the rest of the line, and says so.
    if let Some(q) = quote {
        out.push(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacted_keeps_where_and_what_and_drops_quoted_values_and_the_lines_around() {
        let parser = "failed to parse kubeconfig YAML: error: line 11 column 4: while parsing a \
                      block mapping\n  --> <input>:11:4\n 9 |     token: sup3r-s3cret\n";
        assert_eq!(
            redacted(parser),
            "failed to parse kubeconfig YAML: error: line 11 column 4: while parsing a block mapping"
        );
        assert_eq!(
            redacted("invalid type: string \"hunter2\", expected a boolean at `x: y` 'z"),
            "invalid type: string \"…\", expected a boolean at `…` '…'"
        );
    }
}
