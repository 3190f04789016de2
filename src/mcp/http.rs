//! `fluxfleet mcp --listen ADDR`: the same tools over the protocol's Streamable HTTP transport
//! (the official SDK's server, stateless: every POST to `/mcp` answered on its own, as JSON), for
//! a team — one process, one session of the fleet, many clients.
//!
//! Before anything of a request is read but its head: who asks — the bearer token of
//! `--token-file` (one person on one machine; compared in constant time, never logged, never on
//! a command line), or an access token of the OAuth issuer (`--oauth-issuer`, [`super::oauth`]:
//! a team, each person with their own) — the size it announces, and how many requests that
//! principal (without tokens of their own: that client address) has in flight and has made this
//! minute. With OAuth the body is then read (bounded) to see which tool is called, and a tool
//! that needs a scope the token lacks is answered 403 `insufficient_scope`. The SDK then checks
//! `Origin` (none but those allowed: a browser page cannot call it) and bounds the body as it
//! streams. TLS from a certificate and key; connections bounded in number and their heads in
//! time.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use secrecy::{ExposeSecret, SecretString};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::state::FleetServer;
use limits::{Limit, Limits, Who};

mod challenge;
mod limits;
mod transport;

/// A token shorter than this is refused at start: it could be guessed.
const TOKEN_MIN: usize = 16;
/// A token file larger than this is not a token.
const TOKEN_FILE_MAX: u64 = 4096;

/// How `--listen` serves.
#[derive(Clone, Debug)]
pub struct Listen {
    pub addr: SocketAddr,
    /// Who may call.
    pub auth: Auth,
    /// `--tls-cert` and `--tls-key`: HTTPS; None: plain HTTP (behind a proxy that terminates
    /// TLS, or on loopback).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `Origin`s a request may carry (`https://host:port`); a request with any other is refused.
    pub allowed_origins: Vec<String>,
    /// A request's body, at most.
    pub max_request: usize,
    /// Requests in flight from one principal (without OAuth: one client address), at most.
    pub per_client: usize,
    /// Requests one principal (without OAuth: one client address) may make in a minute.
    pub per_minute: usize,
    /// `--propose`: the proposing tools need `fluxfleet:propose`.
    pub proposes: bool,
    /// `--write` (with `--impersonate`): the write tools need `fluxfleet:write`.
    pub writes: bool,
}

/// How a request says who it is.
#[derive(Clone, Debug)]
pub enum Auth {
    /// The file holding the one bearer token every request must carry.
    TokenFile(PathBuf),
    /// Access tokens of an OAuth issuer, for this server.
    OAuth(super::oauth::OAuthSettings),
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("cannot read the token file {}: {why}", path.display())]
    TokenFile { path: PathBuf, why: std::io::Error },
    #[error(
        "the token file {} holds no usable token: one line of at least {TOKEN_MIN} characters, no spaces",
        path.display()
    )]
    Token { path: PathBuf },
    #[error("TLS: cannot read {}: {why}", path.display())]
    TlsFile {
        path: PathBuf,
        why: rustls::pki_types::pem::Error,
    },
    #[error("TLS: the certificate and key do not make a server: {0}")]
    Tls(rustls::Error),
    #[error("OAuth: {0}")]
    Issuer(#[from] super::oauth::IssuerError),
    #[error("cannot listen on {addr}: {why}")]
    Bind {
        addr: SocketAddr,
        why: std::io::Error,
    },
}

/// What was refused and served, for `/metrics`.
#[derive(Default)]
pub struct RequestCounts {
    pub served: AtomicU64,
    pub unauthorized: AtomicU64,
    pub forbidden: AtomicU64,
    pub too_large: AtomicU64,
    pub busy: AtomicU64,
    pub not_found: AtomicU64,
    /// Per principal (token subject, or client address): served and refused as busy.
    pub principals: Mutex<HashMap<String, (u64, u64)>>,
}

/// Principals counted for `/metrics`, at most (more are counted together as "others").
const PRINCIPALS_COUNTED: usize = 1024;

impl RequestCounts {
    fn principal(&self, who: &Who, busy: bool) {
        let mut counted = self
            .principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut name = who.to_string();
        if !counted.contains_key(&name) && counted.len() >= PRINCIPALS_COUNTED {
            name = "others".into();
        }
        let entry = counted.entry(name).or_default();
        match busy {
            true => entry.1 += 1,
            false => entry.0 += 1,
        }
    }
}

