//! fluxfleet's own HTTP/2 client, under every cluster's watches: a crate of its own, so that
//! what we own instead of the h2 crate is built, tested and fuzzed where everyone can see it
//! (`cargo test -p fluxfleet-h2`; the fuzz targets in `fuzz.rs`, behind the `testing` feature,
//! run as `docs/fuzzing.md` says).
//!
//! hyper's client costs about 60 KiB per connection whatever the connection carries: h2 keeps a
//! 16 KiB write buffer and its read buffers for the connection's life, hyper a dispatch queue,
//! h2 slabs of streams and frames. A fleet holds one connection per cluster, so at 10,000
//! clusters that alone was 600 MiB. This client keeps per connection only what its streams need
//! at the moment: a frame is read into an allocation of its own size and handed to its reader
//! as it is; what is written is let go once written; HPACK runs with no dynamic table.
//!
//! It speaks what a Kubernetes API client needs, and the rest of HTTP/2 as the protocol
//! requires: flow control both ways, SETTINGS, PING (answering, and pinging a quiet
//! connection), GOAWAY, RST_STREAM both ways (a caller that lets go of a response cancels its
//! stream), CONTINUATION, padding, informational answers, trailers. It does not do server push
//! (disabled in SETTINGS) or priorities (ignored, as the protocol allows).
//!
//! Every server is untrusted: what a hostile one can make a connection hold, and how it is
//! told so, is in `driver` (backpressure, a budget of frames that carry nothing, windows given
//! back as callers read, the stream states of RFC 9113) and `driver::fields` (the rules of an
//! answer's fields). `attacks` tests each attack with what h2 and Go's client do in its place;
//! `props` tests the decoders against an independent HPACK implementation.

mod conn;
mod driver;
mod frame;
#[cfg(feature = "testing")]
pub mod fuzz;
mod hpack;
mod huffman;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, Uri};
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Frame};
use tower::{BoxError, Service, ServiceExt};

use conn::{Conn, Stream};
pub use conn::{H2Error, Why};
use driver::Driver;
pub use driver::SILENT_DEADLINE;

/// The largest request body sent (patches and reviews are a few KiB).
const REQUEST_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// A body that yields `data`, then ends (`broken` None) or fails as a broken stream does: for
/// the tests of code that reads answers.
#[cfg(feature = "testing")]
pub fn scripted(data: &[u8], broken: Option<&str>) -> H2Body {
    let stream = Arc::new(Stream::new());
    stream.update(|cell| {
        cell.push(Bytes::copy_from_slice(data));
        match broken {
            Some(why) => {
                cell.broken = Some(conn::Broken::new(
                    io::ErrorKind::ConnectionReset,
                    conn::Why::Closed,
                    why,
                ))
            }
            None => cell.end = true,
        }
    });
    let conn = Arc::new(Conn::default());
    H2Body {
        handle: Handle { conn, stream },
    }
}

/// A body that yields `data`, then waits, its connection going away (GOAWAY): for the tests of
/// code that moves a watch.
#[cfg(feature = "testing")]
pub fn scripted_going_away(data: &[u8]) -> H2Body {
    let stream = Arc::new(Stream::new());
    stream.update(|cell| {
        cell.push(Bytes::copy_from_slice(data));
        cell.away = true;
    });
    H2Body {
        handle: Handle {
            conn: Arc::new(Conn::default()),
            stream,
        },
    }
}

/// A caller's hold on one stream; letting go of it cancels the stream.
struct Handle {
    conn: Arc<Conn>,
    stream: Arc<Stream>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.stream.lock().dropped = true;
        self.conn.wake();
    }
}

/// The body of an answer over HTTP/2.
pub struct H2Body {
    handle: Handle,
}

impl std::fmt::Debug for H2Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("H2Body")
    }
}

impl HttpBody for H2Body {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.get_mut().poll_data(cx)
    }

    fn is_end_stream(&self) -> bool {
        let cell = self.handle.stream.lock();
        cell.end && cell.drained()
    }
}

impl H2Body {
    /// Whether the server said its connection is going away (GOAWAY): this answer goes on,
    /// and a new request goes to a new connection. The body's reader is woken when it is said.
    pub fn going_away(&self) -> bool {
        self.handle.stream.lock().away
    }

    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let mut cell = self.handle.stream.lock();
        if let Some(data) = cell.pop() {
            let before = cell.consumed;
            cell.consumed += data.len() as u32;
            // The driver hears of what was read often enough to give back the connection's
            // window before the server runs out of it, and not at every read.
            let give_back =
                before < conn::WAKE_AFTER_READ && cell.consumed >= conn::WAKE_AFTER_READ;
            drop(cell);
            if give_back {
                self.handle.conn.wake();
            }
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        if let Some(broken) = &cell.broken {
            return Poll::Ready(Some(Err(broken.error())));
        }
        if cell.end {
            return Poll::Ready(None);
        }
        cell.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Waits for the head of the answer on `handle`'s stream.
async fn answer(handle: Handle) -> Result<Response<H2Body>, io::Error> {
    let parts = std::future::poll_fn(|cx| {
        let mut cell = handle.stream.lock();
        if let Some(parts) = cell.head.take() {
            return Poll::Ready(Ok(*parts));
        }
        if let Some(broken) = &cell.broken {
            return Poll::Ready(Err(broken.error()));
        }
        if cell.end {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the server ended the stream without an answer",
            )));
        }
        cell.waker = Some(cx.waker().clone());
        Poll::Pending
    })
    .await?;
    Ok(Response::from_parts(parts, H2Body { handle }))
}

