//! The client against hostile servers, one attack per test, on the in-memory pipe: each asserts
//! the error the caller hears, what the server is told, and that what the driver holds stays
//! bounded by its own accounting (`Conn::peak_held`), never by wall time. Each says what the h2
//! crate (hyper's client) and Go's client (kubectl's) do in the same case.

use tokio::io::AsyncWriteExt;

use super::conn::{CONNECTION_WINDOW, PIECE_COST, STREAM_WINDOW};
use super::driver::{CALM_LIMIT, MAX_CONTINUATIONS, OUT_HIGH};
use super::frame::{self, Head};
use super::hpack;
use super::tests::{Server, body_text, connected, connected_through, request};
use super::{H2Error, Why};

/// The error code of the GOAWAY the client sends.
async fn goaway(server: &mut Server) -> u32 {
    let (head, payload) = server.next(frame::GOAWAY).await;
    assert_eq!(head.stream, 0);
    u32::from_be_bytes(payload[4..8].try_into().unwrap())
}

/// The error code of the next RST_STREAM, which must be for `stream`.
async fn reset(server: &mut Server, stream: u32) -> u32 {
    let (head, payload) = server.next(frame::RST_STREAM).await;
    assert_eq!(head.stream, stream);
    u32::from_be_bytes(payload.try_into().unwrap())
}

/// What a connection holds when the server sent only frames that carry no body: its buffers.
fn holds_little(conn: &super::conn::Conn) {
    let held = conn.peak_held();
    assert!(held < 2 * OUT_HIGH, "{held} bytes held");
}

fn block(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in fields {
        hpack::literal(&mut out, name.as_bytes(), value.as_bytes(), false);
    }
    out
}

/// `e` is a violation we answered with `code`.
#[track_caller]
fn violated(e: &H2Error, code: u32) {
    assert_eq!(e.why, Why::Violation { code }, "{e}");
}

/// How the waiting request ended: why (for the logic) and the words (where they are the point).
async fn failure(
    waiting: tokio::task::JoinHandle<std::io::Result<http::Response<super::H2Body>>>,
) -> H2Error {
    let e = waiting.await.unwrap().unwrap_err();
    H2Error::of(&e)
        .cloned()
        .unwrap_or_else(|| panic!("not this client's error: {e}"))
}

/// h2 stops reading until its pending PONG and SETTINGS ACK are in its write buffer, and that
/// buffer has a high mark; Go's client queues its answers behind a blocking write. Here: no frame
/// is read while 8 answers (or 4 KiB) wait to be written, and keep-alive (which server PINGs do
/// not feed) ends the connection.
#[tokio::test(start_paused = true)]
async fn a_server_flooding_control_frames_without_reading_is_not_read_and_times_out() {
    for (kind, payload) in [(frame::PING, &[7u8; 8][..]), (frame::SETTINGS, &[][..])] {
        let (conn, mut server) = connected_through(256).await;
        let waiting = request(&conn, "/x").await;
        server.next(frame::HEADERS).await;
        let (_reading, mut writing) = tokio::io::split(server.io);
        let flood = tokio::spawn(async move {
            let mut one = Vec::new();
            frame::put(&mut one, kind, 0, 0, payload);
            let mut sent = 0;
            // More than the budget of frames that carry nothing: had the client read them all,
            // it would have ended the connection with ENHANCE_YOUR_CALM instead.
            while sent < 3 * CALM_LIMIT && writing.write_all(&one).await.is_ok() {
                sent += 1;
            }
            sent
        });
        let e = failure(waiting).await;
        assert_eq!(e.why, Why::PingUnanswered, "{e}");
        assert!(flood.await.unwrap() < CALM_LIMIT);
        // At most 8 answers wait: a few hundred bytes, not a buffer that grows.
        let held = conn.peak_held();
        assert!(held < OUT_HIGH, "{held} bytes held");
    }
}

/// Go's server allows 10,000 queued control frames before closing; h2 bounds pending answers.
/// Here a server that reads but floods is told ENHANCE_YOUR_CALM after 1,000 in 10 s.
#[tokio::test]
async fn a_server_flooding_pings_while_reading_is_told_to_calm_down() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    for _ in 0..=CALM_LIMIT {
        server.send(frame::PING, 0, 0, b"12345678").await;
    }
    assert_eq!(goaway(&mut server).await, frame::ENHANCE_YOUR_CALM);
    let e = failure(waiting).await;
    violated(&e, frame::ENHANCE_YOUR_CALM);
    assert!(!conn.usable());
    holds_little(&conn);
}

