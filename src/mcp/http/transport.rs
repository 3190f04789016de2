//! The connections of `mcp --listen`: at most [`CONNECTIONS`] at once, TLS where given, their
//! handshakes and heads bounded in time, HTTP/1.1 or HTTP/2, every request handed to the answer
//! it is given (the gate, then the MCP service).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Connections served at once; more wait to be accepted.
const CONNECTIONS: usize = 256;
/// A connection's TLS handshake and each request's head must arrive within this.
const HEADS_WITHIN: Duration = Duration::from_secs(10);

/// Accepts connections on `listener` until `stop` fires, each request answered by `answer`.
pub(super) async fn accept<A, F, B>(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    answer: A,
    stop: CancellationToken,
) where
    A: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
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
        let (answer, tls, stop) = (answer.clone(), tls.clone(), stop.clone());
        tokio::spawn(async move {
            let served = async {
                match tls {
                    Some(tls) => {
                        let handshake = tokio::time::timeout(HEADS_WITHIN, tls.accept(stream));
                        match handshake.await {
                            Ok(Ok(stream)) => connection(stream, peer, answer).await,
                            Ok(Err(e)) => tracing::debug!(error = %e, %peer, "MCP TLS handshake"),
                            Err(_) => tracing::debug!(%peer, "MCP TLS handshake timed out"),
                        }
                    }
                    None => connection(stream, peer, answer).await,
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
async fn connection<IO, A, F, B>(stream: IO, peer: SocketAddr, answer: A)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    A: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let service = hyper::service::service_fn(move |request| {
        let answered = answer(request, peer);
        async move { Ok::<_, Infallible>(answered.await) }
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
