//! `fluxfleet mcp --listen ADDR`: the same tools over the protocol's Streamable HTTP transport
//! (the official SDK's server, stateless: every POST to `/mcp` answered on its own, as JSON), for
//! a team — one process, one session of the fleet, many clients.
//!
//! Before anything of a request is read but its head: the bearer token (from `--token-file`,
//! compared in constant time; never logged, never on a command line), the size it announces,
//! and how many requests its client address has in flight. The SDK then checks `Origin`
//! (none but those allowed: a browser page cannot call it) and bounds the body as it streams.
//! TLS from a certificate and key; connections bounded in number and their heads in time.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use secrecy::{ExposeSecret, SecretString};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::state::Fleet;

/// Connections served at once; more wait to be accepted.
const CONNECTIONS: usize = 256;
/// A connection's TLS handshake and each request's head must arrive within this.
const HEADS_WITHIN: Duration = Duration::from_secs(10);
/// A token shorter than this is refused at start: it could be guessed.
const TOKEN_MIN: usize = 16;
/// A token file larger than this is not a token.
const TOKEN_FILE_MAX: u64 = 4096;

/// How `--listen` serves.
#[derive(Clone, Debug)]
pub struct Listen {
    pub addr: SocketAddr,
    /// The file holding the bearer token every request must carry.
    pub token_file: PathBuf,
    /// `--tls-cert` and `--tls-key`: HTTPS; None: plain HTTP (behind a proxy that terminates
    /// TLS, or on loopback).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `Origin`s a request may carry (`https://host:port`); a request with any other is refused.
    pub allowed_origins: Vec<String>,
    /// A request's body, at most.
    pub max_request: usize,
    /// Requests in flight from one client address, at most.
    pub per_client: usize,
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
    #[error("cannot listen on {addr}: {why}")]
    Bind {
        addr: SocketAddr,
        why: std::io::Error,
    },
}

/// What was refused and served, for `/metrics`.
#[derive(Default)]
pub struct Counts {
    pub served: AtomicU64,
    pub unauthorized: AtomicU64,
    pub too_large: AtomicU64,
    pub busy: AtomicU64,
    pub not_found: AtomicU64,
}

/// What every request is checked against before the SDK sees it.
struct Gate {
    token: SecretString,
    max_request: usize,
    per_client: usize,
    in_flight: Mutex<HashMap<IpAddr, usize>>,
    counts: Arc<Counts>,
}

/// A request in flight from one address; let go when answered.
struct Slot<'a> {
    gate: &'a Gate,
    peer: IpAddr,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut in_flight = self
            .gate
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = in_flight.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                in_flight.remove(&self.peer);
            }
        }
    }
}

type Answer = Response<BoxBody<Bytes, Infallible>>;

impl Gate {
    /// `Authorization: Bearer <token>`, compared in constant time.
    fn authorized(&self, headers: &hyper::HeaderMap) -> bool {
        let given = headers
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        let wanted = self.token.expose_secret();
        // Lengths differ: no byte compared; the token's length is not its secret.
        given.len() == wanted.len()
            && given
                .bytes()
                .zip(wanted.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    fn slot(&self, peer: IpAddr) -> Option<Slot<'_>> {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let n = in_flight.entry(peer).or_default();
        if *n >= self.per_client {
            return None;
        }
        *n += 1;
        Some(Slot { gate: self, peer })
    }

    async fn answer<S>(&self, request: Request<Incoming>, peer: IpAddr, mcp: S) -> Answer
    where
        S: tower::Service<Request<Incoming>, Response = Answer, Error = Infallible>,
    {
        use tower::ServiceExt;
        let count = |c: &AtomicU64| c.fetch_add(1, Ordering::Relaxed);
        if request.uri().path() != "/mcp" {
            count(&self.counts.not_found);
            return text(StatusCode::NOT_FOUND, "not found: MCP is served on /mcp\n");
        }
        if !self.authorized(request.headers()) {
            count(&self.counts.unauthorized);
            let mut refused = text(
                StatusCode::UNAUTHORIZED,
                "a bearer token is needed (Authorization: Bearer …)\n",
            );
            refused.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                hyper::header::HeaderValue::from_static("Bearer realm=\"fluxfleet\""),
            );
            return refused;
        }
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
        let Some(_slot) = self.slot(peer) else {
            count(&self.counts.busy);
            let mut busy = text(
                StatusCode::TOO_MANY_REQUESTS,
                "too many requests at once from this address\n",
            );
            busy.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("1"),
            );
            return busy;
        };
        count(&self.counts.served);
        match mcp.oneshot(request).await {
            Ok(answer) => answer,
            Err(never) => match never {},
        }
    }
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
    pub counts: Arc<Counts>,
}

/// Starts serving `fleet` as `listen` says, until `stop` fires; what cannot be read or bound
/// stops it before anything is served.
pub async fn start(
    fleet: Fleet,
    listen: &Listen,
    stop: CancellationToken,
) -> Result<Serving, ListenError> {
    let token = read_token(&listen.token_file)?;
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
    let counts = Arc::new(Counts::default());
    let gate = Arc::new(Gate {
        token,
        max_request: listen.max_request,
        per_client: listen.per_client.max(1),
        in_flight: Mutex::new(HashMap::new()),
        counts: counts.clone(),
    });
    tokio::spawn(accept(listener, tls, gate, mcp, stop));
    Ok(Serving { addr, counts })
}

async fn accept(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    gate: Arc<Gate>,
    mcp: StreamableHttpService<Fleet, NeverSessionManager>,
    stop: CancellationToken,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::debug!(error = %e, "accepting an MCP connection");
                    continue;
                }
            },
        };
        let (gate, mcp, tls, stop) = (gate.clone(), mcp.clone(), tls.clone(), stop.clone());
        tokio::spawn(async move {
            let served = async {
                match tls {
                    Some(tls) => {
                        let handshake = tokio::time::timeout(HEADS_WITHIN, tls.accept(stream));
                        match handshake.await {
                            Ok(Ok(stream)) => connection(stream, peer, gate, mcp).await,
                            Ok(Err(e)) => tracing::debug!(error = %e, %peer, "MCP TLS handshake"),
                            Err(_) => tracing::debug!(%peer, "MCP TLS handshake timed out"),
                        }
                    }
                    None => connection(stream, peer, gate, mcp).await,
                }
            };
            tokio::select! {
                _ = stop.cancelled() => {}
                () = served => {}
            }
            drop(permit);
        });
    }
}

/// Serves one connection, HTTP/1.1 or HTTP/2.
async fn connection<IO>(
    stream: IO,
    peer: SocketAddr,
    gate: Arc<Gate>,
    mcp: StreamableHttpService<Fleet, NeverSessionManager>,
) where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| {
        let (gate, mcp) = (gate.clone(), mcp.clone());
        async move { Ok::<_, Infallible>(gate.answer(request, peer.ip(), mcp).await) }
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADS_WITHIN)
        .max_buf_size(64 * 1024);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(32)
        .max_header_list_size(64 * 1024);
    if let Err(e) = builder
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        tracing::debug!(error = %e, %peer, "an MCP connection");
    }
}

#[cfg(test)]
mod tests;
