//! Accepting connections: TLS with ALPN, then HTTP/2 or HTTP/1.1 as negotiated, and the
//! connection accounting behind `/sim/stats`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::state::{Conn, State};
use super::{api, hangup};

/// Accepts connections until shutdown. `fixed_cluster` routes every request to one cluster,
/// whose port is closed while its server drains.
pub async fn serve(
    listener: TcpListener,
    tls: TlsAcceptor,
    state: Arc<State>,
    fixed_cluster: Option<usize>,
) {
    let own = fixed_cluster.and_then(|i| state.world.clusters.get(i).cloned());
    let mut faults = own.as_ref().map(|c| c.faults_set.subscribe());
    let mut listener = listener;
    loop {
        if let Some(c) = &own {
            match hangup::closed_while_draining(listener, c, &state.shutdown).await {
                Some(open) => listener = open,
                None => return,
            }
        }
        let changed = async {
            if let Some(rx) = faults.as_mut()
                && rx.changed().await.is_ok()
            {
                return;
            }
            std::future::pending::<()>().await
        };
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = state.shutdown.cancelled() => return,
            () = changed => continue,
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
    let target = hangup::Target::default();
    if let Some(c) = fixed_cluster.and_then(|i| state.world.clusters.get(i)) {
        let _ = target.set(c.clone());
    }
    let tcp = hangup::Quiet::new(tcp, target.clone());
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
    if target.get().is_none()
        && let Some(c) = hangup::named(&state.world, stream.get_ref().1.server_name())
    {
        let _ = target.set(c);
    }
    let cluster = target.get().cloned();
    // A draining server takes no connection (on its own port the port is closed; here, on the
    // shared one, the connection is closed as soon as its TLS name says which cluster it is for).
    if let Some(c) = cluster.as_ref().filter(|c| c.refuses()) {
        c.counters.refused.fetch_add(1, Ordering::Relaxed);
        return;
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
        let serving = builder.serve_connection(io, svc);
        tokio::pin!(serving);
        hangup::serve(serving, |c| c.graceful_shutdown(), cluster, &shutdown).await
    } else {
        let serving = hyper::server::conn::http1::Builder::new().serve_connection(io, svc);
        tokio::pin!(serving);
        hangup::serve(serving, |c| c.graceful_shutdown(), cluster, &shutdown).await
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
