//! The collector's HTTP endpoints, for the Kubernetes that runs it and for Prometheus:
//! `/healthz` (its loop turns), `/readyz` (and its bus is reachable) and `/metrics` (the text
//! format). Plain HTTP/1.1, GET only, nothing read from a request but its line and headers
//! (bounded in size and time), at most [`CONNECTIONS`] connections at once.

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

use super::status::{Status, render};

/// Connections served at once; more wait to be accepted.
const CONNECTIONS: usize = 64;

/// A request's line and headers must arrive within this.
const HEADERS_WITHIN: Duration = Duration::from_secs(10);

/// Serves until `stop` fires.
pub async fn serve(listener: TcpListener, status: Arc<Status>, stop: CancellationToken) {
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
                tracing::debug!(error = %e, "accepting a connection to the collector's endpoints");
                continue;
            }
        };
        let status = status.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let status = status.clone();
                async move { Ok::<_, Infallible>(answer(&status, &request)) }
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
                        tracing::debug!(error = %e, "a connection to the collector's endpoints");
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
fn answer(status: &Status, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into());
    }
    let now = tokio::time::Instant::now();
    let probe = |result: super::status::Probe| match result {
        Ok(()) => text(StatusCode::OK, "ok\n".into()),
        Err(why) => text(StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")),
    };
    match request.uri().path() {
        "/healthz" | "/livez" => probe(status.healthz(now)),
        "/readyz" => probe(status.readyz(now)),
        "/metrics" => {
            let mut response = text(StatusCode::OK, render(&status.snapshot()));
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
