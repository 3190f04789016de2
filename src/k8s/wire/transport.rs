//! The HTTP transport under every cluster's service: TCP (directly or through a proxy, see
//! [`super::proxy`]) and rustls offering ALPN `h2`, so that all watches of one cluster share one
//! connection through fluxfleet's own HTTP/2 client ([`super::h2`]; kube's own client speaks
//! HTTP/1.1 only, one socket per watch), or hyper over HTTP/1.1 where a server refuses `h2`;
//! kube's base-URI, auth and header layers on top.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_rustls::{FixedServerNameResolver, HttpsConnector};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use kube::client::ConfigExt;
use rustls::pki_types::ServerName;
use rustls::sign::CertifiedKey;
use tokio::net::TcpStream;
use tower::{BoxError, ServiceBuilder, ServiceExt};

use super::api::Http;
use super::proxy::{Proxy, ProxyProtocol};
use crate::userinfo::basic_auth;
use dial::{Dial, dialer};

/// Which HTTP version a client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// ALPN `h2` required: every request multiplexed on one connection.
    Http2,
    /// The server refused h2 (or is plain http): HTTP/1.1, one connection per watch.
    Http1,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Http2 => "HTTP/2",
            Protocol::Http1 => "HTTP/1.1",
        }
    }
}

/// One TLS configuration per trust (CA data, or the system trust store; skipping verification or
/// not) for the clusters that bring no client certificate: building one reads the trust store or
/// the CA, and rustls resumes a TLS session only under the very verifier that made it. A
/// summarized cluster reconnects every interval with a resumed session, no certificate sent or
/// verified, and a fleet sharing a CA shares one verifier.
///
/// Every configuration also shares one TLS session cache: rustls gives each configuration its own
/// (256 entries, ~15 KB) and a fleet has thousands.
///
/// Sessions are remembered only where connections are made again and again: summarized clusters
/// (one connection every interval) and HTTP/1.1 ones (a connection per watch). A watched cluster
/// on HTTP/2 holds its one connection for hours; the tickets and key-exchange hints kept for it
/// (each ticket with a copy of the server's certificate chain) were ~2.8 KB a cluster, 28 MiB of
/// 10,000 clusters' heap.
pub struct TlsCache {
    configs: Mutex<HashMap<Trust, Arc<rustls::ClientConfig>>>,
    /// The configurations HTTP/2 connections are made with, for the clusters that bring no
    /// client certificate, ALPN and resumption set: the same for every cluster of a trust. Made
    /// once a trust, not once a cluster (~400 bytes each, 4 MiB of 10,000 clusters sharing a CA;
    /// a fleet of CAs of their own keeps one a cluster instead of two).
    lean: Mutex<HashMap<Trust, Arc<rustls::ClientConfig>>>,
    sessions: Arc<rustls::client::ClientSessionMemoryCache>,
    /// Connections are made again and again even on HTTP/2 (a summarized fleet).
    reconnects: bool,
}

/// What a verifier is made of: the kubeconfig's CA certificates (None: the system's) or CA
/// bundle file, and whether verification is skipped.
type Trust = (Option<Vec<Vec<u8>>>, Option<std::path::PathBuf>, bool);

/// rustls' own cipher suites, AES-128-GCM first: rustls lists AES-256 first, and the server
/// takes the client's order. AES-128 decrypts a fleet's lists faster (10 rounds, not 14), and
/// its SHA-256 handshake hash is cheaper than SHA-384; Go's crypto/tls and browsers prefer it
/// too. The suites are the same; only their order changes.
pub fn crypto_provider() -> rustls::crypto::CryptoProvider {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.sort_by_key(|suite| {
        let aes_128 = matches!(
            suite.suite(),
            rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
                | rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        );
        (
            suite.version().version != rustls::ProtocolVersion::TLSv1_3,
            !aes_128,
        )
    });
    provider
}