/// hyper/h2 keeps each DATA frame as its own `Bytes` until the body is read (and `collect`
/// keeps them so); Go copies DATA into one pipe buffer per stream. Here payloads smaller than
/// 4 KiB are gathered into 16 KiB chunks: what is held is the bytes, not the frames.
#[tokio::test]
async fn an_answer_in_one_byte_frames_is_held_as_its_bytes() {
    const BODY: usize = 256 * 1024;
    let (conn, mut server) = connected().await;
    let answering = request(&conn, "/list").await;
    server.next(frame::HEADERS).await;
    server.head(1, "200", false).await;
    let response = answering.await.unwrap().unwrap();
    let mut frames = Vec::with_capacity(BODY * 10);
    let mut sent = Vec::with_capacity(BODY);
    for i in 0..BODY {
        let byte = b'a' + (i % 26) as u8;
        frame::put(&mut frames, frame::DATA, 0, 1, &[byte]);
        sent.push(byte);
    }
    frame::put(&mut frames, frame::DATA, frame::END_STREAM, 1, &[]);
    server.io.write_all(&frames).await.unwrap();
    // Nothing was read yet: every byte is held, each chunk at its cost.
    let received = body_text(response).await.unwrap();
    assert_eq!(received.as_bytes(), &sent[..]);
    let bound = BODY + (BODY / (16 * 1024) + 1) * (16 * 1024 + PIECE_COST) + 2 * OUT_HIGH;
    let held = conn.peak_held();
    assert!(held <= bound, "{held} bytes held for {BODY} bytes of body");
}

/// Go: "protocol error: received DATA before a HEADERS frame", a stream error; h2 likewise
/// (its stream state machine). Here: RST_STREAM PROTOCOL_ERROR, nothing held, the
/// connection carries on.
#[tokio::test]
async fn data_before_the_answers_headers_fails_its_stream() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    server.send(frame::DATA, 0, 1, &[0; 1000]).await;
    assert_eq!(reset(&mut server, 1).await, frame::PROTOCOL_ERROR);
    let e = failure(waiting).await;
    violated(&e, frame::PROTOCOL_ERROR);
    // The words name the server and the rule it broke.
    assert_eq!(
        &*e.message,
        "the server api.example:6443 broke HTTP/2: DATA before the answer's HEADERS"
    );
    assert!(conn.usable());
    holds_little(&conn);
}

/// The CONTINUATION flood (CVE-2024-27316 and its kin): h2 0.4.4 and Go 1.22.2 bound the
/// frames of one header block and close the connection. Here: at most 32, then GOAWAY
/// ENHANCE_YOUR_CALM.
#[tokio::test]
async fn endless_empty_continuation_frames_end_the_connection() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    server
        .send(frame::HEADERS, 0, 1, &block(&[(":status", "200")]))
        .await;
    for _ in 0..=MAX_CONTINUATIONS {
        server.send(frame::CONTINUATION, 0, 1, &[]).await;
    }
    assert_eq!(goaway(&mut server).await, frame::ENHANCE_YOUR_CALM);
    let e = failure(waiting).await;
    violated(&e, frame::ENHANCE_YOUR_CALM);
    holds_little(&conn);
}

/// Go's client allows 5 informational answers ("http2: too many 1xx informational responses");
/// h2 skips them without a limit. Here: the sixth ends the connection.
#[tokio::test]
async fn endless_informational_answers_end_the_connection() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    for _ in 0..6 {
        server.head(1, "100", false).await;
    }
    assert_eq!(goaway(&mut server).await, frame::ENHANCE_YOUR_CALM);
    let e = failure(waiting).await;
    violated(&e, frame::ENHANCE_YOUR_CALM);
    holds_little(&conn);
}

/// Both h2 and Go treat a malformed field section (RFC 9113, 8.2) as a stream error. Here the
/// caller hears the rule that was broken.
#[tokio::test]
async fn a_malformed_answer_fails_its_stream_naming_the_rule() {
    let cases = [
        (
            vec![(":status", "200"), ("Content-Type", "a")],
            "the upper-case header name Content-Type",
        ),
        (
            vec![(":status", "200"), (":status", "204")],
            ":status twice",
        ),
        (
            vec![("server", "x"), (":status", "200")],
            ":status after a regular header field",
        ),
        (
            vec![(":status", "200"), ("transfer-encoding", "chunked")],
            "connection-specific header field transfer-encoding",
        ),
    ];
    for (fields, expected) in cases {
        let (conn, mut server) = connected().await;
        let waiting = request(&conn, "/x").await;
        server.next(frame::HEADERS).await;
        server
            .send(frame::HEADERS, frame::END_HEADERS, 1, &block(&fields))
            .await;
        assert_eq!(reset(&mut server, 1).await, frame::PROTOCOL_ERROR);
        let e = failure(waiting).await;
        violated(&e, frame::PROTOCOL_ERROR);
        assert!(e.message.contains(expected), "{e}");
        assert!(conn.usable());
        holds_little(&conn);
    }
}