/// One cluster's HTTP/2 service: one connection at a time, made when the first request needs
/// it and again after it breaks. Cheap to clone; the connection closes once every clone is gone
/// and its streams are done.
pub struct Client<C> {
    pool: Arc<Pool<C>>,
}

impl<C> Clone for Client<C> {
    fn clone(&self) -> Client<C> {
        Client {
            pool: self.pool.clone(),
        }
    }
}

struct Pool<C> {
    /// Held while connecting, so that concurrent first requests share one connection.
    connector: tokio::sync::Mutex<C>,
    live: Mutex<Option<Arc<Conn>>>,
}

impl<C> Drop for Pool<C> {
    fn drop(&mut self) {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(conn) = live {
            conn.abandon();
        }
    }
}

impl<C> Client<C>
where
    C: Service<Uri, Error = BoxError> + Send + 'static,
    C::Response: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    C::Future: Send,
{
    pub fn new(connector: C) -> Client<C> {
        Client {
            pool: Arc::new(Pool {
                connector: tokio::sync::Mutex::new(connector),
                live: Mutex::new(None),
            }),
        }
    }

    fn usable(&self) -> Option<Arc<Conn>> {
        let live = self.pool.live.lock().unwrap_or_else(|e| e.into_inner());
        live.as_ref().filter(|conn| conn.usable()).cloned()
    }

    async fn connection(&self, uri: &Uri) -> Result<Arc<Conn>, BoxError> {
        if let Some(conn) = self.usable() {
            return Ok(conn);
        }
        let mut connector = self.pool.connector.lock().await;
        if let Some(conn) = self.usable() {
            return Ok(conn);
        }
        let io = connector.ready().await?.call(uri.clone()).await?;
        let server = uri.authority().map_or("", |a| a.as_str());
        let conn = Arc::new(Conn::new(server));
        tokio::spawn(Driver::new(hyper_util::rt::TokioIo::new(io), conn.clone()));
        let old = self
            .pool
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(conn.clone());
        if let Some(old) = old {
            old.abandon();
        }
        Ok(conn)
    }

    async fn send<B>(self, request: Request<B>) -> Result<Response<H2Body>, BoxError>
    where
        B: HttpBody<Data = Bytes>,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = request.into_parts();
        let body = http_body_util::Limited::new(body, REQUEST_BODY_LIMIT)
            .collect()
            .await?
            .to_bytes();
        let block = header_block(&parts)?;
        let conn = self.connection(&parts.uri).await?;
        let stream = conn.open(block, body)?;
        Ok(answer(Handle { conn, stream }).await?)
    }
}

impl<C, B> Service<Request<B>> for Client<C>
where
    C: Service<Uri, Error = BoxError> + Send + 'static,
    C::Response: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    C::Future: Send,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<H2Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<H2Body>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        Box::pin(self.clone().send(request))
    }
}

/// Headers that mean something only to one HTTP/1.1 hop (RFC 9113, 8.2.2).
const HOP_BY_HOP: [&str; 6] = [
    "connection",
    "host",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// The request's header block: pseudo-headers from the method and URI, then its fields.
fn header_block(parts: &http::request::Parts) -> Result<Vec<u8>, BoxError> {
    let uri = &parts.uri;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(format!("a request to {uri} without a server").into());
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut block = Vec::with_capacity(128);
    for (name, value) in [
        (":method", parts.method.as_str()),
        (":scheme", scheme),
        (":authority", authority.as_str()),
        (":path", path),
    ] {
        match hpack::find_static(name, value) {
            (Some(index), _) => hpack::indexed(&mut block, index),
            (None, Some(index)) => hpack::indexed_name(&mut block, index, value.as_bytes()),
            (None, None) => hpack::literal(&mut block, name.as_bytes(), value.as_bytes(), false),
        }
    }
    for (name, value) in &parts.headers {
        let name = name.as_str();
        if HOP_BY_HOP.contains(&name) || (name == "te" && value != "trailers") {
            continue;
        }
        let sensitive = value.is_sensitive()
            || matches!(name, "authorization" | "proxy-authorization" | "cookie");
        hpack::literal(&mut block, name.as_bytes(), value.as_bytes(), sensitive);
    }
    Ok(block)
}

#[cfg(test)]
mod attacks;
#[cfg(test)]
mod going_away;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
