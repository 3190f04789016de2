//! TCP to a server or to its proxy (HTTP CONNECT or SOCKS5): no Nagle, the connect bounded,
//! a dead path found by the kernel's keep-alive.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower::BoxError;

/// TCP, directly or through the kubeconfig's `proxy-url` (HTTP CONNECT or SOCKS5). A proxy's
/// connector is boxed: it is 150 to 190 bytes, which every cluster's connection pool would keep
/// (`Dial` is 16 bytes boxed, 192 inline; 1.6 MiB of 10,000 clusters).
#[derive(Clone)]
pub(super) enum Dial {
    Direct(HttpConnector),
    Http(Box<Tunnel<HttpConnector>>),
    Socks(Box<SocksV5<HttpConnector>>),
}

type DialFuture = Pin<Box<dyn Future<Output = Result<TokioIo<TcpStream>, BoxError>> + Send>>;

impl tower::Service<Uri> for Dial {
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future = DialFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match self {
            Dial::Direct(c) => c.poll_ready(cx).map_err(Into::into),
            Dial::Http(c) => c.poll_ready(cx).map_err(Into::into),
            Dial::Socks(c) => c.poll_ready(cx).map_err(Into::into),
        }
    }

    fn call(&mut self, uri: Uri) -> DialFuture {
        match self {
            Dial::Direct(c) => {
                let f = c.call(uri);
                Box::pin(async move { f.await.map_err(Into::into) })
            }
            Dial::Http(c) => {
                let f = c.call(uri);
                Box::pin(async move { f.await.map_err(Into::into) })
            }
            Dial::Socks(c) => {
                let f = c.call(uri);
                Box::pin(async move { f.await.map_err(Into::into) })
            }
        }
    }
}

/// A socket quiet for this long is probed by the kernel (TCP keep-alive)...
const TCP_KEEPALIVE: Duration = Duration::from_secs(30);
/// ...again this often while the probes go unanswered...
const TCP_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// ...and the connection fails after this many unanswered, or when what was sent goes
/// unacknowledged as long: 40 s after the path to a server died, as client-go's HTTP/2
/// read-idle ping finds it (30 s and 15 s), but without waking the process or a TLS record
/// either way. A server that acknowledges segments but no longer answers is found by the
/// HTTP/2 client's own ping, within 15 s (`fluxfleet_h2::SILENT_DEADLINE`).
const TCP_KEEPALIVE_PROBES: u32 = 2;

/// TCP to a server or to its proxy: no Nagle, the connect bounded, a dead path found by the
/// kernel's keep-alive.
pub(super) fn dialer(connect_timeout: Duration) -> HttpConnector {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(connect_timeout));
    http.set_keepalive(Some(TCP_KEEPALIVE));
    http.set_keepalive_interval(Some(TCP_KEEPALIVE_INTERVAL));
    http.set_keepalive_retries(Some(TCP_KEEPALIVE_PROBES));
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    http.set_tcp_user_timeout(Some(
        TCP_KEEPALIVE + TCP_KEEPALIVE_INTERVAL * TCP_KEEPALIVE_PROBES,
    ));
    http
}
