//! Accepting connections: TLS with ALPN, then HTTP/2 or HTTP/1.1 as negotiated, and the
//! connection accounting behind `/sim/stats`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::api;
use super::controller::Sender;
use super::tls::{ClientCerts, ClientIdentity};
use super::world::World;

/// Fleet-wide counters.
#[derive(Debug, Default)]
pub struct Stats {
    pub connections_total: AtomicU64,
    pub connections_open: AtomicU64,
    pub h2_connections_open: AtomicU64,
    pub http1_connections_open: AtomicU64,
    pub tls_failures: AtomicU64,
    /// Handshakes that resumed an earlier session (no certificate sent or verified).
    pub tls_resumed: AtomicU64,
    pub requests_total: AtomicU64,
    pub h2_requests_total: AtomicU64,
    pub h2_open_streams: AtomicU64,
    pub open_watches: AtomicU64,
    /// PATCH requests being answered now, and the most there ever were at once.
    pub patches_in_flight: AtomicU64,
    pub patches_in_flight_max: AtomicU64,
}

/// Counts one PATCH in flight while it lives.
pub struct PatchInFlight<'a>(&'a Stats);

impl PatchInFlight<'_> {
    pub fn start(stats: &Stats) -> PatchInFlight<'_> {
        let now = stats.patches_in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        stats
            .patches_in_flight_max
            .fetch_max(now, Ordering::Relaxed);
        PatchInFlight(stats)
    }
}

impl Drop for PatchInFlight<'_> {
    fn drop(&mut self) {
        self.0.patches_in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Stats {
    pub fn to_value(&self) -> Value {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        json!({
            "connectionsTotal": g(&self.connections_total),
            "connectionsOpen": g(&self.connections_open),
            "h2ConnectionsOpen": g(&self.h2_connections_open),
            "http1ConnectionsOpen": g(&self.http1_connections_open),
            "tlsFailures": g(&self.tls_failures),
            "tlsResumed": g(&self.tls_resumed),
            "requestsTotal": g(&self.requests_total),
            "h2RequestsTotal": g(&self.h2_requests_total),
            "h2OpenStreams": g(&self.h2_open_streams),
            "openWatches": g(&self.open_watches),
            "patchesInFlightMax": g(&self.patches_in_flight_max),
        })
    }
}

/// Timing knobs the request handlers need.
#[derive(Clone, Debug)]
pub struct Timing {
    pub bookmark_interval: Duration,
    /// How long a watch without `timeoutSeconds` lasts.
    pub default_watch_timeout: Duration,
}

/// Everything a request handler can reach.
pub struct State {
    pub world: Arc<World>,
    pub stats: Arc<Stats>,
    pub timing: Timing,
    pub controller: Sender,
    pub shutdown: CancellationToken,
    /// The client certificates issued, to know who a connection's certificate is.
    pub clients: Arc<ClientCerts>,
}

/// What the handlers know about the connection a request came on.
pub struct Conn {
    pub h2: bool,
    /// Clusters this connection has served, to keep their connection gauges.
    clusters: Mutex<Vec<usize>>,
    /// Set when the listener is one cluster's own port.
    pub fixed_cluster: Option<usize>,
    /// Who the client certificate presented in the handshake authenticates, if any.
    pub client: Option<ClientIdentity>,
}

impl Conn {
    /// Records that this connection serves `cluster`; true the first time.
    pub fn serves(&self, cluster: usize) -> bool {
        let mut c = self.clusters.lock().unwrap_or_else(|p| p.into_inner());
        if c.contains(&cluster) {
            false
        } else {
            c.push(cluster);
            true
        }
    }
}

/// Accepts connections until shutdown. `fixed_cluster` routes every request to one cluster.
pub async fn serve(
    listener: TcpListener,
    tls: TlsAcceptor,
    state: Arc<State>,
    fixed_cluster: Option<usize>,
) {
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = state.shutdown.cancelled() => return,
        };
        let (tcp, _) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: report, back off a little, go on.
                tracing::warn!("sim: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let (tls, state) = (tls.clone(), state.clone());
        tokio::spawn(async move { connection(tcp, tls, state, fixed_cluster).await });
    }
}

async fn connection(
    tcp: tokio::net::TcpStream,
    tls: TlsAcceptor,
    state: Arc<State>,
    fixed_cluster: Option<usize>,
) {
    let stream = match tls.accept(tcp).await {
        Ok(s) => s,
        Err(e) => {
            state.stats.tls_failures.fetch_add(1, Ordering::Relaxed);
            tracing::debug!("sim: TLS handshake failed: {e}");
            return;
        }
    };
    if stream.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
        state.stats.tls_resumed.fetch_add(1, Ordering::Relaxed);
    }
    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
    let client = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .and_then(|leaf| state.clients.identity(leaf.as_ref()));
    let stats = state.stats.clone();
    stats.connections_total.fetch_add(1, Ordering::Relaxed);
    stats.connections_open.fetch_add(1, Ordering::Relaxed);
    let by_protocol = if h2 {
        &stats.h2_connections_open
    } else {
        &stats.http1_connections_open
    };
    by_protocol.fetch_add(1, Ordering::Relaxed);

    let conn = Arc::new(Conn {
        h2,
        clusters: Mutex::new(Vec::new()),
        fixed_cluster,
        client,
    });
    let svc = {
        let (state, conn) = (state.clone(), conn.clone());
        service_fn(move |req| api::handle(state.clone(), conn.clone(), req))
    };
    let io = TokioIo::new(stream);
    let shutdown = state.shutdown.clone();
    let result = if h2 {
        let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
        builder.max_concurrent_streams(1000);
        tokio::select! {
            r = builder.serve_connection(io, svc) => r,
            _ = shutdown.cancelled() => Ok(()),
        }
    } else {
        tokio::select! {
            r = hyper::server::conn::http1::Builder::new().serve_connection(io, svc) => r,
            _ = shutdown.cancelled() => Ok(()),
        }
    };
    if let Err(e) = result {
        tracing::debug!("sim: connection ended: {e}");
    }
    stats.connections_open.fetch_sub(1, Ordering::Relaxed);
    by_protocol.fetch_sub(1, Ordering::Relaxed);
    for &c in conn
        .clusters
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
    {
        if let Some(cluster) = state.world.clusters.get(c) {
            cluster.counters.connections.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