/// How requests prove who they are.
enum Proof {
    Token(SecretString),
    OAuth(Arc<super::oauth::Verifier>),
}

/// What every request is checked against before the SDK sees it.
struct Gate {
    proof: Proof,
    max_request: usize,
    limits: Limits,
    proposes: bool,
    writes: bool,
    /// No browser origin is allowed (`--allow-origin` not given).
    no_origins: bool,
    counts: Arc<RequestCounts>,
}

type Answer = Response<BoxBody<Bytes, Infallible>>;

/// A request's body as the SDK gets it: streaming (one token), or read whole (OAuth: read to see
/// which tool is called).
type Sent = Either<Incoming, Full<Bytes>>;

impl Gate {
    /// `Authorization: Bearer <token>`, compared in constant time.
    fn token_matches(wanted: &SecretString, headers: &hyper::HeaderMap) -> bool {
        let given = bearer(headers);
        let wanted = wanted.expose_secret();
        // Lengths differ: no byte compared; the token's length is not its secret.
        given.len() == wanted.len()
            && given
                .bytes()
                .zip(wanted.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    /// 401 or 403 for `rejected`, saying where to get a token.
    fn challenge(&self, rejected: &super::oauth::Rejected) -> Answer {
        let verifier = match &self.proof {
            Proof::OAuth(verifier) => Some(verifier.as_ref()),
            Proof::Token(_) => None,
        };
        let said = challenge::of(verifier, rejected);
        let counted = match said.status {
            StatusCode::FORBIDDEN => &self.counts.forbidden,
            _ => &self.counts.unauthorized,
        };
        counted.fetch_add(1, Ordering::Relaxed);
        let mut refused = owned_text(said.status, said.body);
        if let Ok(value) = hyper::header::HeaderValue::from_str(&said.header) {
            refused
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, value);
        }
        refused
    }

    async fn answer<S>(&self, request: Request<Incoming>, peer: IpAddr, mcp: S) -> Answer
    where
        S: tower::Service<Request<Sent>, Response = Answer, Error = Infallible>,
    {
        use tower::ServiceExt;
        let count = |c: &AtomicU64| c.fetch_add(1, Ordering::Relaxed);
        let path = request.uri().path();
        if let Proof::OAuth(verifier) = &self.proof
            && path.starts_with(super::oauth::METADATA_PATH)
        {
            return json_answer(&verifier.metadata());
        }
        if path != "/mcp" {
            count(&self.counts.not_found);
            return text(StatusCode::NOT_FOUND, "not found: MCP is served on /mcp\n");
        }
        let principal = match &self.proof {
            Proof::Token(token) => match Self::token_matches(token, request.headers()) {
                true => None,
                false => return self.challenge(&super::oauth::Rejected::Missing),
            },
            Proof::OAuth(verifier) => match verifier.verify(bearer(request.headers())).await {
                Ok(principal) if principal.grants.read => Some(principal),
                Ok(_) => return self.challenge(&super::oauth::Rejected::Scope(super::oauth::READ)),
                Err(rejected) => return self.challenge(&rejected),
            },
        };
        let announced = request
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|n| n > self.max_request as u64) {
            count(&self.counts.too_large);
            return text(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request is larger than this server takes\n",
            );
        }
        let who = match &principal {
            Some(p) => Who::Subject(p.subject.clone()),
            None => Who::Address(peer),
        };
        let _slot = match self.limits.slot(&who) {
            Ok(slot) => slot,
            Err(limit) => {
                count(&self.counts.busy);
                self.counts.principal(&who, true);
                return busy(&who, &limit);
            }
        };
        let Some(principal) = principal else {
            // One token: the body streams on to the SDK, which checks `Origin` before reading it.
            count(&self.counts.served);
            self.counts.principal(&who, false);
            return match mcp.oneshot(request.map(Either::Left)).await {
                Ok(answer) => answer,
                Err(never) => match never {},
            };
        };
        // Read below to see which tool is called: a page of another site is refused first,
        // unread, where no browser origin is allowed (where some are, the SDK decides).
        if self.no_origins && request.headers().contains_key(hyper::header::ORIGIN) {
            count(&self.counts.forbidden);
            return text(
                StatusCode::FORBIDDEN,
                "Forbidden: Origin is not allowed (--allow-origin)\n",
            );
        }
        let (mut parts, body) = request.into_parts();
        let body = match Limited::new(body, self.max_request).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                count(&self.counts.too_large);
                return text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "the request is larger than this server takes\n",
                );
            }
        };
        if let Some(scope) = challenge::scope_needed(&body, (self.proposes, self.writes))
            && !principal.grants.has(scope)
        {
            return self.challenge(&super::oauth::Rejected::Scope(scope));
        }
        parts.extensions.insert(principal);
        count(&self.counts.served);
        self.counts.principal(&who, false);
        let request = Request::from_parts(parts, Either::Right(Full::new(body)));
        match mcp.oneshot(request).await {
            Ok(answer) => answer,
            Err(never) => match never {},
        }
    }
}

