//! The task that owns one HTTP/2 connection's socket. Between frames it holds no buffer: a
//! frame is read into an allocation of its own size (never zeroed first) and handed on (small
//! DATA payloads are gathered into shared chunks), and the write buffer is let go once written.
//!
//! What a hostile server can make it hold is bounded, as the h2 crate and Go's client bound it:
//! - **Writes before reads.** While more than [`OUT_HIGH`] bytes wait to be written, no frame is
//!   read: a server that sends PINGs or SETTINGS without reading its socket fills its own
//!   buffers, never ours (h2 reads on only once its pending PONG and SETTINGS ACK are buffered).
//! - **A budget of frames that carry nothing.** Control frames and frames that move no stream
//!   forward beyond [`CALM_LIMIT`] in [`CALM_WINDOW`] end the connection with GOAWAY
//!   ENHANCE_YOUR_CALM.
//! - **Windows.** Received data is held until its reader takes it; the stream's and the
//!   connection's windows are given back only then, so a slow reader slows the server.
//! - **The stream state machine of RFC 9113, 5.1**, and every connection error sends GOAWAY with
//!   its code and names the server and the violation.

mod control;
mod fields;
mod frames;
mod keepalive;
mod streams;

pub(crate) use keepalive::KEEPALIVE;
pub use keepalive::SILENT_DEADLINE;
use streams::Resets;

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::conn::{
    Broken, CONNECTION_WINDOW, Conn, MAX_HEADER_BLOCK, Opening, STREAM_WINDOW, Stream, Why,
};
use super::frame::{self, Head};
use super::hpack;

/// The most of the write buffer kept between writes.
const OUT_KEPT: usize = 1024;
/// No frame is read while this much waits to be written…
pub const OUT_HIGH: usize = 4 * 1024;
/// …or while this many answers to the server (PING and SETTINGS acknowledgements, stream
/// resets) wait (h2 keeps one pending PONG).
pub const MAX_PENDING_ANSWERS: usize = 8;
/// Frames that carry nothing for a stream (PING, SETTINGS, WINDOW_UPDATE, PRIORITY, RST_STREAM,
/// GOAWAY, empty DATA, informational answers, frames on closed streams, unknown types): at most
/// this many…
pub const CALM_LIMIT: u32 = 1_000;
/// …within this long.
const CALM_WINDOW: Duration = Duration::from_secs(10);
/// The most CONTINUATION frames one header block may take: a whole block fits in 16.
pub const MAX_CONTINUATIONS: u32 = 32;
/// The most streams open at once, whatever the server allows.
const MAX_OPEN: usize = 100;
/// The streams we reset lately, whose late frames are ignored (RFC 9113, 5.1).
const RECENT_RESETS: usize = 64;
/// Stream ids are odd and below 2^31.
const LAST_STREAM_ID: u32 = (1 << 31) - 1;

/// One open stream, as the driver sees it.
struct Active {
    id: u32,
    stream: Arc<Stream>,
    /// How much request body the server lets us send (i32: a fleet keeps thousands of these).
    send_window: i32,
    /// The request body not sent yet.
    body: Bytes,
    /// How much more the server may send before it is told again.
    recv_window: i32,
    /// Read by the caller, not yet given back in the stream's window.
    unreturned: u32,
    /// Received, not yet given back in the connection's window.
    conn_owed: u32,
    /// The final answer's head arrived: a later header block is trailers.
    headed: bool,
    /// Informational (1xx) answers so far.
    informational: u8,
    /// The answer's `content-length` (`u32::MAX` when it has none or one past 4 GiB, which no
    /// answer read whole can be), and the data received.
    expected: u32,
    received: u32,
}

/// A header block arriving in HEADERS and CONTINUATION frames.
struct Block {
    stream: u32,
    end_stream: bool,
    fragment: Vec<u8>,
    continuations: u32,
}

/// A connection error: the connection ends, with a GOAWAY when the server broke the protocol.
struct Fatal {
    goaway: Option<u32>,
    broken: Broken,
}

impl Fatal {
    fn io(e: &io::Error) -> Fatal {
        Fatal {
            goaway: None,
            broken: Broken::of(e),
        }
    }

    fn quiet(broken: Broken) -> Fatal {
        Fatal {
            goaway: None,
            broken,
        }
    }
}

