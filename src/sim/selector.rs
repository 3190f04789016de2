//! Label and field selectors, with the syntax the API server accepts
//! (`a=b,c!=d,e in (x,y),f notin (z),g,!h`; fields support `=`, `==` and `!=`).

use super::status::ApiError;

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Eq(String),
    NotEq(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    NotExists,
}

#[derive(Clone, Debug, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector(Vec<Requirement>);

/// Splits on commas that are not inside parentheses.
fn split_terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn parse_set(s: &str) -> Option<Vec<String>> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_string()).collect())
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<LabelSelector, ApiError> {
        let bad = |t: &str| ApiError::bad_request(format!("unable to parse requirement: {t:?}"));
        let mut reqs = Vec::new();
        for term in split_terms(s) {
            let req = if let Some(key) = term.strip_prefix('!') {
                Requirement {
                    key: key.trim().to_string(),
                    op: Op::NotExists,
                }
            } else if let Some((k, v)) = term.split_once("!=") {
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::NotEq(v.trim().to_string()),
                }
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::Eq(v.trim().to_string()),
                }
            } else if let Some((k, rest)) = term.split_once(" notin ") {
                let set = parse_set(rest).ok_or_else(|| bad(term))?;
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::NotIn(set),
                }
            } else if let Some((k, rest)) = term.split_once(" in ") {
                let set = parse_set(rest).ok_or_else(|| bad(term))?;
                Requirement {
                    key: k.trim().to_string(),
                    op: Op::In(set),
                }
            } else if !term.contains(char::is_whitespace) {
                Requirement {
                    key: term.to_string(),
                    op: Op::Exists,
                }
            } else {
                return Err(bad(term));
            };
            if req.key.is_empty() {
                return Err(bad(term));
            }
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn matches<'a, I>(&self, labels: I) -> bool
    where
        I: IntoIterator<Item = (&'a str, &'a str)> + Clone,
    {
        self.0.iter().all(|r| {
            let value = labels
                .clone()
                .into_iter()
                .find(|(k, _)| *k == r.key)
                .map(|(_, v)| v);
            match (&r.op, value) {
                (Op::Eq(want), Some(v)) => v == want,
                (Op::Eq(_), None) => false,
                (Op::NotEq(want), v) => v != Some(want.as_str()),
                (Op::In(set), Some(v)) => set.iter().any(|s| s == v),
                (Op::In(_), None) => false,
                (Op::NotIn(set), v) => v.is_none_or(|v| !set.iter().any(|s| s == v)),
                (Op::Exists, v) => v.is_some(),
                (Op::NotExists, v) => v.is_none(),
            }
        })
    }
}

/// A parsed field selector: field path → wanted (or unwanted) value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses and checks the fields against those the resource supports.
    pub fn parse(s: &str, supported: &[&str]) -> Result<FieldSelector, ApiError> {
        let mut out = Vec::new();
        for term in split_terms(s) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{term}'"
                )));
            };
            let field = field.trim();
            if !supported.contains(&field) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            out.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector(out))
    }

    /// `lookup` returns the value of a field path for the object under test.
    pub fn matches(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|(field, equal, want)| {
            let got = lookup(field).unwrap_or_default();
            (got == *want) == *equal
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the selector only looks at `metadata.name` / `metadata.namespace`.
    pub fn only_metadata(&self) -> bool {
        self.0.iter().all(|(f, _, _)| f.starts_with("metadata."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Vec<(&'static str, &'static str)> {
        vec![("env", "prod"), ("tier", "web")]
    }

    #[test]
    fn label_selector_operators() {
        let ok = |s: &str| LabelSelector::parse(s).unwrap().matches(labels());
        assert!(ok(""));
        assert!(ok("env=prod"));
        assert!(ok("env==prod,tier"));
        assert!(!ok("env!=prod"));
        assert!(ok("env in (dev, prod)"));
        assert!(!ok("tier notin (web)"));
        assert!(ok("!region"));
        assert!(!ok("region"));
        assert!(ok("region!=eu"));
        assert!(LabelSelector::parse("env in dev").is_err());
    }

    #[test]
    fn field_selector_checks_supported_fields() {
        let fields = [
            "involvedObject.kind",
            "involvedObject.name",
            "metadata.namespace",
        ];
        let sel = FieldSelector::parse(
            "involvedObject.kind=Kustomization,involvedObject.name!=x",
            &fields,
        )
        .unwrap();
        assert!(sel.matches(|f| {
            Some(
                if f == "involvedObject.kind" {
                    "Kustomization"
                } else {
                    "apps"
                }
                .into(),
            )
        }));
        let err = FieldSelector::parse("spec.foo=bar", &fields).unwrap_err();
        assert_eq!(err.message, "field label not supported: spec.foo");
    }
}
