//! The fields of an answer's header block, checked as RFC 9113 (8.2, 8.3) asks: a malformed
//! answer fails its stream with the rule it broke.

use super::super::conn::MAX_FIELDS;
use super::super::hpack::{BadBlock, Decoder};

/// Fields that mean something only to one HTTP/1.1 hop; an HTTP/2 answer carrying one is
/// malformed (RFC 9113, 8.2.2).
const CONNECTION_SPECIFIC: [&[u8]; 5] = [
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"upgrade",
];

/// What a header block said.
#[derive(Default)]
pub struct Fields {
    pub status: Option<u16>,
    pub content_length: Option<u64>,
    pub headers: http::HeaderMap,
    /// The first rule the block broke.
    pub malformed: Option<String>,
}

impl Fields {
    fn malformed(&mut self, why: impl FnOnce() -> String) {
        if self.malformed.is_none() {
            self.malformed = Some(why());
        }
    }
}

/// Reads a whole header block; `trailers` when the answer's head already came. A block that
/// cannot be decoded is a compression error, which ends the connection; one that breaks a rule
/// of fields is malformed, which ends its stream.
pub fn read(decoder: &mut Decoder, block: &[u8], trailers: bool) -> Result<Fields, BadBlock> {
    let mut fields = Fields::default();
    let mut count = 0;
    let mut regular_seen = false;
    decoder.decode(block, |name, value| {
        count += 1;
        if count > MAX_FIELDS {
            fields.malformed(|| format!("an answer with more than {MAX_FIELDS} header fields"));
            return Ok(());
        }
        if name.first() == Some(&b':') {
            pseudo(&mut fields, name, value, trailers, regular_seen);
            return Ok(());
        }
        regular_seen = true;
        regular(&mut fields, name, value);
        Ok(())
    })?;
    Ok(fields)
}

fn pseudo(fields: &mut Fields, name: &[u8], value: &[u8], trailers: bool, regular_seen: bool) {
    let shown = || String::from_utf8_lossy(name).into_owned();
    if trailers {
        return fields.malformed(|| format!("the pseudo-header {} in trailers", shown()));
    }
    if name != b":status" {
        return fields.malformed(|| format!("the pseudo-header {} in an answer", shown()));
    }
    if regular_seen {
        return fields.malformed(|| ":status after a regular header field".into());
    }
    if fields.status.is_some() {
        return fields.malformed(|| ":status twice".into());
    }
    let code = (value.len() == 3 && value.iter().all(u8::is_ascii_digit))
        .then(|| std::str::from_utf8(value).ok()?.parse::<u16>().ok())
        .flatten()
        .filter(|code| *code >= 100);
    match code {
        Some(code) => fields.status = Some(code),
        None => fields.malformed(|| "an answer with a malformed :status".into()),
    }
}

fn regular(fields: &mut Fields, name: &[u8], value: &[u8]) {
    let shown = || String::from_utf8_lossy(name).into_owned();
    if name.iter().any(u8::is_ascii_uppercase) {
        return fields.malformed(|| format!("the upper-case header name {}", shown()));
    }
    if CONNECTION_SPECIFIC.contains(&name) || (name == b"te" && value != b"trailers") {
        return fields.malformed(|| format!("the connection-specific header field {}", shown()));
    }
    let padded = |b: Option<&u8>| b.is_some_and(|b| *b == b' ' || *b == b'\t');
    if padded(value.first()) || padded(value.last()) {
        return fields.malformed(|| format!("the header field {} padded with spaces", shown()));
    }
    let (Ok(header), Ok(parsed)) = (
        http::HeaderName::from_bytes(name),
        http::HeaderValue::from_bytes(value),
    ) else {
        return fields.malformed(|| format!("the malformed header field {}", shown()));
    };
    if header == http::header::CONTENT_LENGTH {
        let length = std::str::from_utf8(value)
            .ok()
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse::<u64>().ok());
        match (length, fields.content_length) {
            (None, _) => return fields.malformed(|| "a malformed content-length".into()),
            (Some(new), Some(old)) if new != old => {
                return fields.malformed(|| "two different content-length values".into());
            }
            (Some(new), _) => fields.content_length = Some(new),
        }
    }
    fields.headers.append(header, parsed);
}

#[cfg(test)]
mod tests {
    use super::super::super::hpack;
    use super::*;

    fn block(list: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, value) in list {
            hpack::literal(&mut out, name.as_bytes(), value.as_bytes(), false);
        }
        out
    }

    fn malformed(list: &[(&str, &str)], trailers: bool) -> Option<String> {
        read(&mut Decoder::new(0), &block(list), trailers)
            .unwrap()
            .malformed
    }

    #[test]
    fn a_well_formed_answer_is_read() {
        let fields = read(
            &mut Decoder::new(0),
            &block(&[
                (":status", "200"),
                ("content-type", "application/json"),
                ("content-length", "12"),
                ("te", "trailers"),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(fields.malformed, None);
        assert_eq!(fields.status, Some(200));
        assert_eq!(fields.content_length, Some(12));
        assert_eq!(fields.headers["content-type"], "application/json");
    }

    #[test]
    fn each_rule_of_fields_names_what_it_broke() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[(":status", "200"), ("Content-Type", "x")], "upper-case"),
            (&[(":status", "200"), (":status", "200")], ":status twice"),
            (&[("a", "b"), (":status", "200")], "after a regular"),
            (&[(":status", "200"), (":path", "/")], "pseudo-header :path"),
            (&[(":status", "2000")], "malformed :status"),
            (&[(":status", "099")], "malformed :status"),
            (
                &[(":status", "200"), ("connection", "close")],
                "connection-specific",
            ),
            (
                &[(":status", "200"), ("transfer-encoding", "chunked")],
                "connection-specific",
            ),
            (&[(":status", "200"), ("te", "gzip")], "connection-specific"),
            (&[(":status", "200"), ("a", " b")], "padded"),
            (
                &[(":status", "200"), ("a", "b\nc")],
                "malformed header field",
            ),
            (
                &[(":status", "200"), ("content-length", "-1")],
                "content-length",
            ),
            (
                &[
                    (":status", "200"),
                    ("content-length", "1"),
                    ("content-length", "2"),
                ],
                "two different",
            ),
        ];
        for (list, expected) in cases {
            let got = malformed(list, false).unwrap_or_default();
            assert!(got.contains(expected), "{list:?}: {got:?}");
        }
        assert!(
            malformed(&[(":status", "200")], true)
                .unwrap_or_default()
                .contains("in trailers")
        );
        let many: Vec<(String, String)> = (0..=MAX_FIELDS)
            .map(|i| (format!("x{i}"), "1".into()))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        assert!(
            malformed(&many, true)
                .unwrap_or_default()
                .contains("more than 256 header fields")
        );
    }
}