impl TlsCache {
    /// A cache that remembers sessions with `servers` servers at least (512 at least), when
    /// their clusters connect again and again (`reconnects`: a summarized cluster reconnects every
    /// interval, and resumes where its server allows).
    ///
    /// Also makes [`crypto_provider`] the process's TLS provider (kube builds its TLS
    /// configurations with the default one), unless one was installed before.
    pub fn new(servers: usize, reconnects: bool) -> TlsCache {
        let _ = rustls::crypto::CryptoProvider::install_default(crypto_provider());
        // rustls keeps up to 8 TLS 1.3 tickets a server and counts its size in tickets.
        let tickets = if reconnects { servers.max(512) } else { 512 }.saturating_mul(8);
        TlsCache {
            configs: Mutex::new(HashMap::new()),
            lean: Mutex::new(HashMap::new()),
            sessions: Arc::new(rustls::client::ClientSessionMemoryCache::new(tickets)),
            reconnects,
        }
    }

    /// The TLS configuration for `config` speaking `protocol`, presenting `identity` (the
    /// user's client certificate, read by [`super::identity`]) when it has one.
    fn config_for(
        &self,
        config: &kube::Config,
        identity: Option<Arc<CertifiedKey>>,
        protocol: Protocol,
    ) -> Result<rustls::ClientConfig, kube::Error> {
        let fresh = || without_identity(config).rustls_client_config();
        let trust = trust_of(config);
        let mut tls = {
            let mut configs = self.configs.lock().unwrap_or_else(|e| e.into_inner());
            let tls = match configs.get(&trust) {
                Some(tls) => tls.clone(),
                None => configs.entry(trust).or_insert(Arc::new(fresh()?)).clone(),
            };
            // Cheap: the verifier and roots inside are shared behind their own Arcs.
            (*tls).clone()
        };
        tls.resumption = self.resumption(protocol, identity.is_some());
        if let Some(identity) = identity {
            tls.client_auth_cert_resolver = Arc::new(super::identity::Fixed(identity));
        }
        Ok(tls)
    }

    /// The configuration of an HTTP/2 connection for `config` (ALPN `h2` and `http/1.1`
    /// offered, so that a refusal is visible and not a TLS error): one a trust for the clusters
    /// without a client certificate.
    fn h2_config_for(
        &self,
        config: &kube::Config,
        identity: Option<Arc<CertifiedKey>>,
    ) -> Result<Arc<rustls::ClientConfig>, kube::Error> {
        let made = |identity| -> Result<Arc<rustls::ClientConfig>, kube::Error> {
            let mut tls = self.config_for(config, identity, Protocol::Http2)?;
            tls.alpn_protocols = super::tls::OFFERED.iter().map(|p| p.to_vec()).collect();
            // A connection that does not resume needs nothing of rustls after a TLS 1.3
            // handshake but its traffic keys (`tls/records.rs`).
            tls.enable_secret_extraction = !self.reconnects;
            Ok(Arc::new(tls))
        };
        if identity.is_some() {
            return made(identity);
        }
        let trust = trust_of(config);
        if let Some(tls) = self
            .lean
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&trust)
        {
            return Ok(tls.clone());
        }
        let tls = made(None)?;
        let mut lean = self.lean.lock().unwrap_or_else(|e| e.into_inner());
        Ok(lean.entry(trust).or_insert(tls).clone())
    }

    /// Where a cluster's TLS sessions are remembered: nowhere when it holds one HTTP/2
    /// connection for hours (a watched cluster); else in the shared cache — but for a client
    /// certificate, which keeps its own: sessions are kept per server name, and one resumed
    /// under another cluster's certificate would present that identity.
    fn resumption(&self, protocol: Protocol, own_identity: bool) -> rustls::client::Resumption {
        use rustls::client::Resumption;
        if protocol == Protocol::Http2 && !self.reconnects {
            Resumption::disabled()
        } else if own_identity {
            Resumption::in_memory_sessions(8)
        } else {
            Resumption::store(self.sessions.clone())
        }
    }
}

fn trust_of(config: &kube::Config) -> Trust {
    (
        config.root_cert.clone(),
        config.root_cert_file.clone(),
        config.accept_invalid_certs,
    )
}

