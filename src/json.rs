//! JSON pointers (RFC 6901) read without allocating: `serde_json::Value::pointer` builds a new
//! string for every path segment, which summarising 60,000 objects at start-up paid millions
//! of times.

use std::borrow::Cow;

use serde_json::Value;

/// `value.at("/status/conditions/0")`: what `Value::pointer` finds, found the same way.
pub trait At {
    fn at(&self, path: &str) -> Option<&Value>;
}

impl At for Value {
    fn at(&self, path: &str) -> Option<&Value> {
        if path.is_empty() {
            return Some(self);
        }
        path.strip_prefix('/')?
            .split('/')
            .try_fold(self, |value, token| {
                let token = unescaped(token);
                match value {
                    Value::Object(map) => map.get(token.as_ref()),
                    Value::Array(list) => index(&token).and_then(|i| list.get(i)),
                    _ => None,
                }
            })
    }
}

/// `~1` is `/` and `~0` is `~`; a token without `~` is itself.
fn unescaped(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// An array index as RFC 6901 writes it: digits, without a sign or a leading zero.
fn index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_finds_what_pointer_finds() {
        let value = serde_json::json!({
            "metadata": {"name": "apps", "annotations": {"a/b": "slash", "c~d": "tilde"}},
            "status": {"conditions": [{"type": "Ready"}, {"type": "Stalled"}]},
            "": {"empty": true},
        });
        for path in [
            "",
            "/",
            "/metadata/name",
            "/metadata/annotations/a~1b",
            "/metadata/annotations/c~0d",
            "/status/conditions/1/type",
            "/status/conditions/01/type",
            "/status/conditions/+1/type",
            "/status/conditions/9",
            "/status/conditions/x",
            "/metadata/name/deeper",
            "metadata",
            "//empty",
            "/missing",
        ] {
            assert_eq!(value.at(path), value.pointer(path), "{path}");
        }
    }
}
