//! The issuer as this server reads it: its discovery document and its JWK set, fetched over
//! HTTPS (http:// only on loopback), each bounded in size and time, and the keys kept from the
//! set — asymmetric ones only, each with the one algorithm it signs with.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::Uri;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use kube::client::ConfigExt;
use serde_json::Value;

/// An issuer's document (discovery, a JWK set), at most.
const DOCUMENT_MAX: usize = 1024 * 1024;
/// An answer from the issuer, at most.
const ISSUER_TIMEOUT: Duration = Duration::from_secs(10);
/// Keys held at most this many (a set larger than this is refused).
const KEYS_MAX: usize = 64;
/// Why the resource server could not start: the issuer could not be read as one.
#[derive(Debug, thiserror::Error)]
pub enum IssuerError {
    #[error("--oauth-issuer {0:?}: give an https:// URL (http:// only on loopback)")]
    Url(String),
    #[error("--oauth-audience {0:?}: give this server's URL, as its tokens name it")]
    Audience(String),
    #[error("TLS for the issuer: {0}")]
    Tls(String),
    #[error("the issuer {url}: {why}")]
    Unreachable { url: String, why: String },
    #[error("the issuer {url} answered {status}")]
    Refused { url: String, status: u16 },
    #[error("the issuer's {what} at {url} cannot be read: {why}")]
    Document {
        what: &'static str,
        url: String,
        why: String,
    },
    #[error("the issuer's discovery names issuer {said:?}, not {asked:?}")]
    OtherIssuer { asked: String, said: String },
}

/// The client the issuer is read with.
pub(super) type IssuerClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>;

/// The keys of the issuer, as last fetched.
pub(super) struct Keys {
    pub(super) by_id: Vec<(Option<String>, Algorithm, DecodingKey)>,
    pub(super) fetched: Instant,
}

/// https://, or http:// to a loopback address (a test's issuer, a sidecar).
pub(super) fn secure_or_loopback(uri: &Uri) -> bool {
    match uri.scheme_str() {
        Some("https") => uri.host().is_some(),
        Some("http") => uri.host().is_some_and(|h| {
            h == "localhost"
                || h.trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }),
        _ => false,
    }
}

pub(super) fn client(ca: Option<&std::path::Path>) -> Result<IssuerClient, IssuerError> {
    let mut config = kube::Config::new(Uri::from_static("https://issuer.invalid"));
    config.root_cert_file = ca.map(std::path::Path::to_path_buf);
    let tls = config
        .rustls_client_config()
        .map_err(|e| IssuerError::Tls(e.to_string()))?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(ISSUER_TIMEOUT));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    // Fetched rarely: no idle connection kept (a restarted issuer would leave it dead).
    Ok(Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(https))
}

/// A JSON document from the issuer, bounded in size and time.
pub(super) async fn fetch(
    client: &IssuerClient,
    url: &str,
    what: &'static str,
) -> Result<Value, IssuerError> {
    let uri: Uri = url.parse().map_err(|_| IssuerError::Url(url.to_string()))?;
    let exchange = async {
        let answer = client
            .get(uri)
            .await
            .map_err(|e| IssuerError::Unreachable {
                url: url.to_string(),
                why: crate::errors::chain(&e),
            })?;
        let status = answer.status();
        if !status.is_success() {
            return Err(IssuerError::Refused {
                url: url.to_string(),
                status: status.as_u16(),
            });
        }
        let body = Limited::new(answer.into_body(), DOCUMENT_MAX)
            .collect()
            .await
            .map_err(|e| IssuerError::Document {
                what,
                url: url.to_string(),
                why: e.to_string(),
            })?
            .to_bytes();
        serde_json::from_slice::<Value>(&body).map_err(|e| IssuerError::Document {
            what,
            url: url.to_string(),
            why: e.to_string(),
        })
    };
    tokio::time::timeout(ISSUER_TIMEOUT, exchange)
        .await
        .unwrap_or_else(|_| {
            Err(IssuerError::Unreachable {
                url: url.to_string(),
                why: format!(
                    "no answer within {}",
                    crate::units::format_duration(ISSUER_TIMEOUT)
                ),
            })
        })
}

/// The issuer's signing keys: asymmetric ones only, each with its algorithm (the JWK's `alg`,
/// else the one its key type and curve mean).
pub(super) async fn keys(client: &IssuerClient, uri: &Uri) -> Result<Keys, IssuerError> {
    let url = uri.to_string();
    let document = fetch(client, &url, "JWK set").await?;
    let set: JwkSet = serde_json::from_value(document).map_err(|e| IssuerError::Document {
        what: "JWK set",
        url: url.clone(),
        why: e.to_string(),
    })?;
    if set.keys.len() > KEYS_MAX {
        return Err(IssuerError::Document {
            what: "JWK set",
            url,
            why: format!("more than {KEYS_MAX} keys"),
        });
    }
    let mut by_id = Vec::new();
    for jwk in &set.keys {
        let Some(alg) = algorithm_of(jwk) else {
            continue;
        };
        // A key for encryption is not one tokens are signed with.
        if jwk
            .common
            .public_key_use
            .as_ref()
            .is_some_and(|u| *u != jsonwebtoken::jwk::PublicKeyUse::Signature)
        {
            continue;
        }
        if let Ok(key) = DecodingKey::from_jwk(jwk) {
            by_id.push((jwk.common.key_id.clone(), alg, key));
        }
    }
    Ok(Keys {
        by_id,
        fetched: Instant::now(),
    })
}

/// What a JWK signs with: its `alg` when it says one that fits its key type, else the key
/// type's usual one; None for a symmetric key, or one that does not fit.
pub(super) fn algorithm_of(jwk: &jsonwebtoken::jwk::Jwk) -> Option<Algorithm> {
    use jsonwebtoken::jwk::{EllipticCurve, KeyAlgorithm};
    let said = jwk.common.key_algorithm.and_then(|a| match a {
        KeyAlgorithm::RS256 => Some(Algorithm::RS256),
        KeyAlgorithm::RS384 => Some(Algorithm::RS384),
        KeyAlgorithm::RS512 => Some(Algorithm::RS512),
        KeyAlgorithm::PS256 => Some(Algorithm::PS256),
        KeyAlgorithm::PS384 => Some(Algorithm::PS384),
        KeyAlgorithm::PS512 => Some(Algorithm::PS512),
        KeyAlgorithm::ES256 => Some(Algorithm::ES256),
        KeyAlgorithm::ES384 => Some(Algorithm::ES384),
        KeyAlgorithm::EdDSA => Some(Algorithm::EdDSA),
        _ => None,
    });
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => Vec::new(),
        },
        AlgorithmParameters::OctetKeyPair(_) => vec![Algorithm::EdDSA],
        // Symmetric: never.
        AlgorithmParameters::OctetKey(_) => Vec::new(),
    };
    match said {
        Some(alg) => family.contains(&alg).then_some(alg),
        None if jwk.common.key_algorithm.is_some() => None,
        None => family.first().copied(),
    }
}
