//! Shared causes: what a failure message says broke outside the cluster — an endpoint every
//! cluster may share (a registry, a Git host, a token service) and the class of the error (DNS,
//! TLS, a timeout, a refused connection, 401/403, a rate limit, 5xx). Root causes whose messages
//! name the same endpoint with the same class are one **incident**: an outage of the registry
//! fails different objects with different messages, and they are read as one.
//!
//! The class is the first rule of [`RULES`] with a marker in the message; the endpoint is the
//! host the message names nearest before that marker (Go wraps errors outermost first, so the
//! host that failed is named last before the error's words), a name preferred to an address, or
//! the host after `lookup` for DNS. Hosts of the cluster's own (`*.svc`, `*.cluster.local`,
//! short names, loopback and private addresses — every cluster has its own `10.96.0.1`) are
//! never shared: a message naming one is no incident. Messages come from clusters: only their
//! first [`SCANNED`] bytes are read, nothing is kept but a host's own characters.

use std::net::IpAddr;

use serde::Serialize;

/// How much of a message is read.
pub const SCANNED: usize = 4096;
/// The longest host kept (DNS names are at most 253 characters).
const HOST: usize = 253;

/// What kind of failure an endpoint gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorClass {
    /// Its name cannot be resolved.
    Dns,
    /// It refuses the requests: 429, "toomanyrequests", a rate exceeded.
    RateLimit,
    /// It answers 5xx.
    ServerError,
    /// It refuses the credentials: 401, 403, denied.
    Auth,
    /// It does not answer in time.
    Timeout,
    /// Its connections are refused, reset or unroutable.
    Connection,
    /// Its certificate is not trusted, or the handshake fails.
    Tls,
}

impl ErrorClass {
    /// The class as labels and JSON name it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Dns => "dns",
            ErrorClass::RateLimit => "rate-limit",
            ErrorClass::ServerError => "server-error",
            ErrorClass::Auth => "auth",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Connection => "connection",
            ErrorClass::Tls => "tls",
        }
    }

    /// What it says of the endpoint, for people.
    pub fn says(self) -> &'static str {
        match self {
            ErrorClass::Dns => "does not resolve",
            ErrorClass::RateLimit => "is rate limiting",
            ErrorClass::ServerError => "answers with server errors",
            ErrorClass::Auth => "refuses the credentials",
            ErrorClass::Timeout => "does not answer in time",
            ErrorClass::Connection => "refuses or drops connections",
            ErrorClass::Tls => "fails TLS",
        }
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An endpoint outside the cluster and how it fails.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Shared {
    /// Its host, lowercase, with its port when not the scheme's own.
    pub endpoint: String,
    pub class: ErrorClass,
}

impl std::fmt::Display for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.class, self.endpoint)
    }
}

/// A class and the words (lowercase) that say it.
pub struct Rule {
    pub class: ErrorClass,
    pub markers: &'static [&'static str],
}

/// The rules, in order: a message's class is the first with a marker in it. DNS first (a lookup
/// that times out is DNS), the HTTP answers before the timeout words ("504 Gateway Timeout" is
/// the server's), the timeout before TLS ("TLS handshake timeout" is a timeout). Status codes
/// written as numbers ("status code 503", "StatusCode: 403") are read by [`status_class`].
pub const RULES: &[Rule] = &[
    Rule {
        class: ErrorClass::Dns,
        markers: &[
            "dial tcp: lookup ",
            "no such host",
            "server misbehaving",
            "temporary failure in name resolution",
        ],
    },
    Rule {
        class: ErrorClass::RateLimit,
        markers: &[
            "toomanyrequests",
            "too many requests",
            "rate exceeded",
            "rate limit",
            "throttl",
        ],
    },
    Rule {
        class: ErrorClass::ServerError,
        markers: &[
            "internal server error",
            "bad gateway",
            "service unavailable",
            "gateway timeout",
            "gateway time-out",
        ],
    },
    Rule {
        class: ErrorClass::Auth,
        markers: &[
            "unauthorized",
            "forbidden",
            "access denied",
            "accessdenied",
            "denied: ",
            "authentication required",
            // go-git's words for an HTTP 403 (source-controller v1.9.1, checked on it).
            "authorization failed",
            "unable to authenticate",
            "authentication failed",
            "invalid username or password",
            "invalid credentials",
            "expiredtoken",
            "token is expired",
        ],
    },
    Rule {
        class: ErrorClass::Timeout,
        markers: &[
            "i/o timeout",
            "deadline exceeded",
            "timed out",
            "client.timeout",
            "handshake timeout",
        ],
    },
    Rule {
        class: ErrorClass::Connection,
        markers: &[
            "connection refused",
            "connection reset",
            "no route to host",
            "network is unreachable",
            "broken pipe",
            "unexpected eof",
        ],
    },
    Rule {
        class: ErrorClass::Tls,
        markers: &[
            "x509: ",
            "tls: ",
            "certificate signed by unknown authority",
            "certificate has expired",
        ],
    },
];

/// The endpoint outside the cluster a failure message names, and the class of its error; None
/// when it names none, or only the cluster's own.
pub fn shared_cause(message: &str) -> Option<Shared> {
    let mut end = message.len().min(SCANNED);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    // ASCII lowercase keeps every byte where it was.
    let lower = message[..end].to_ascii_lowercase();
    let (class, at) = classify(&lower)?;
    let host = match class {
        ErrorClass::Dns => looked_up(&lower).or_else(|| named_before(&lower, at)),
        _ => named_before(&lower, at),
    }?;
    (!own(&host)).then_some(Shared {
        endpoint: host,
        class,
    })
}

