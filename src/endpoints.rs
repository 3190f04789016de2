//! The endpoints a long-running fluxfleet (`collect`, `mcp --listen`) offers the Kubernetes that
//! runs it and Prometheus: `/healthz` (`/livez`), `/readyz` and `/metrics` (the text format), each
//! answered by what the process says of itself ([`Endpoints`]). Plain HTTP/1.1, GET only, nothing
//! read from a request but its line and headers (bounded in size and time), at most
//! [`CONNECTIONS`] connections at once.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Connections served at once; more wait to be accepted.
const CONNECTIONS: usize = 64;

/// A request's line and headers must arrive within this.
const HEADERS_WITHIN: Duration = Duration::from_secs(10);

/// What a process says of itself to its probes and to Prometheus.
pub trait Endpoints: Send + Sync + 'static {
    /// Why a probe fails: its words are the probe's answer (503).
    type NotReady: std::fmt::Display;
    /// `/healthz`: it works (else why not).
    fn healthz(&self) -> Result<(), Self::NotReady>;
    /// `/readyz`: it can serve (else why not).
    fn readyz(&self) -> Result<(), Self::NotReady>;
    /// `/metrics`, in the text format.
    fn metrics(&self) -> String;
}

/// A port that could not be listened on.
#[derive(Debug, thiserror::Error)]
#[error("serving {what} on {addr}: {why}")]
pub struct BindError {
    what: &'static str,
    addr: std::net::SocketAddr,
    why: std::io::Error,
}

/// Serves `/metrics` on `metrics` and the probes on `health` (one listener when they are the
/// same) until `stop` fires; a port already taken is an error before anything is served.
pub async fn start<E: Endpoints>(
    (metrics, health): (Option<std::net::SocketAddr>, Option<std::net::SocketAddr>),
    endpoints: Arc<E>,
    stop: &CancellationToken,
) -> Result<Vec<Served>, BindError> {
    let mut addresses: Vec<(std::net::SocketAddr, &'static str)> = Vec::new();
    if let Some(at) = metrics {
        addresses.push((at, "/metrics"));
    }
    if let Some(at) = health {
        match addresses.iter_mut().find(|(a, _)| *a == at) {
            Some(same) => same.1 = "/metrics, /healthz and /readyz",
            None => addresses.push((at, "/healthz and /readyz")),
        }
    }
    let mut listeners = Vec::new();
    for (addr, what) in addresses {
        let listener =
            TcpListener::bind(addr)
                .await
                .map_err(|why| BindError { what, addr, why })?;
        listeners.push((listener, addr, what));
    }
    let mut served = Vec::new();
    for (listener, addr, what) in listeners {
        tokio::spawn(serve(listener, endpoints.clone(), stop.clone()));
        served.push(Served { what, addr });
    }
    Ok(served)
}

/// What is served where, for the command to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Served {
    pub what: &'static str,
    pub addr: std::net::SocketAddr,
}

impl std::fmt::Display for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "serving {} on http://{}", self.what, self.addr)
    }
}

/// Serves until `stop` fires.
pub async fn serve<E: Endpoints>(listener: TcpListener, status: Arc<E>, stop: CancellationToken) {
    let slots = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, _) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::debug!(error = %e, "accepting a connection to the probes' endpoints");
                continue;
            }
        };
        let status = status.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let status = status.clone();
                async move { Ok::<_, Infallible>(answer(&*status, &request)) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADERS_WITHIN)
                .max_buf_size(16 * 1024);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = stop.cancelled() => {}
                result = connection => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "a connection to the probes' endpoints");
                    }
                }
            }
            drop(permit);
        });
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The answer to one request.
fn answer<E: Endpoints>(status: &E, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into());
    }
    let probe = |result: Result<(), E::NotReady>| match result {
        Ok(()) => text(StatusCode::OK, "ok\n".into()),
        Err(why) => text(StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")),
    };
    match request.uri().path() {
        "/healthz" | "/livez" => probe(status.healthz()),
        "/readyz" => probe(status.readyz()),
        "/metrics" => {
            let mut response = text(StatusCode::OK, status.metrics());
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            response
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: /healthz, /readyz and /metrics are served\n".into(),
        ),
    }
}
