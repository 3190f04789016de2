//! The client against a scripted server on an in-memory pipe: what it sends, and what it does
//! with what a server (well-behaved or not) sends back.

use std::sync::Arc;

use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::conn::{Conn, STREAM_WINDOW};
use super::driver::Driver;
use super::frame::{self, Head};
use super::{H2Body, H2Error, Handle, Why, answer, hpack};

/// Why this client ended a stream, from the error it returned.
fn why(e: &std::io::Error) -> Option<Why> {
    H2Error::of(e).map(|e| e.why)
}

/// The server's end of the pipe.
pub(super) struct Server {
    pub(super) io: DuplexStream,
}

impl Server {
    /// The next frame; a client that sends nothing for two minutes (more than the keep-alive)
    /// fails the test.
    pub(super) async fn frame(&mut self) -> (Head, Vec<u8>) {
        let reading = async {
            let mut head = [0u8; 9];
            self.io.read_exact(&mut head).await.unwrap();
            let head = Head::parse(&head);
            let mut payload = vec![0; head.len];
            self.io.read_exact(&mut payload).await.unwrap();
            (head, payload)
        };
        tokio::time::timeout(std::time::Duration::from_secs(120), reading)
            .await
            .expect("the client sent nothing more")
    }

    /// The next frame of `kind`, skipping others (SETTINGS, WINDOW_UPDATE…).
    pub(super) async fn next(&mut self, kind: u8) -> (Head, Vec<u8>) {
        loop {
            let (head, payload) = self.frame().await;
            if head.kind == kind {
                return (head, payload);
            }
        }
    }

    pub(super) async fn send(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        let mut out = Vec::new();
        frame::put(&mut out, kind, flags, stream, payload);
        self.io.write_all(&out).await.unwrap();
    }

    /// Answers `stream` with `status` and a content-type.
    pub(super) async fn head(&mut self, stream: u32, status: &str, end_stream: bool) {
        let mut block = Vec::new();
        hpack::indexed_name(&mut block, 8, status.as_bytes());
        hpack::literal(&mut block, b"content-type", b"application/json", false);
        let flags = frame::END_HEADERS | if end_stream { frame::END_STREAM } else { 0 };
        self.send(frame::HEADERS, flags, stream, &block).await;
    }
}

/// A client connection and the server's end; the preface is checked.
pub(super) async fn connected() -> (Arc<Conn>, Server) {
    connected_through(1 << 20).await
}

/// [`connected`] through a pipe that buffers `capacity` bytes each way.
pub(super) async fn connected_through(capacity: usize) -> (Arc<Conn>, Server) {
    let (client, server) = tokio::io::duplex(capacity);
    let conn = Arc::new(Conn::new("api.example:6443"));
    tokio::spawn(Driver::new(client, conn.clone()));
    let mut server = Server { io: server };
    let mut preface = [0u8; 24];
    server.io.read_exact(&mut preface).await.unwrap();
    assert_eq!(&preface, frame::PREFACE);
    (conn, server)
}

pub(super) fn get(path: &str) -> Vec<u8> {
    let request = http::Request::get(format!("https://api.example:6443{path}"))
        .header("authorization", "Bearer secret-token")
        .header("connection", "keep-alive")
        .body(())
        .unwrap();
    super::header_block(&request.into_parts().0).unwrap()
}

pub(super) async fn request(
    conn: &Arc<Conn>,
    path: &str,
) -> tokio::task::JoinHandle<std::io::Result<http::Response<H2Body>>> {
    let stream = conn.open(get(path), bytes::Bytes::new()).unwrap();
    let handle = Handle {
        conn: conn.clone(),
        stream,
    };
    tokio::spawn(answer(handle))
}

fn fields(block: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    hpack::Decoder::new(0)
        .decode(block, |n, v| {
            out.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ));
            Ok(())
        })
        .unwrap();
    out
}

pub(super) async fn body_text(response: http::Response<H2Body>) -> std::io::Result<String> {
    let body = response.into_body().collect().await?;
    Ok(String::from_utf8_lossy(&body.to_bytes()).into_owned())
}