/// Go closes the connection on DATA for a stream it never opened ("unsolicited DATA") and
/// ignores frames on streams it cancelled; h2 does the same, answering STREAM_CLOSED on streams
/// the server itself ended.
#[tokio::test]
async fn frames_on_idle_pushed_and_closed_streams_are_told_apart() {
    let (conn, mut server) = connected().await;
    let _waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    server.send(frame::DATA, 0, 3, b"x").await;
    assert_eq!(goaway(&mut server).await, frame::PROTOCOL_ERROR);
    assert!(!conn.usable());

    let (conn, mut server) = connected().await;
    let _waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    server
        .send(
            frame::HEADERS,
            frame::END_HEADERS,
            2,
            &block(&[(":status", "200")]),
        )
        .await;
    assert_eq!(goaway(&mut server).await, frame::PROTOCOL_ERROR);

    let (conn, mut server) = connected().await;
    let finished = request(&conn, "/finished").await;
    server.next(frame::HEADERS).await;
    let cancelled = request(&conn, "/cancelled").await;
    server.next(frame::HEADERS).await;
    server.head(1, "200", true).await;
    server.head(3, "200", false).await;
    assert_eq!(finished.await.unwrap().unwrap().status(), 200);
    drop(cancelled.await.unwrap().unwrap());
    assert_eq!(reset(&mut server, 3).await, frame::CANCEL);
    // Late data on the cancelled stream is ignored; on the finished one, STREAM_CLOSED.
    server.send(frame::DATA, 0, 3, b"late").await;
    server.send(frame::DATA, 0, 1, b"after the end").await;
    assert_eq!(reset(&mut server, 1).await, frame::STREAM_CLOSED);
    assert!(conn.usable());
    holds_little(&conn);
}

/// RFC 9113, 6.9: a zero increment is a stream error on a stream and a connection error on the
/// connection; a window beyond 2^31-1, through WINDOW_UPDATE or SETTINGS, is FLOW_CONTROL_ERROR.
/// h2 and Go both check all three.
#[tokio::test]
async fn window_updates_of_zero_and_windows_past_the_limit_are_refused() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    server.send(frame::WINDOW_UPDATE, 0, 1, &[0; 4]).await;
    assert_eq!(reset(&mut server, 1).await, frame::PROTOCOL_ERROR);
    violated(&failure(waiting).await, frame::PROTOCOL_ERROR);
    server.send(frame::WINDOW_UPDATE, 0, 0, &[0; 4]).await;
    assert_eq!(goaway(&mut server).await, frame::PROTOCOL_ERROR);
    assert!(!conn.usable());

    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    // The stream's window raised to exactly 2^31-1, then the initial window raised by one.
    let increment = (frame::MAX_WINDOW - 65_535) as u32;
    server
        .send(frame::WINDOW_UPDATE, 0, 1, &increment.to_be_bytes())
        .await;
    server
        .send(frame::SETTINGS, 0, 0, &[0, 4, 0, 1, 0, 0])
        .await;
    assert_eq!(goaway(&mut server).await, frame::FLOW_CONTROL_ERROR);
    let e = failure(waiting).await;
    violated(&e, frame::FLOW_CONTROL_ERROR);
    holds_little(&conn);

    // Past the limit through WINDOW_UPDATE alone: that stream fails, the connection carries on.
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    for increment in [increment, 1] {
        server
            .send(frame::WINDOW_UPDATE, 0, 1, &increment.to_be_bytes())
            .await;
    }
    assert_eq!(reset(&mut server, 1).await, frame::FLOW_CONTROL_ERROR);
    violated(&failure(waiting).await, frame::FLOW_CONTROL_ERROR);
    assert!(conn.usable());
}

/// Keep-alive measures the answers to our own PINGs: h2 and Go compare the ACK's payload with
/// the PING they sent, and neither counts the server's own PINGs as life.
#[tokio::test(start_paused = true)]
async fn only_the_answer_to_our_own_ping_keeps_a_connection_alive() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/watch").await;
    server.next(frame::HEADERS).await;
    let started = tokio::time::Instant::now();
    tokio::time::sleep(super::driver::KEEPALIVE / 2).await;
    server.send(frame::PING, 0, 0, b"servers!").await;
    let (_, ours) = loop {
        let (head, payload) = server.next(frame::PING).await;
        if head.flags & frame::ACK == 0 {
            break (head, payload);
        }
    };
    // The server's PING halfway to our keep-alive did not put it off.
    assert!(started.elapsed() <= super::driver::KEEPALIVE);
    let mut wrong = ours.clone();
    wrong[7] ^= 0xff;
    server.send(frame::PING, frame::ACK, 0, &wrong).await;
    let e = failure(waiting).await;
    assert_eq!(e.why, Why::PingUnanswered, "{e}");
    assert!(!conn.usable());
}