/// The bearer token of `headers`, or nothing.
fn bearer(headers: &hyper::HeaderMap) -> &str {
    headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
}

/// 429, naming whose limit and which, and when to come back.
fn busy(who: &Who, limit: &Limit) -> Answer {
    let (said, again) = limit.said(who);
    let mut busy = owned_text(StatusCode::TOO_MANY_REQUESTS, said);
    if let Ok(value) = hyper::header::HeaderValue::from_str(&again.to_string()) {
        busy.headers_mut().insert(hyper::header::RETRY_AFTER, value);
    }
    busy
}

fn owned_text(status: StatusCode, body: String) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response
}

fn json_answer(doc: &serde_json::Value) -> Answer {
    let mut response = owned_text(StatusCode::OK, doc.to_string());
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn text(status: StatusCode, body: &'static str) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

/// Reads the token: one line, trimmed, long enough, no spaces.
fn read_token(path: &std::path::Path) -> Result<SecretString, ListenError> {
    use std::io::Read;
    let failed = |why| ListenError::TokenFile {
        path: path.to_path_buf(),
        why,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(failed)?
        .take(TOKEN_FILE_MAX)
        .read_to_string(&mut text)
        .map_err(failed)?;
    let token = text.trim();
    if token.len() < TOKEN_MIN || token.chars().any(char::is_whitespace) {
        return Err(ListenError::Token {
            path: path.to_path_buf(),
        });
    }
    Ok(SecretString::from(token.to_string()))
}

/// The TLS server of a certificate chain and its key, in PEM files.
fn acceptor(cert: &PathBuf, key: &PathBuf) -> Result<tokio_rustls::TlsAcceptor, ListenError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let unreadable = |path: &PathBuf| {
        let path = path.clone();
        move |why| ListenError::TlsFile { path, why }
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(unreadable(cert))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable(cert))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(unreadable(key))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(ListenError::Tls)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(ListenError::Tls)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// A started server: where it listens, what it counts.
pub struct Serving {
    pub addr: SocketAddr,
    pub counts: Arc<RequestCounts>,
}

/// Starts serving `fleet` as `listen` says, until `stop` fires; what cannot be read or bound
/// stops it before anything is served.
pub async fn start(
    fleet: FleetServer,
    listen: &Listen,
    stop: CancellationToken,
) -> Result<Serving, ListenError> {
    let proof = match &listen.auth {
        Auth::TokenFile(path) => Proof::Token(read_token(path)?),
        Auth::OAuth(settings) => {
            let verifier = super::oauth::Verifier::discover(settings.clone()).await?;
            Proof::OAuth(Arc::new(verifier))
        }
    };
    let tls = match &listen.tls {
        Some((cert, key)) => Some(acceptor(cert, key)?),
        None => None,
    };
    let listener = TcpListener::bind(listen.addr)
        .await
        .map_err(|why| ListenError::Bind {
            addr: listen.addr,
            why,
        })?;
    let addr = listener.local_addr().unwrap_or(listen.addr);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(listen.max_request)
        .with_allowed_origins(listen.allowed_origins.clone())
        .enforce_origin_validation()
        // The token authenticates: whatever name the team reaches it by.
        .disable_allowed_hosts()
        .with_cancellation_token(stop.child_token());
    let mcp = StreamableHttpService::new(
        move || Ok(fleet.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let counts = Arc::new(RequestCounts::default());
    let gate = Arc::new(Gate {
        proof,
        max_request: listen.max_request,
        limits: Limits::new(listen.per_client, listen.per_minute),
        proposes: listen.proposes,
        writes: listen.writes,
        no_origins: listen.allowed_origins.is_empty(),
        counts: counts.clone(),
    });
    let answer = move |request, peer: SocketAddr| {
        let (gate, mcp) = (gate.clone(), mcp.clone());
        async move { gate.answer(request, peer.ip(), mcp).await }
    };
    tokio::spawn(transport::accept(listener, tls, answer, stop));
    Ok(Serving { addr, counts })
}

#[cfg(test)]
mod tests;