#[tokio::test]
async fn a_request_goes_out_as_http2_and_its_answer_comes_back_in_frames() {
    let (conn, mut server) = connected().await;
    let (settings, payload) = server.frame().await;
    assert_eq!(settings.kind, frame::SETTINGS);
    // Push disabled, no header table.
    assert!(payload.chunks(6).any(|e| e == [0, 2, 0, 0, 0, 0]));
    assert!(payload.chunks(6).any(|e| e == [0, 1, 0, 0, 0, 0]));
    server.send(frame::SETTINGS, 0, 0, &[]).await;
    let answering = request(&conn, "/apis?watch=1").await;
    let (head, block) = server.next(frame::HEADERS).await;
    assert_eq!(head.stream, 1);
    assert_eq!(head.flags, frame::END_HEADERS | frame::END_STREAM);
    assert_eq!(
        fields(&block),
        [
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "api.example:6443"),
            (":path", "/apis?watch=1"),
            ("authorization", "Bearer secret-token"),
        ]
        .map(|(n, v)| (n.to_string(), v.to_string()))
    );
    server.head(1, "200", false).await;
    server.send(frame::DATA, 0, 1, b"{\"a\":").await;
    // Padded: one byte of length, three of padding.
    server
        .send(
            frame::DATA,
            frame::PADDED | frame::END_STREAM,
            1,
            b"\x031}\0\0\0",
        )
        .await;
    let response = answering.await.unwrap().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.version(), http::Version::HTTP_2);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(body_text(response).await.unwrap(), "{\"a\":1}");
}

#[tokio::test]
async fn the_queue_of_requests_lets_go_of_its_room_once_each_has_a_stream() {
    let (conn, mut server) = connected().await;
    server.send(frame::SETTINGS, 0, 0, &[]).await;
    // A cluster's watches open together, then the connection serves them for hours.
    let mut answering = Vec::new();
    for i in 0..8 {
        answering.push(request(&conn, &format!("/apis/kind-{i}?watch=1")).await);
    }
    for _ in 0..8 {
        server.next(frame::HEADERS).await;
    }
    let shared = conn.lock();
    assert!(shared.opening.is_empty());
    assert_eq!(shared.opening.capacity(), 0);
}

#[tokio::test]
async fn pings_and_settings_are_answered() {
    let (_conn, mut server) = connected().await;
    server
        .send(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 10])
        .await;
    let (ack, payload) = server.next(frame::SETTINGS).await;
    // The client's own SETTINGS came first; then the acknowledgement.
    assert_eq!(ack.flags, 0);
    assert!(!payload.is_empty());
    let (ack, _) = server.next(frame::SETTINGS).await;
    assert_eq!(ack.flags, frame::ACK);
    server.send(frame::PING, 0, 0, b"12345678").await;
    let (pong, payload) = server.next(frame::PING).await;
    assert_eq!((pong.flags, &payload[..]), (frame::ACK, &b"12345678"[..]));
}

#[tokio::test]
async fn letting_go_of_an_answer_cancels_its_stream_and_reading_gives_back_the_window() {
    let (conn, mut server) = connected().await;
    let answering = request(&conn, "/watch").await;
    server.next(frame::HEADERS).await;
    server.head(1, "200", false).await;
    let mut body = answering.await.unwrap().unwrap().into_body();
    // More than half the stream's window, read by the caller: the server may send it again.
    let chunk = vec![b'x'; frame::MAX_FRAME];
    let frames = (STREAM_WINDOW as usize / 2) / frame::MAX_FRAME + 1;
    for _ in 0..frames {
        server.send(frame::DATA, 0, 1, &chunk).await;
    }
    let mut read = 0;
    while read < frames * frame::MAX_FRAME {
        let data = body.frame().await.unwrap().unwrap().into_data().unwrap();
        read += data.len();
    }
    let (update, increment) = loop {
        let (head, payload) = server.next(frame::WINDOW_UPDATE).await;
        if head.stream == 1 {
            break (head, payload);
        }
    };
    assert_eq!(update.stream, 1);
    assert_eq!(
        u32::from_be_bytes(increment.try_into().unwrap()) as usize,
        frames * frame::MAX_FRAME
    );
    drop(body);
    let (reset, code) = server.next(frame::RST_STREAM).await;
    assert_eq!(reset.stream, 1);
    assert_eq!(code, frame::CANCEL.to_be_bytes());
}

#[tokio::test]
async fn a_server_overrunning_a_window_fails_that_stream_and_not_the_others() {
    let (conn, mut server) = connected().await;
    let greedy = request(&conn, "/greedy").await;
    server.next(frame::HEADERS).await;
    let fine = request(&conn, "/fine").await;
    server.next(frame::HEADERS).await;
    server.head(1, "200", false).await;
    server.head(3, "200", false).await;
    let greedy = greedy.await.unwrap().unwrap();
    // The connection's window was raised to 4 MiB; the stream's is 1 MiB.
    let chunk = vec![b'x'; frame::MAX_FRAME];
    for _ in 0..=(STREAM_WINDOW as usize / frame::MAX_FRAME) {
        server.send(frame::DATA, 0, 1, &chunk).await;
    }
    let (reset, code) = server.next(frame::RST_STREAM).await;
    assert_eq!(reset.stream, 1);
    assert_eq!(code, frame::FLOW_CONTROL_ERROR.to_be_bytes());
    let e = http_body_util::BodyExt::collect(greedy.into_body())
        .await
        .unwrap_err();
    assert_eq!(
        why(&e),
        Some(Why::Violation {
            code: frame::FLOW_CONTROL_ERROR
        })
    );
    server.send(frame::DATA, frame::END_STREAM, 3, b"ok").await;
    assert_eq!(body_text(fine.await.unwrap().unwrap()).await.unwrap(), "ok");
    assert!(conn.usable());
}