/// `config` without the client certificate and key: kube would read them with webpki, which
/// refuses X.509 v1 certificates that kubectl accepts; [`super::identity`] reads them instead.
fn without_identity(config: &kube::Config) -> kube::Config {
    let mut config = config.clone();
    let auth = &mut config.auth_info;
    auth.client_certificate = None;
    auth.client_certificate_data = None;
    auth.client_key = None;
    auth.client_key_data = None;
    config
}

/// Wraps hyper-rustls' connector (HTTP/1.1): the whole handshake has a deadline.
#[derive(Clone)]
struct Connector {
    inner: HttpsConnector<Dial>,
    timeout: Duration,
}

/// A connection made within `timeout`, else [`super::errors::ConnectTimeout`].
async fn within<T>(
    timeout: Duration,
    connecting: impl Future<Output = Result<T, BoxError>>,
) -> Result<T, BoxError> {
    match tokio::time::timeout(timeout, connecting).await {
        Ok(made) => made,
        Err(_) => Err(Box::new(super::errors::ConnectTimeout(timeout)) as BoxError),
    }
}

type Io = hyper_rustls::MaybeHttpsStream<TokioIo<TcpStream>>;
type ConnectFuture = Pin<Box<dyn Future<Output = Result<Io, BoxError>> + Send>>;

impl tower::Service<Uri> for Connector {
    type Response = Io;
    type Error = BoxError;
    type Future = ConnectFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> ConnectFuture {
        Box::pin(within(self.timeout, self.inner.call(uri)))
    }
}

/// The HTTP/2 connector: TCP (through `Dial`), then TLS with [`super::tls::Lean`], which holds
/// no buffer between records (a watched cluster keeps its connection for hours, idle nearly
/// always). A server that does not settle on `h2`, or a plain `http://` one, is
/// [`super::errors::NotHttp2`]: the caller falls back to HTTP/1.1 through hyper.
#[derive(Clone)]
struct H2Connector {
    dial: Dial,
    tls: Arc<rustls::ClientConfig>,
    /// The kubeconfig's `tls-server-name`, else the server's host.
    server_name: Option<ServerName<'static>>,
    timeout: Duration,
}

type LeanIo = TokioIo<super::tls::Lean<TcpStream>>;
type LeanFuture = Pin<Box<dyn Future<Output = Result<LeanIo, BoxError>> + Send>>;

impl tower::Service<Uri> for H2Connector {
    type Response = LeanIo;
    type Error = BoxError;
    type Future = LeanFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.dial.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> LeanFuture {
        if uri.scheme() != Some(&http::uri::Scheme::HTTPS) {
            return Box::pin(std::future::ready(Err(
                Box::new(super::errors::NotHttp2) as BoxError
            )));
        }
        let name = match &self.server_name {
            Some(name) => Ok(name.clone()),
            None => {
                let host = uri.host().unwrap_or_default();
                let host = host.trim_start_matches('[').trim_end_matches(']');
                ServerName::try_from(host.to_string()).map_err(|e| {
                    Box::new(io::Error::new(io::ErrorKind::InvalidInput, e)) as BoxError
                })
            }
        };
        let dialing = self.dial.call(uri);
        let (tls, timeout) = (self.tls.clone(), self.timeout);
        Box::pin(async move {
            let name = name?;
            let connecting = async move {
                let tcp = dialing.await?.into_inner();
                let lean = super::tls::Lean::connect(tls, name, tcp).await?;
                if lean.alpn_protocol() != Some(b"h2") {
                    return Err(Box::new(super::errors::NotHttp2) as BoxError);
                }
                Ok(TokioIo::new(lean))
            };
            within(timeout, connecting).await
        })
    }
}

/// Everything needed to build clients, shared by all clusters.
pub struct Transport {
    pub tls: TlsCache,
    pub connect_timeout: Duration,
    /// `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` with `NO_PROXY`, read once at start.
    pub env_proxy: Matcher,
    /// TCP, set up once: each client clones it (its settings are shared behind an `Arc`;
    /// one a cluster was ~200 bytes, 2 MiB of 10,000 clusters).
    dial: HttpConnector,
}

impl Transport {
    pub fn new(tls: TlsCache, connect_timeout: Duration, env_proxy: Matcher) -> Transport {
        Transport {
            tls,
            connect_timeout,
            env_proxy,
            dial: dialer(connect_timeout),
        }
    }

