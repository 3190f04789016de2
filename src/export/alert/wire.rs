//! Alertmanager's v2 API, as far as `fluxfleet alert` needs it: `POST /api/v2/alerts` with a
//! JSON array of alerts, over HTTP/1.1 or HTTPS (the system's trust store, or a CA file), basic
//! auth from the URL's user and password. The answer is read only for an error, and no further
//! than 4 KiB; a request has 10 seconds. Errors name the URL without its credentials.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::ConfigExt;

use super::state::Posted;
use crate::headless::table::safe;
use crate::userinfo::{basic_auth, redacted, split};

/// How long one post may take, connecting included.
const TIMEOUT: Duration = Duration::from_secs(10);
/// How much of an error answer is read (and shown).
const ANSWER: usize = 4096;

/// One Alertmanager to send to.
pub struct Alertmanager {
    /// `…/api/v2/alerts`, without credentials.
    endpoint: Uri,
    /// `Authorization: Basic …`, from the URL's user and password.
    auth: Option<HeaderValue>,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl std::fmt::Display for Alertmanager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.endpoint)
    }
}

impl Alertmanager {
    /// Alertmanager at `url` (`http://alertmanager:9093`, a path prefix if it serves under one),
    /// trusting `ca` (a PEM file) or the system's roots for HTTPS.
    pub fn new(url: &str, ca: Option<&Path>) -> Result<Alertmanager, AlertmanagerError> {
        let bad = |why: &str| AlertmanagerError::Usage {
            url: redacted(url),
            why: why.to_string(),
        };
        // User and password go into a header, and the URL goes on without them.
        let (bare, user) = split(url);
        let auth = user
            .map(|(user, password)| {
                basic_auth(&user, &password).ok_or_else(|| bad("bad user:password"))
            })
            .transpose()?;
        let uri: Uri = bare.parse().map_err(|_| bad("not a URL"))?;
        let scheme = uri
            .scheme_str()
            .ok_or_else(|| bad("give http:// or https://"))?;
        if scheme != "http" && scheme != "https" {
            return Err(bad("give http:// or https://"));
        }
        let host = uri.authority().ok_or_else(|| bad("no host"))?;
        let base = uri.path().trim_end_matches('/');
        let endpoint: Uri = format!("{scheme}://{host}{base}/api/v2/alerts")
            .parse()
            .map_err(|_| bad("not a URL"))?;
        let mut config = kube::Config::new(endpoint.clone());
        config.root_cert_file = ca.map(Path::to_path_buf);
        if let Some(ca) = ca {
            // kube checks a CA file only when it verifies; read it now to say what is wrong.
            let pem = std::fs::read(ca).map_err(|e| bad(&format!("{}: {e}", ca.display())))?;
            if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
                return Err(bad(&format!("{}: no PEM certificate in it", ca.display())));
            }
        }
        let tls = config
            .rustls_client_config()
            .map_err(|e| bad(&format!("TLS: {e}")))?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(TIMEOUT));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build(https);
        Ok(Alertmanager {
            endpoint,
            auth,
            client,
        })
    }

    /// Sends `alerts`; an error says what Alertmanager answered, or why it could not be reached.
    pub async fn post(&self, alerts: &[Posted]) -> Result<(), AlertmanagerError> {
        let body =
            serde_json::to_vec(alerts).map_err(|e| AlertmanagerError::Encode(e.to_string()))?;
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(self.endpoint.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(
                http::header::USER_AGENT,
                concat!("fluxfleet/", env!("CARGO_PKG_VERSION")),
            );
        if let Some(auth) = &self.auth {
            request = request.header(http::header::AUTHORIZATION, auth.clone());
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| AlertmanagerError::Encode(e.to_string()))?;
        let exchange =
            async {
                let answer = self.client.request(request).await.map_err(|e| {
                    AlertmanagerError::Unreachable {
                        at: self.to_string(),
                        why: crate::errors::chain(&e),
                    }
                })?;
                let status = answer.status();
                if status.is_success() {
                    return Ok(());
                }
                let text = match Limited::new(answer.into_body(), ANSWER).collect().await {
                    Ok(body) => String::from_utf8_lossy(&body.to_bytes()).into_owned(),
                    Err(_) => "(an answer longer than 4 KiB)".into(),
                };
                Err(AlertmanagerError::Refused {
                    at: self.to_string(),
                    status: status.as_u16(),
                    text: safe(text.trim()).into_owned(),
                })
            };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(AlertmanagerError::TimedOut {
                    at: self.to_string(),
                    within: TIMEOUT,
                })
            })
    }
}

/// Why alerts could not be sent: `--alertmanager` or its CA to fix, or Alertmanager to reach
/// again (the next round sends every alert again). Never the URL's password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AlertmanagerError {
    /// The URL or the CA file given is not usable.
    #[error("--alertmanager {url}: {why}")]
    Usage { url: String, why: String },
    /// The alerts could not be written as JSON.
    #[error("{0}")]
    Encode(String),
    /// It could not be reached: tried again at the next round.
    #[error("cannot reach {at}: {why}")]
    Unreachable { at: String, why: String },
    /// It answered with an error.
    #[error("{at} answered {status}: {text}")]
    Refused {
        at: String,
        status: u16,
        text: String,
    },
    /// It did not answer in time: tried again at the next round.
    #[error("{at} did not answer within {within:?}")]
    TimedOut { at: String, within: Duration },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_into_a_header_and_never_into_what_is_shown() {
        let am = Alertmanager::new("http://ops:s%3Acret@alertmanager:9093/am/", None).unwrap();
        assert_eq!(am.to_string(), "http://alertmanager:9093/am/api/v2/alerts");
        let auth = am.auth.as_ref().unwrap();
        assert!(auth.is_sensitive());
        use base64::Engine;
        let token = auth.to_str().unwrap().strip_prefix("Basic ").unwrap();
        let pair = base64::engine::general_purpose::STANDARD
            .decode(token)
            .unwrap();
        assert_eq!(pair, b"ops:s:cret");
    }

    #[test]
    fn a_bad_url_or_ca_file_is_named_without_its_credentials() {
        let e = Alertmanager::new("ftp://u:secret@am:21", None)
            .err()
            .unwrap();
        assert!(
            matches!(&e, AlertmanagerError::Usage { why, .. } if why == "give http:// or https://"),
            "{e:?}"
        );
        assert!(!e.to_string().contains("secret"), "{e}");
        let e = Alertmanager::new("alertmanager:9093", None).err().unwrap();
        assert!(e.to_string().contains("http://"), "{e}");
        let e = Alertmanager::new("https://am:9093", Some(Path::new("/nonexistent/ca.pem")))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
    }

    #[tokio::test]
    async fn an_unreachable_alertmanager_is_an_error_naming_it() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let am = Alertmanager::new(&format!("http://u:pw@127.0.0.1:{port}"), None).unwrap();
        let e = am.post(&[]).await.unwrap_err();
        assert!(
            matches!(&e, AlertmanagerError::Unreachable { at, .. } if at.contains(&format!("127.0.0.1:{port}"))),
            "{e:?}"
        );
        assert!(!e.to_string().contains("pw"), "{e}");
    }
}