/// RFC 9113, 8.1.1: DATA that does not add up to `content-length` makes the answer malformed.
/// h2 checks it (a stream error); Go's client too.
#[tokio::test]
async fn an_answer_longer_or_shorter_than_its_content_length_fails() {
    let (conn, mut server) = connected().await;
    let longer = request(&conn, "/longer").await;
    server.next(frame::HEADERS).await;
    let shorter = request(&conn, "/shorter").await;
    server.next(frame::HEADERS).await;
    let head = block(&[(":status", "200"), ("content-length", "5")]);
    server
        .send(frame::HEADERS, frame::END_HEADERS, 1, &head)
        .await;
    server
        .send(frame::HEADERS, frame::END_HEADERS, 3, &head)
        .await;
    let longer = longer.await.unwrap().unwrap();
    let shorter = shorter.await.unwrap().unwrap();
    server.send(frame::DATA, 0, 1, b"123456").await;
    assert_eq!(reset(&mut server, 1).await, frame::PROTOCOL_ERROR);
    let broken = |e: std::io::Error| H2Error::of(&e).map(|e| e.why);
    let malformed = Some(Why::Violation {
        code: frame::PROTOCOL_ERROR,
    });
    use http_body_util::BodyExt;
    let e = longer.into_body().collect().await.unwrap_err();
    assert_eq!(broken(e), malformed);
    server.send(frame::DATA, frame::END_STREAM, 3, b"123").await;
    let e = shorter.into_body().collect().await.unwrap_err();
    assert_eq!(broken(e), malformed);
    holds_little(&conn);
}

/// A frame larger than announced is a connection error of FRAME_SIZE_ERROR, sent in GOAWAY
/// (RFC 9113, 4.2), as h2 and Go do.
#[tokio::test]
async fn a_frame_larger_than_announced_is_answered_with_goaway() {
    let (conn, mut server) = connected().await;
    let waiting = request(&conn, "/x").await;
    server.next(frame::HEADERS).await;
    let mut out = Vec::new();
    Head {
        len: frame::MAX_FRAME + 1,
        kind: frame::DATA,
        flags: 0,
        stream: 1,
    }
    .write(&mut out);
    server.io.write_all(&out).await.unwrap();
    assert_eq!(goaway(&mut server).await, frame::FRAME_SIZE_ERROR);
    let e = failure(waiting).await;
    violated(&e, frame::FRAME_SIZE_ERROR);
    assert!(!conn.usable());
    holds_little(&conn);
}

/// `SETTINGS_MAX_CONCURRENT_STREAMS = 0`: Go's client waits (until its request times out), h2
/// too. Here the request fails at once, naming the setting.
#[tokio::test]
async fn a_server_allowing_no_streams_is_named_at_once() {
    let (conn, mut server) = connected().await;
    server
        .send(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 0])
        .await;
    loop {
        let (head, _) = server.next(frame::SETTINGS).await;
        if head.flags & frame::ACK != 0 {
            break;
        }
    }
    let e = failure(request(&conn, "/x").await).await;
    assert_eq!(e.why, Why::NoStreams);
    // The words name the setting.
    assert!(
        e.message
            .contains("allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS is 0)"),
        "{e}"
    );
}

/// A slow reader slows the server: the windows come back only as the caller reads, so what a
/// connection holds is bounded by the windows it announced, however much the server has.
#[tokio::test]
async fn unread_answers_hold_no_more_than_the_windows() {
    let (conn, mut server) = connected().await;
    let mut bodies = Vec::new();
    for stream in [1, 3, 5, 7, 9, 11] {
        let answering = request(&conn, "/list").await;
        server.next(frame::HEADERS).await;
        server.head(stream, "200", false).await;
        bodies.push(answering.await.unwrap().unwrap());
    }
    let chunk = vec![b'x'; frame::MAX_FRAME];
    // Each stream's whole window, until the connection's window is spent.
    let mut sent = 0;
    'streams: for stream in [1u32, 3, 5, 7, 9, 11] {
        for _ in 0..(STREAM_WINDOW as usize / frame::MAX_FRAME) {
            if sent + frame::MAX_FRAME > CONNECTION_WINDOW as usize {
                break 'streams;
            }
            server.send(frame::DATA, 0, stream, &chunk).await;
            sent += frame::MAX_FRAME;
        }
    }
    // One frame more than the connection's window is a flow-control error.
    server.send(frame::DATA, 0, 11, &chunk).await;
    assert_eq!(goaway(&mut server).await, frame::FLOW_CONTROL_ERROR);
    let held = conn.peak_held();
    let bound = CONNECTION_WINDOW as usize + 64 * (PIECE_COST + 64) + 2 * OUT_HIGH;
    assert!(held <= bound, "{held} bytes held");
    drop(bodies);
}