    /// The HTTP service for `config` speaking `protocol`. Synchronous and possibly slow (it may
    /// read certificate files and the system trust store).
    pub fn client(
        &self,
        config: &kube::Config,
        identity: Option<Arc<CertifiedKey>>,
        proxy: Option<Proxy>,
        protocol: Protocol,
    ) -> Result<Http, kube::Error> {
        let http = self.dial.clone();
        let dial = match proxy {
            None => Dial::Direct(http),
            Some(Proxy {
                uri,
                protocol: ProxyProtocol::Socks5 { remote_dns },
                credentials,
            }) => {
                let socks = SocksV5::new(uri, http).local_dns(!remote_dns);
                Dial::Socks(Box::new(match credentials {
                    Some((user, pass)) => socks.with_auth(user, pass),
                    None => socks,
                }))
            }
            Some(Proxy {
                uri, credentials, ..
            }) => {
                let tunnel = Tunnel::new(uri, http);
                Dial::Http(Box::new(
                    match credentials.and_then(|(u, p)| basic_auth(&u, &p)) {
                        Some(auth) => tunnel.with_auth(auth),
                        None => tunnel,
                    },
                ))
            }
        };
        let server_name = match &config.tls_server_name {
            Some(name) => Some(ServerName::try_from(name.clone()).map_err(|e| {
                kube::Error::RustlsTls(kube::client::RustlsTlsError::InvalidServerName(e))
            })?),
            None => None,
        };
        let layers = ServiceBuilder::new()
            .map_request(with_user_agent)
            .layer(config.base_uri_layer())
            .option_layer(config.auth_layer()?)
            .layer(config.extra_headers_layer()?);
        if protocol == Protocol::Http2 {
            let lean = H2Connector {
                dial,
                tls: self.tls.h2_config_for(config, identity)?,
                server_name,
                timeout: self.connect_timeout,
            };
            // fluxfleet's own client: one connection that holds next to nothing between frames
            // (see `fluxfleet_h2`) over TLS that holds nothing between records; it pings a
            // quiet connection to find a dead one.
            let h2 = ServiceExt::<http::Request<kube::client::Body>>::map_response(
                fluxfleet_h2::Client::new(lean),
                |r| r.map(super::response::ResponseBody::H2),
            );
            return Ok(Http::new(layers.service(h2)));
        }
        // HTTP/1.1 through hyper: no ALPN offered at all, which every server reads as HTTP/1.1
        // (hyper-rustls sets ALPN itself, and refuses a config that already has it).
        let mut tls = self.tls.config_for(config, identity, protocol)?;
        tls.alpn_protocols.clear();
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http();
        let builder = match server_name {
            Some(name) => builder.with_server_name_resolver(FixedServerNameResolver::new(name)),
            None => builder,
        };
        let connector = Connector {
            inner: builder.enable_http1().wrap_connector(dial),
            timeout: self.connect_timeout,
        };
        let mut hyper = HyperClient::builder(TokioExecutor::new());
        hyper.timer(TokioTimer::new()).pool_timer(TokioTimer::new());
        let hyper: HyperClient<Connector, kube::client::Body> = hyper.build(connector);
        let hyper = hyper
            .map_err(BoxError::from)
            .map_response(|r| r.map(super::response::ResponseBody::Hyper));
        let service = layers.service(hyper);
        Ok(Http::new(service))
    }
}

/// What fluxfleet calls itself to an API server: its audit log says who sent each request, and
/// what its patches change is managed by `fluxfleet` (the manager an API server names from the
/// agent when a request names none), as kubectl's is by `kubectl`.
pub const USER_AGENT: &str = concat!("fluxfleet/", env!("CARGO_PKG_VERSION"));

/// `request` saying who sends it, unless it already does.
fn with_user_agent(
    mut request: http::Request<kube::client::Body>,
) -> http::Request<kube::client::Body> {
    request
        .headers_mut()
        .entry(http::header::USER_AGENT)
        .or_insert(http::HeaderValue::from_static(USER_AGENT));
    request
}

mod dial;
#[cfg(test)]
mod tests;
