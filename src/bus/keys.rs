//! Where things are in the bus: one key per cluster (`c.<cluster>`), per cluster's summary
//! (`s.<cluster>`) and per object (`o.<cluster>.<Kind>.<namespace>.<name>`) in the state bucket,
//! one subject per cluster in the history stream. Names are escaped token by token: letters, digits, `-` and `_` stay; every
//! other byte (the `.` that separates tokens among them) becomes `=XX`, so every name has
//! exactly one key and every key reads back to its name.

use crate::fleet::{FluxKind, ObjectKey};

/// `name` as one token of a key or subject.
pub fn token(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("={b:02X}"));
        }
    }
    if out.is_empty() {
        // An empty name still takes a place.
        out.push_str("=00");
    }
    out
}

/// The name a token stands for; None for text [`token`] never writes.
pub fn untoken(token: &str) -> Option<String> {
    let bytes = token.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'=' => {
                let hex = token.get(i + 1..i + 3)?;
                let b = u8::from_str_radix(hex, 16).ok()?;
                if b != 0 {
                    out.push(b);
                }
                i += 3;
            }
            b if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' => {
                out.push(b);
                i += 1;
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

/// The key of a cluster's state.
pub fn cluster(name: &str) -> String {
    format!("c.{}", token(name))
}

/// The key of a cluster's summary: its objects counted.
pub fn summary(name: &str) -> String {
    format!("s.{}", token(name))
}

/// The key of one object of a cluster.
pub fn object(cluster: &str, key: &ObjectKey) -> String {
    format!(
        "o.{}.{}.{}.{}",
        token(cluster),
        key.kind.as_str(),
        token(&key.namespace),
        token(&key.name)
    )
}

/// Every object key of a cluster, as a filter.
pub fn objects_of(cluster: &str) -> String {
    format!("o.{}.>", token(cluster))
}

/// What a key of the state bucket is about.
#[derive(Clone, Debug, PartialEq)]
pub enum StateKey {
    Cluster(String),
    Summary(String),
    Object(String, ObjectKey),
}

/// Reads a key back; None for keys fluxfleet does not write.
pub fn parse(key: &str) -> Option<StateKey> {
    let parts: Vec<&str> = key.split('.').collect();
    match parts.as_slice() {
        ["c", cluster] => Some(StateKey::Cluster(untoken(cluster)?)),
        ["s", cluster] => Some(StateKey::Summary(untoken(cluster)?)),
        ["o", cluster, kind, namespace, name] => Some(StateKey::Object(
            untoken(cluster)?,
            ObjectKey::new(
                FluxKind::from_kind(kind)?,
                &untoken(namespace)?,
                &untoken(name)?,
            ),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_name_has_one_key_and_reads_back() {
        let key = ObjectKey::new(FluxKind::HelmRelease, "team.a", "podinfo");
        for cluster in [
            "prod-eu-1",
            "arn:aws:eks:eu-west-1:1:cluster/prod",
            "a.b",
            "=41",
            "ü",
            "",
        ] {
            let k = object(cluster, &key);
            assert!(
                k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_=.".contains(&b)),
                "{k}"
            );
            assert_eq!(k.split('.').count(), 5, "{k}");
            assert_eq!(
                parse(&k),
                Some(StateKey::Object(cluster.to_string(), key.clone()))
            );
            assert_eq!(
                parse(&super::cluster(cluster)),
                Some(StateKey::Cluster(cluster.to_string()))
            );
        }
        assert_eq!(object("a.b", &key), "o.a=2Eb.HelmRelease.team=2Ea.podinfo");
        assert_ne!(token("a.b"), token("a=2Eb"));
        assert_eq!(parse("o.x.NotAKind.ns.n"), None);
        assert_eq!(parse("c.bad*"), None);
        assert_eq!(parse("c.=4"), None);
    }
}