/// The task that owns one connection's socket.
pub struct Driver<T> {
    io: T,
    conn: Arc<Conn>,
    streams: Vec<Active>,
    out: Vec<u8>,
    written: usize,
    /// Answers to the server queued in `out` since it was last written whole.
    answers: u8,
    flushing: bool,
    head: [u8; 9],
    head_read: usize,
    /// The frame being read's payload, and how long it is.
    payload: Vec<u8>,
    payload_len: usize,
    block: Option<Block>,
    decoder: hpack::Decoder,
    next_id: u32,
    recent_resets: Resets,
    peer_max_streams: usize,
    peer_initial_window: i64,
    peer_max_frame: usize,
    send_window: i64,
    recv_window: i64,
    /// Data read or dropped that the connection's window has not been given back for.
    received: u32,
    keepalive: Pin<Box<Sleep>>,
    /// When the server last moved a stream forward or answered our ping.
    last_heard: Instant,
    idle_since: Option<Instant>,
    /// The payload of our unanswered ping, and how many we sent.
    ping: Option<[u8; 8]>,
    pings_sent: u32,
    /// Our SETTINGS wait for the server's acknowledgement.
    settings_unacked: bool,
    /// Frames that carried nothing, since `calm_since`.
    idle_frames: u32,
    calm_since: Instant,
    going_away: bool,
}

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    /// A driver for `io` to the server `conn` names, where TLS (ALPN `h2`) is already done; the
    /// preface goes first.
    pub fn new(io: T, conn: Arc<Conn>) -> Driver<T> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(frame::PREFACE);
        frame::settings(
            &mut out,
            &[
                (frame::SETTINGS_HEADER_TABLE_SIZE, hpack::TABLE_SIZE as u32),
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (
                    frame::SETTINGS_MAX_HEADER_LIST_SIZE,
                    MAX_HEADER_BLOCK as u32,
                ),
            ],
        );
        frame::window_update(&mut out, 0, CONNECTION_WINDOW - 65_535);
        let now = Instant::now();
        Driver {
            io,
            conn,
            streams: Vec::new(),
            out,
            written: 0,
            answers: 0,
            flushing: false,
            head: [0; 9],
            head_read: 0,
            payload: Vec::new(),
            payload_len: 0,
            block: None,
            decoder: hpack::Decoder::new(hpack::TABLE_SIZE),
            next_id: 1,
            recent_resets: Resets::default(),
            // Until the server says otherwise (RFC 9113 suggests no fewer than 100).
            peer_max_streams: 100,
            peer_initial_window: 65_535,
            peer_max_frame: frame::MAX_FRAME,
            send_window: 65_535,
            recv_window: i64::from(CONNECTION_WINDOW),
            received: 0,
            keepalive: Box::pin(tokio::time::sleep(KEEPALIVE)),
            last_heard: now,
            idle_since: Some(now),
            ping: None,
            pings_sent: 0,
            settings_unacked: true,
            idle_frames: 0,
            calm_since: now,
            going_away: false,
        }
    }

    /// A connection error: the server broke the protocol (`code` goes out in GOAWAY).
    fn fatal(&self, code: u32, what: &str) -> Fatal {
        Fatal {
            goaway: Some(code),
            broken: self.broke(code, what),
        }
    }

    /// What a violation by the server says, naming it; `code` is what we answer it with.
    fn broke(&self, code: u32, what: &str) -> Broken {
        Broken::new(
            io::ErrorKind::InvalidData,
            Why::Violation { code },
            format!("the server {} broke HTTP/2: {what}", self.conn.server),
        )
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Fatal>> {
        self.conn.driver.register(cx.waker());
        loop {
            self.intake();
            self.tend_streams();
            if let Err(e) = self.write(cx) {
                return Poll::Ready(Err(Fatal::io(&e)));
            }
            // Writes before reads: a server that does not read what we owe it is not read.
            let unwritten = self.out.len() - self.written;
            let backed_up = unwritten >= OUT_HIGH
                || (unwritten > 0 && usize::from(self.answers) >= MAX_PENDING_ANSWERS);
            if !backed_up {
                match self.read_frame(cx) {
                    Poll::Ready(Ok(Some(head))) => {
                        if let Err(fatal) = self.on_frame(head) {
                            return Poll::Ready(Err(fatal));
                        }
                        continue;
                    }
                    Poll::Ready(Ok(None)) => {
                        let broken = Broken::new(
                            io::ErrorKind::UnexpectedEof,
                            Why::Closed,
                            format!("the server {} closed the connection", self.conn.server),
                        );
                        return Poll::Ready(Err(Fatal::quiet(broken)));
                    }
                    Poll::Ready(Err(fatal)) => return Poll::Ready(Err(fatal)),
                    Poll::Pending => {}
                }
            }
            match self.tick(cx) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(fatal) => return Poll::Ready(Err(fatal)),
            }
            self.account();
            let done = self.streams.is_empty() && {
                let shared = self.conn.lock();
                shared.opening.is_empty() && (shared.abandoned || self.going_away)
            };
            if done && self.out.is_empty() && !self.flushing {
                return Poll::Ready(Ok(()));
            }
            return Poll::Pending;
        }
    }

    /// Tells the connection what the driver holds now: its buffers, and what its streams
    /// received that nobody read yet.
    fn account(&self) {
        // Only the tests read it: a fleet's drivers should not lock every stream at every poll.
        if !cfg!(test) {
            return;
        }
        let streams: usize = self.streams.iter().map(|a| a.stream.lock().held()).sum();
        let block = self.block.as_ref().map_or(0, |b| b.fragment.capacity());
        self.conn
            .holding(self.out.capacity() + self.payload.capacity() + block + streams);
    }

    /// Writes what is queued; the buffer is let go once it is all written.
    fn write(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        while self.written < self.out.len() {
            match Pin::new(&mut self.io).poll_write(cx, &self.out[self.written..]) {
                Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => self.written += n,
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => return Ok(()),
            }
        }
        if !self.out.is_empty() {
            // What a connection usually writes (headers, window updates, pings) fits in a few
            // hundred bytes: that much stays for the next write, a larger buffer is let go.
            if self.out.capacity() > OUT_KEPT {
                self.out = Vec::new();
            } else {
                self.out.clear();
            }
            self.written = 0;
            self.answers = 0;
            self.flushing = true;
        }
        if self.flushing {
            match Pin::new(&mut self.io).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.flushing = false,
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => {}
            }
        }
        Ok(())
    }

    /// Reads one whole frame: its head, then its payload into `self.payload`.
    fn read_frame(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Head>, Fatal>> {
        let eof = || Fatal::io(&io::ErrorKind::UnexpectedEof.into());
        while self.head_read < 9 {
            let mut buf = ReadBuf::new(&mut self.head[self.head_read..]);
            match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                    return Poll::Ready(match self.head_read {
                        0 => Ok(None),
                        _ => Err(eof()),
                    });
                }
                Poll::Ready(Ok(())) => {
                    self.head_read += buf.filled().len();
                    if self.head_read == 9 {
                        let head = Head::parse(&self.head);
                        if head.len > frame::MAX_FRAME {
                            let what = format!(
                                "a frame of {} bytes (at most {})",
                                head.len,
                                frame::MAX_FRAME
                            );
                            return Poll::Ready(Err(self.fatal(frame::FRAME_SIZE_ERROR, &what)));
                        }
                        // Read into, not zeroed first.
                        self.payload = Vec::with_capacity(head.len);
                        self.payload_len = head.len;
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(Fatal::io(&e))),
                Poll::Pending => return Poll::Pending,
            }
        }
        while self.payload.len() < self.payload_len {
            let missing = self.payload_len - self.payload.len();
            let mut room = (&mut self.payload).limit(missing);
            match tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut room) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(eof())),
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => return Poll::Ready(Err(Fatal::io(&e))),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.head_read = 0;
        Poll::Ready(Ok(Some(Head::parse(&self.head))))
    }

    /// Queues an answer to the server: reading waits while too many are unwritten.
    fn answer(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        frame::put(&mut self.out, kind, flags, stream, payload);
        self.answers = self.answers.saturating_add(1);
    }

    /// Counts a frame that carried nothing; too many too fast end the connection.
    fn idle_frame(&mut self, what: &str) -> Result<(), Fatal> {
        let now = Instant::now();
        if now.duration_since(self.calm_since) >= CALM_WINDOW {
            self.calm_since = now;
            self.idle_frames = 0;
        }
        self.idle_frames += 1;
        if self.idle_frames > CALM_LIMIT {
            let what = format!(
                "more than {CALM_LIMIT} frames that carry nothing within {}s (the last: {what})",
                CALM_WINDOW.as_secs()
            );
            return Err(self.fatal(frame::ENHANCE_YOUR_CALM, &what));
        }
        Ok(())
    }

    /// The connection ended: every stream and queued request hears why.
    fn finish(&mut self, fatal: Fatal) {
        if let Some(code) = fatal.goaway {
            // The last stream the server opened that we processed: none, as push is off.
            frame::goaway(&mut self.out, 0, code);
            // Best effort, after what was queued before it: the connection is ending either way.
            let waker = futures::task::noop_waker();
            let mut cx = Context::from_waker(&waker);
            while self.written < self.out.len() {
                match Pin::new(&mut self.io).poll_write(&mut cx, &self.out[self.written..]) {
                    Poll::Ready(Ok(n)) if n > 0 => self.written += n,
                    _ => break,
                }
            }
            let _ = Pin::new(&mut self.io).poll_flush(&mut cx);
        }
        let queued: Vec<Opening> = {
            let mut shared = self.conn.lock();
            shared.closed.get_or_insert(fatal.broken.clone());
            shared.opening.drain(..).collect()
        };
        for opening in queued {
            opening.stream.fail(&fatal.broken);
        }
        for active in self.streams.drain(..) {
            active.stream.fail(&fatal.broken);
        }
        self.account();
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> std::future::Future for Driver<T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        match this.drive(cx) {
            Poll::Ready(Ok(())) => {
                let done = Broken::new(
                    io::ErrorKind::ConnectionAborted,
                    Why::Closed,
                    "the connection closed",
                );
                this.conn.lock().closed.get_or_insert(done);
                Poll::Ready(())
            }
            Poll::Ready(Err(fatal)) => {
                if fatal.broken.kind != io::ErrorKind::ConnectionAborted {
                    tracing::debug!(error = %fatal.broken.error, "an HTTP/2 connection ended");
                }
                this.finish(fatal);
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
