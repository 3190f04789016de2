//! An outage of an endpoint many clusters share — a registry, a Git host, a chart repository —
//! as source-controller words it: each source whose URL names the host fails with its own
//! kind's words around the same error, so that the messages differ by object and agree on the
//! host and the class.

use serde_json::Value;

use crate::facts::FluxKind;

/// How the endpoint fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outage {
    Dns,
    Timeout,
    Connection,
    Tls,
    Auth,
    RateLimit,
    ServerError,
}

impl Outage {
    /// The error's own words, after the request that met it.
    fn error(self, host: &str) -> String {
        match self {
            Outage::Dns => format!("dial tcp: lookup {host} on 10.96.0.10:53: server misbehaving"),
            Outage::Timeout => {
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".into()
            }
            Outage::Connection => "read: connection reset by peer".into(),
            Outage::Tls => {
                "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                    .into()
            }
            Outage::Auth => "unexpected status code 401 Unauthorized".into(),
            Outage::RateLimit => "unexpected status code 429 Too Many Requests".into(),
            Outage::ServerError => "unexpected status code 503 Service Unavailable".into(),
        }
    }
}

/// The host a source's URL names (`https://github.com/…`, `ssh://git@github.com/…` →
/// `github.com`), lowercase.
pub fn host_of(obj: &Value) -> Option<String> {
    let url = obj.pointer("/spec/url")?.as_str()?;
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The kinds an outage fails: the sources that fetch from outside.
pub fn fetches(kind: FluxKind) -> bool {
    matches!(
        kind,
        FluxKind::GitRepository
            | FluxKind::OciRepository
            | FluxKind::HelmRepository
            | FluxKind::Bucket
    )
}

/// A GitRepository's words in an outage, as source-controller v1.9.1 says them (checked on it):
/// over HTTP, go-git's — the status code of the `info/refs` request, `authentication required`
/// for a 401 — and `unable to list remote for` once it holds an artifact (it only asks whether
/// the branch moved); over SSH the handshake's, which carry no status.
fn git_text(outage: Outage, obj: &Value, url: &str, error: &str) -> String {
    let has_artifact = obj
        .pointer("/status/artifact")
        .is_some_and(|a| !a.is_null());
    let doing = match has_artifact {
        true => format!("unable to list remote for '{url}'"),
        false => format!("unable to clone '{url}'"),
    };
    let refs = format!(
        "{}/info/refs?service=git-upload-pack",
        url.trim_end_matches('/')
    );
    let said = if url.starts_with("ssh://") {
        match outage {
            Outage::Dns | Outage::Timeout | Outage::Connection => error.to_string(),
            Outage::Tls => "ssh: handshake failed: knownhosts: key mismatch".into(),
            Outage::Auth => "ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain".into(),
            Outage::RateLimit | Outage::ServerError => "ssh: handshake failed: EOF".into(),
        }
    } else {
        let status = |code: u16| {
            format!("unexpected client error: unexpected requesting \"{refs}\" status code: {code}")
        };
        match outage {
            Outage::Auth => "authentication required: ".into(),
            Outage::RateLimit => status(429),
            Outage::ServerError => status(503),
            Outage::Dns | Outage::Timeout | Outage::Connection | Outage::Tls => {
                format!("Get \"{refs}\": {error}")
            }
        }
    };
    format!("failed to checkout and determine revision: {doing}: {said}")
}

/// Reason and message of a source failing in an outage of its URL's host.
pub fn text(outage: Outage, kind: FluxKind, obj: &Value) -> (&'static str, String) {
    let url = obj
        .pointer("/spec/url")
        .and_then(Value::as_str)
        .unwrap_or("");
    let host = host_of(obj).unwrap_or_default();
    let error = outage.error(&host);
    match kind {
        FluxKind::GitRepository => ("GitOperationFailed", git_text(outage, obj, url, &error)),
        FluxKind::OciRepository => {
            let path = url.split_once("://").map_or("", |(_, r)| r);
            let repo = path.split_once('/').map_or("", |(_, r)| r);
            (
                "OCIArtifactPullFailed",
                format!(
                    "failed to determine artifact digest: GET https://{host}/v2/{repo}/manifests/latest: {error}"
                ),
            )
        }
        FluxKind::HelmRepository => (
            "IndexationFailed",
            format!(
                "failed to fetch Helm repository index: failed to cache index to temporary file: Get \"{url}/index.yaml\": {error}"
            ),
        ),
        _ => (
            "BucketOperationFailed",
            format!("failed to confirm existence of bucket at '{url}': {error}"),
        ),
    }
}
