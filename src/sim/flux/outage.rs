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

/// The host a source's URL names (`ssh://git@github.com/…` → `github.com`), lowercase.
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

/// Reason and message of a source failing in an outage of its URL's host.
pub fn text(outage: Outage, kind: FluxKind, obj: &Value) -> (&'static str, String) {
    let url = obj
        .pointer("/spec/url")
        .and_then(Value::as_str)
        .unwrap_or("");
    let host = host_of(obj).unwrap_or_default();
    let error = outage.error(&host);
    match kind {
        FluxKind::GitRepository => (
            "GitOperationFailed",
            format!("failed to checkout and determine revision: unable to clone '{url}': {error}"),
        ),
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
