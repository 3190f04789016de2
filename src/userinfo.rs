//! URLs that may carry a user and password (`scheme://user:pass@host`), as proxy URLs, NATS URLs
//! and Alertmanager URLs do: the credentials split off and percent-decoded, the URL without them,
//! the URL as it may be shown, and the `Basic` header they make. A leaf: imports nothing of the
//! crate.

/// `scheme://user:pass@host/…` as `scheme://host/…` and the user with the password
/// (percent-escapes decoded); any other text as it is.
pub fn split(url: &str) -> (String, Option<(String, String)>) {
    let (Some(scheme), Some(at)) = (url.find("://"), url.rfind('@')) else {
        return (url.to_string(), None);
    };
    let info = &url[scheme + 3..at.max(scheme + 3)];
    if at < scheme || info.contains('/') {
        return (url.to_string(), None);
    }
    let (user, pass) = info.split_once(':').unwrap_or((info, ""));
    let bare = format!("{}{}", &url[..scheme + 3], &url[at + 1..]);
    (bare, Some((percent_decoded(user), percent_decoded(pass))))
}

/// `%40` → `@` and so on; anything that is not a valid escape stays as written.
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match decoded {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `url` (or a comma-separated list of them) without a user or password: `scheme://…@host`.
pub fn redacted(url: &str) -> String {
    let one = |url: &str| match split(url) {
        (bare, Some(_)) => bare.replacen("://", "://…@", 1),
        (url, None) => url,
    };
    url.split(',').map(one).collect::<Vec<_>>().join(",")
}

/// `Authorization: Basic …` (or `Proxy-Authorization`) for a user and password, marked
/// sensitive so that it is never logged.
pub fn basic_auth(user: &str, pass: &str) -> Option<http::HeaderValue> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
    let mut value = http::HeaderValue::from_str(&format!("Basic {encoded}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_split_off_decoded_and_never_shown() {
        assert_eq!(
            split("nats://alice:p%40ss@nats:4222"),
            (
                "nats://nats:4222".to_string(),
                Some(("alice".to_string(), "p@ss".to_string()))
            )
        );
        assert_eq!(
            split("tls://nats:4222"),
            ("tls://nats:4222".to_string(), None)
        );
        // An @ in the path is not a user.
        assert_eq!(split("http://am:9093/x@y").1, None);
        assert_eq!(percent_decoded("a%2Fb%zz%4"), "a/b%zz%4");
        assert_eq!(
            redacted("nats://alice:s3cret@nats:4222"),
            "nats://…@nats:4222"
        );
        assert_eq!(redacted("nats://nats:4222"), "nats://nats:4222");
        assert_eq!(
            redacted("nats://a:pw@n1:4222,nats://a:pw@n2:4222"),
            "nats://…@n1:4222,nats://…@n2:4222"
        );
        let header = basic_auth("ops", "s:cret").unwrap();
        assert!(header.is_sensitive());
        assert_eq!(header.to_str().unwrap(), "Basic b3BzOnM6Y3JldA==");
    }
}