/// The message's class and where its marker is.
fn classify(lower: &str) -> Option<(ErrorClass, usize)> {
    let status = status_class(lower);
    for rule in RULES {
        if let Some((class, at)) = status
            && class == rule.class
        {
            return Some((class, at));
        }
        if let Some(at) = rule.markers.iter().filter_map(|m| lower.find(m)).min() {
            return Some((rule.class, at));
        }
    }
    None
}

/// A status code written as a number after "status code" or "statuscode", or as "NNN " before
/// its reason ("403 Forbidden" is found by the words): 401/403, 429 and 5xx.
fn status_class(lower: &str) -> Option<(ErrorClass, usize)> {
    for prefix in ["status code", "statuscode"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(prefix) {
            let at = from + i + prefix.len();
            let rest = lower[at..].trim_start_matches([':', ' ', '=']);
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(code) = digits.parse::<u16>() {
                let class = match code {
                    401 | 403 => Some(ErrorClass::Auth),
                    429 => Some(ErrorClass::RateLimit),
                    500..=599 => Some(ErrorClass::ServerError),
                    _ => None,
                };
                if let Some(class) = class {
                    return Some((class, from + i));
                }
            }
            from = at;
        }
    }
    None
}

/// The host after "lookup ", as Go's resolver names it ("lookup github.com on 10.96.0.10:53:",
/// "lookup github.com: i/o timeout").
fn looked_up(lower: &str) -> Option<String> {
    let at = lower.find("lookup ")? + "lookup ".len();
    let rest = &lower[at..];
    let end = rest.find(|c: char| !host_char(c)).unwrap_or(rest.len());
    host_port(&rest[..end], None)
}

/// The host named nearest before `at` — a name before an address — else the first after it.
fn named_before(lower: &str, at: usize) -> Option<String> {
    let hosts = hosts(lower);
    let before = || hosts.iter().filter(|(i, _)| *i < at);
    before()
        .rfind(|(_, h)| !is_address(h))
        .or_else(|| before().next_back())
        .or_else(|| hosts.iter().find(|(i, _)| *i >= at))
        .map(|(_, h)| h.clone())
}

/// Every host the message names, with where: URLs (`scheme://[user@]host[:port]`), `dial tcp
/// host:port` and a connection's far end (`->host:port`).
fn hosts(lower: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, _) in lower.match_indices("://") {
        let scheme: String = lower[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if scheme.is_empty() {
            continue;
        }
        let rest = &lower[i + 3..];
        // Userinfo ends at an `@` before the path.
        let authority_end = rest.find(['/', '?', '#', '"', '\'', ' ', ')', '`']);
        let authority = &rest[..authority_end.unwrap_or(rest.len())];
        let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
        if let Some(host) = host_port(authority, default_port(&scheme)) {
            found.push((i - scheme.len(), host));
        }
    }
    for marker in ["dial tcp ", "->"] {
        for (i, _) in lower.match_indices(marker) {
            let rest = &lower[i + marker.len()..];
            let end = rest.find(|c: char| !host_char(c)).unwrap_or(rest.len());
            if let Some(host) = host_port(rest[..end].trim_end_matches(':'), None) {
                found.push((i, host));
            }
        }
    }
    found.sort();
    found
}

fn default_port(scheme: &str) -> Option<&'static str> {
    match scheme {
        "https" | "oci" => Some("443"),
        "http" => Some("80"),
        "ssh" => Some("22"),
        _ => None,
    }
}

/// `host[:port]` as kept: lowercase, a trailing dot dropped, the scheme's own port dropped.
fn host_port(authority: &str, default: Option<&str>) -> Option<String> {
    let authority = authority.trim_end_matches(['.', ':', ',', ';']);
    let (host, port) = match authority.strip_prefix('[') {
        // [v6]:port
        Some(v6) => {
            let (host, rest) = v6.split_once(']')?;
            let port = rest.strip_prefix(':');
            if port.is_some_and(|p| !p.is_empty() && p.parse::<u16>().is_err()) {
                return None;
            }
            (host, port)
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) if port.is_empty() || port.parse::<u16>().is_ok() => {
                (host, Some(port))
            }
            Some(_) => return None,
            None => (authority, None),
        },
    };
    let host = host.trim_end_matches('.');
    let valid = !host.is_empty()
        && host.len() <= HOST
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    if !valid {
        return None;
    }
    let shown = |h: &str| match h.contains(':') {
        true => format!("[{h}]"),
        false => h.to_string(),
    };
    Some(match port {
        Some(p) if !p.is_empty() && Some(p) != default => format!("{}:{p}", shown(host)),
        _ => shown(host),
    })
}

fn host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']')
}

/// The host without its port, for telling addresses and names apart.
fn bare(host: &str) -> &str {
    match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => host.split(':').next().unwrap_or(host),
    }
}

fn is_address(host: &str) -> bool {
    bare(host).parse::<IpAddr>().is_ok()
}

/// A host of the cluster's own: its services, a short name, loopback and private addresses.
fn own(host: &str) -> bool {
    let name = bare(host);
    if let Ok(ip) = name.parse::<IpAddr>() {
        return match ip {
            IpAddr::V4(v4) => {
                let [a, b, ..] = v4.octets();
                v4.is_loopback()
                    || v4.is_private()
                    || v4.is_link_local()
                    || v4.is_unspecified()
                    || (a == 100 && (64..128).contains(&b))
            }
            IpAddr::V6(v6) => {
                v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xfe00) == 0xfc00
            }
        };
    }
    !name.contains('.')
        || name == "localhost"
        || [".svc", ".cluster.local", ".localhost"]
            .iter()
            .any(|s| name.ends_with(s))
}

#[cfg(test)]
mod tests;