#[tokio::test]
async fn goaway_fails_the_streams_the_server_never_saw_and_closes_the_connection_to_new_ones() {
    let (conn, mut server) = connected().await;
    let seen = request(&conn, "/seen").await;
    server.next(frame::HEADERS).await;
    let unseen = request(&conn, "/unseen").await;
    server.next(frame::HEADERS).await;
    server
        .send(frame::GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0])
        .await;
    let e = unseen.await.unwrap().unwrap_err();
    assert_eq!(why(&e), Some(Why::Ended { code: 0 }), "{e}");
    assert!(!conn.usable());
    assert!(conn.open(get("/later"), bytes::Bytes::new()).is_err());
    // The stream the server saw still ends normally.
    server.head(1, "404", true).await;
    let seen = seen.await.unwrap().unwrap();
    assert_eq!(seen.status(), 404);
}

#[tokio::test]
async fn a_server_breaking_the_protocol_ends_the_connection_with_a_clear_error() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    // An index into a header table the client said it does not keep.
    server
        .send(frame::HEADERS, frame::END_HEADERS, 1, &[0xbe])
        .await;
    let e = waiting.await.unwrap().unwrap_err();
    assert_eq!(
        why(&e),
        Some(Why::Violation {
            code: frame::COMPRESSION_ERROR
        })
    );
    // A clear error: the server and what it did, in words.
    assert!(
        e.to_string()
            .contains("the server api.example:6443 broke HTTP/2: a header index beyond the table"),
        "{e}"
    );
    let (goaway, payload) = server.next(frame::GOAWAY).await;
    assert_eq!(goaway.stream, 0);
    assert_eq!(payload[4..], frame::COMPRESSION_ERROR.to_be_bytes());
    assert!(!conn.usable());
}

#[tokio::test]
async fn a_vanished_server_fails_the_waiting_streams() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    drop(server);
    let e = waiting.await.unwrap().unwrap_err();
    assert_eq!(why(&e), Some(Why::Closed), "{e}");
    assert!(!conn.usable());
}

#[tokio::test]
async fn an_informational_answer_is_skipped_and_a_reset_stream_says_so() {
    let (conn, mut server) = connected().await;
    let first = request(&conn, "/a").await;
    server.next(frame::HEADERS).await;
    let second = request(&conn, "/b").await;
    server.next(frame::HEADERS).await;
    server.head(1, "100", false).await;
    server.head(1, "201", true).await;
    assert_eq!(first.await.unwrap().unwrap().status(), 201);
    server
        .send(frame::RST_STREAM, 0, 3, &frame::CANCEL.to_be_bytes())
        .await;
    let e = second.await.unwrap().unwrap_err();
    assert_eq!(
        why(&e),
        Some(Why::Ended {
            code: frame::CANCEL
        }),
        "{e}"
    );
    assert!(conn.usable());
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_does_not_answer_a_ping_is_dead_and_an_idle_one_closes() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/watch").await;
    server.next(frame::HEADERS).await;
    // Quiet for KEEPALIVE: the client pings, and the server does not answer.
    let quiet = tokio::time::Instant::now();
    server.next(frame::PING).await;
    assert_eq!(quiet.elapsed(), super::driver::KEEPALIVE);
    let e = waiting.await.unwrap().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert_eq!(why(&e), Some(Why::PingUnanswered), "{e}");
    assert!(!conn.usable());

    // Answered pings keep a connection without requests for 90 s, no longer.
    let (conn, mut server) = connected().await;
    let started = tokio::time::Instant::now();
    let mut pings = 0;
    loop {
        let mut head = [0u8; 9];
        if server.io.read_exact(&mut head).await.is_err() {
            break;
        }
        let head = Head::parse(&head);
        let mut payload = vec![0; head.len];
        server.io.read_exact(&mut payload).await.unwrap();
        if head.kind == frame::PING && head.flags & frame::ACK == 0 {
            pings += 1;
            server.send(frame::PING, frame::ACK, 0, &payload).await;
        }
    }
    assert!(started.elapsed() >= std::time::Duration::from_secs(90));
    assert!(
        pings >= 8,
        "a quiet connection is pinged every 10 s: {pings}"
    );
    assert!(!conn.usable());
}
