//! A server going away gracefully (GOAWAY NO_ERROR), as Go's HTTP/2 server and h2's say it when
//! their process is told to stop: first with the highest stream id, then, a round trip later,
//! with the last stream they took. The connection takes no new stream; the streams the server
//! took go on and are told, so that their caller can move them; a new request opens a new
//! connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Body as _;
use tokio::io::{AsyncReadExt, DuplexStream};
use tower::BoxError;

use super::frame;
use super::tests::{Server, body_text, connected, get, request};
use super::{Client, H2Body, H2Error, Why};

/// GOAWAY with `last` and NO_ERROR.
async fn graceful(server: &mut Server, last: u32) {
    let mut payload = last.to_be_bytes().to_vec();
    payload.extend_from_slice(&0u32.to_be_bytes()); // NO_ERROR
    server.send(frame::GOAWAY, 0, 0, &payload).await;
}

/// Waits until `body` has nothing to read and says its connection is going away.
async fn told(body: &mut H2Body) {
    std::future::poll_fn(|cx| match std::pin::Pin::new(&mut *body).poll_frame(cx) {
        Poll::Pending if body.going_away() => Poll::Ready(()),
        Poll::Pending => Poll::Pending,
        Poll::Ready(other) => panic!("the body went on: {:?}", other.map(|f| f.is_ok())),
    })
    .await;
}

#[tokio::test]
async fn a_graceful_goaway_takes_no_new_stream_and_the_streams_it_took_go_on_and_are_told() {
    let (conn, mut server) = connected().await;
    let watch = request(&conn, "/watch").await;
    server.next(frame::HEADERS).await;
    server.head(1, "200", false).await;
    let mut watch = watch.await.unwrap().unwrap().into_body();
    assert!(!watch.going_away());
    let queued = request(&conn, "/list").await;
    server.next(frame::HEADERS).await;

    // First GOAWAY: every stream may still be the server's.
    graceful(&mut server, (1 << 31) - 1).await;
    told(&mut watch).await;
    assert!(!conn.usable(), "no new stream on a connection going away");
    let Err(e) = conn.open(get("/later"), Bytes::new()) else {
        panic!("a new stream on a connection going away")
    };
    assert_eq!(H2Error::of(&e).map(|e| e.why), Some(Why::Ended { code: 0 }));

    // The second names the last stream the server took: stream 3 was never seen, and fails.
    graceful(&mut server, 1).await;
    let e = queued.await.unwrap().unwrap_err();
    assert_eq!(H2Error::of(&e).map(|e| e.why), Some(Why::Ended { code: 0 }));
    assert!(e.to_string().contains("GOAWAY"), "{e}");

    // Stream 1 goes on to its end, its data read in full.
    server
        .send(frame::DATA, 0, 1, b"{\"type\":\"ADDED\"}\n")
        .await;
    server
        .send(frame::DATA, frame::END_STREAM, 1, b"{}\n")
        .await;
    let read = watch.collect().await.unwrap().to_bytes();
    assert_eq!(&read[..], b"{\"type\":\"ADDED\"}\n{}\n");

    // With its last stream done, the connection closes.
    let mut rest = [0u8; 256];
    while server.io.read(&mut rest).await.unwrap() > 0 {}
}

/// The client end of a pipe, as a connector returns it.
type Pipe = hyper_util::rt::TokioIo<DuplexStream>;

/// A connector handing out the client ends of pipes, counting them; the server ends arrive on
/// the channel.
fn pipes() -> (
    tower::util::BoxService<http::Uri, Pipe, BoxError>,
    tokio::sync::mpsc::UnboundedReceiver<Server>,
    Arc<AtomicUsize>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let made = Arc::new(AtomicUsize::new(0));
    let count = made.clone();
    let connector = tower::service_fn(move |_: http::Uri| {
        count.fetch_add(1, Ordering::SeqCst);
        let (client, server) = tokio::io::duplex(1 << 20);
        let _ = tx.send(Server { io: server });
        futures::future::ready(Ok::<_, BoxError>(hyper_util::rt::TokioIo::new(client)))
    });
    (tower::util::BoxService::new(connector), rx, made)
}

/// Reads the preface and the client's first frames up to its first request; its stream id.
async fn first_request(server: &mut Server) -> u32 {
    let mut preface = [0u8; 24];
    server.io.read_exact(&mut preface).await.unwrap();
    assert_eq!(&preface, frame::PREFACE);
    server.next(frame::HEADERS).await.0.stream
}

#[tokio::test]
async fn after_goaway_the_client_sends_new_requests_on_a_new_connection() {
    let (connector, mut servers, made) = pipes();
    let client = Client::new(connector);
    let get = |path: &str| {
        let request = http::Request::get(format!("https://api.example:6443{path}"))
            .body(http_body_util::Empty::<Bytes>::new())
            .unwrap();
        tokio::spawn(client.clone().send(request))
    };
    let watch = get("/watch");
    let mut old = servers.recv().await.unwrap();
    assert_eq!(first_request(&mut old).await, 1);
    old.head(1, "200", false).await;
    let mut watch = watch.await.unwrap().unwrap().into_body();

    graceful(&mut old, (1 << 31) - 1).await;
    told(&mut watch).await;
    // The owner moves: a new request goes to a new connection, at once.
    let moved = get("/watch?resourceVersion=7");
    let mut new = servers.recv().await.unwrap();
    assert_eq!(first_request(&mut new).await, 1);
    assert_eq!(made.load(Ordering::SeqCst), 2);
    new.head(1, "200", true).await;
    assert_eq!(moved.await.unwrap().unwrap().status(), 200);

    // The old stream still reads what the old server sends; letting go of it cancels it, and
    // the old connection, with no stream left, closes.
    old.send(frame::DATA, 0, 1, b"late\n").await;
    let data = watch.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(&data[..], b"late\n");
    drop(watch);
    let (reset, _) = old.next(frame::RST_STREAM).await;
    assert_eq!(reset.stream, 1);
    let mut rest = [0u8; 256];
    while old.io.read(&mut rest).await.unwrap() > 0 {}

    // Another request stays on the new connection.
    let again = get("/list");
    assert_eq!(new.next(frame::HEADERS).await.0.stream, 3);
    new.head(3, "200", false).await;
    new.send(frame::DATA, frame::END_STREAM, 3, b"ok").await;
    assert_eq!(
        body_text(again.await.unwrap().unwrap()).await.unwrap(),
        "ok"
    );
    assert_eq!(made.load(Ordering::SeqCst), 2);
}
