//! The task that owns one HTTP/2 connection's socket. Between frames it holds no buffer: a
//! frame is read into an allocation of its own size and handed on as it is, and the write buffer
//! is let go once written.

mod frames;

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::conn::{
    Broken, CONNECTION_WINDOW, Conn, MAX_HEADER_BLOCK, Opening, STREAM_WINDOW, Stream,
};
use super::frame::{self, Head};
use super::hpack;

/// A connection that has heard nothing for this long is pinged...
const KEEPALIVE: Duration = Duration::from_secs(30);
/// ...and is dead when the ping goes unanswered for this long.
const PING_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection without a request for this long closes (a later request opens another).
const IDLE: Duration = Duration::from_secs(90);
/// The most of the write buffer kept between writes.
const OUT_KEPT: usize = 1024;
/// Stream ids are odd and below 2^31.
const LAST_STREAM_ID: u32 = (1 << 31) - 1;

/// One open stream, as the driver sees it.
struct Active {
    id: u32,
    stream: Arc<Stream>,
    /// How much request body the server lets us send.
    send_window: i64,
    /// The request body not sent yet.
    body: Bytes,
    /// How much more the server may send before it is told again.
    recv_window: i64,
}

/// A header block arriving in HEADERS and CONTINUATION frames.
struct Block {
    stream: u32,
    end_stream: bool,
    fragment: Vec<u8>,
}

/// A connection error: the connection ends, with a GOAWAY when the server broke the protocol.
struct Fatal {
    goaway: Option<u32>,
    broken: Broken,
}

impl Fatal {
    fn protocol(code: u32, what: &str) -> Fatal {
        Fatal {
            goaway: Some(code),
            broken: Broken::new(
                io::ErrorKind::InvalidData,
                format!("the server broke HTTP/2: {what}"),
            ),
        }
    }

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
    flushing: bool,
    head: [u8; 9],
    head_read: usize,
    payload: Vec<u8>,
    payload_read: usize,
    block: Option<Block>,
    decoder: hpack::Decoder,
    next_id: u32,
    peer_max_streams: usize,
    peer_initial_window: i64,
    peer_max_frame: usize,
    send_window: i64,
    recv_window: i64,
    /// Data received that the connection's window has not been given back for.
    received: u32,
    keepalive: Pin<Box<Sleep>>,
    last_heard: Instant,
    idle_since: Option<Instant>,
    pinging: bool,
    going_away: bool,
}

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    /// A driver for `io`, where TLS (ALPN `h2`) is already done; the preface goes first.
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
            flushing: false,
            head: [0; 9],
            head_read: 0,
            payload: Vec::new(),
            payload_read: 0,
            block: None,
            decoder: hpack::Decoder::new(hpack::TABLE_SIZE),
            next_id: 1,
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
            pinging: false,
            going_away: false,
        }
    }

    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Fatal>> {
        self.conn.driver.register(cx.waker());
        loop {
            self.intake();
            self.tend_streams();
            if let Err(e) = self.write(cx) {
                return Poll::Ready(Err(Fatal::io(&e)));
            }
            match self.read_frame(cx) {
                Poll::Ready(Ok(Some(head))) => {
                    self.last_heard = Instant::now();
                    if let Err(fatal) = self.on_frame(head) {
                        return Poll::Ready(Err(fatal));
                    }
                    continue;
                }
                Poll::Ready(Ok(None)) => {
                    let broken = Broken::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    );
                    return Poll::Ready(Err(Fatal::quiet(broken)));
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(Fatal::io(&e))),
                Poll::Pending => {}
            }
            match self.tick(cx) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(fatal) => return Poll::Ready(Err(fatal)),
            }
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

    /// Gives queued requests stream ids, as many as the server allows open at once.
    fn intake(&mut self) {
        let mut shared = self.conn.lock();
        while self.streams.len() < self.peer_max_streams && !self.going_away {
            let Some(opening) = shared.opening.pop_front() else {
                break;
            };
            if opening.stream.lock().dropped {
                continue;
            }
            if self.next_id > LAST_STREAM_ID {
                // Every stream id was used: this connection takes no more.
                let broken = Broken::new(io::ErrorKind::ConnectionReset, "stream ids ran out");
                opening.stream.fail(&broken);
                shared.closed.get_or_insert(broken);
                self.going_away = true;
                break;
            }
            let id = self.next_id;
            self.next_id += 2;
            let end_stream = opening.body.is_empty();
            frame::headers(
                &mut self.out,
                id,
                &opening.block,
                end_stream,
                self.peer_max_frame,
            );
            self.streams.push(Active {
                id,
                stream: opening.stream,
                send_window: self.peer_initial_window,
                body: opening.body,
                recv_window: i64::from(STREAM_WINDOW),
            });
            self.idle_since = None;
        }
    }

    /// Cancels what callers let go of, gives back the window of what they read, and sends
    /// request bodies as far as the windows allow.
    fn tend_streams(&mut self) {
        let out = &mut self.out;
        let send_window = &mut self.send_window;
        let max_frame = self.peer_max_frame;
        self.streams.retain_mut(|active| {
            let (dropped, consumed) = {
                let mut cell = active.stream.lock();
                let consumed = if cell.consumed >= STREAM_WINDOW / 2 {
                    std::mem::take(&mut cell.consumed)
                } else {
                    0
                };
                (cell.dropped, consumed)
            };
            if dropped {
                frame::rst_stream(out, active.id, frame::CANCEL);
                return false;
            }
            if consumed > 0 {
                frame::window_update(out, active.id, consumed);
                active.recv_window += i64::from(consumed);
            }
            while !active.body.is_empty() {
                let room = active.send_window.min(*send_window).min(max_frame as i64);
                if room <= 0 {
                    break;
                }
                let chunk = active.body.split_to(active.body.len().min(room as usize));
                let flags = if active.body.is_empty() {
                    frame::END_STREAM
                } else {
                    0
                };
                frame::put(out, frame::DATA, flags, active.id, &chunk);
                active.send_window -= chunk.len() as i64;
                *send_window -= chunk.len() as i64;
            }
            true
        });
        if self.streams.is_empty() && self.idle_since.is_none() {
            self.idle_since = Some(Instant::now());
        }
        if self.received >= CONNECTION_WINDOW / 2 {
            frame::window_update(&mut self.out, 0, self.received);
            self.recv_window += i64::from(std::mem::take(&mut self.received));
        }
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
    fn read_frame(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<Head>>> {
        while self.head_read < 9 {
            let mut buf = ReadBuf::new(&mut self.head[self.head_read..]);
            match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                    return Poll::Ready(match self.head_read {
                        0 => Ok(None),
                        _ => Err(io::ErrorKind::UnexpectedEof.into()),
                    });
                }
                Poll::Ready(Ok(())) => {
                    self.head_read += buf.filled().len();
                    if self.head_read == 9 {
                        let head = Head::parse(&self.head);
                        if head.len > frame::MAX_FRAME {
                            return Poll::Ready(Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                format!(
                                    "the server broke HTTP/2: a frame of {} bytes (at most {})",
                                    head.len,
                                    frame::MAX_FRAME
                                ),
                            )));
                        }
                        self.payload = vec![0; head.len];
                        self.payload_read = 0;
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        while self.payload_read < self.payload.len() {
            let mut buf = ReadBuf::new(&mut self.payload[self.payload_read..]);
            match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                    return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
                }
                Poll::Ready(Ok(())) => self.payload_read += buf.filled().len(),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.head_read = 0;
        Poll::Ready(Ok(Some(Head::parse(&self.head))))
    }

    /// Keep-alive and idling; true when it queued a ping.
    fn tick(&mut self, cx: &mut Context<'_>) -> Result<bool, Fatal> {
        if self.keepalive.as_mut().poll(cx).is_pending() {
            return Ok(false);
        }
        let now = Instant::now();
        if self.pinging {
            return Err(Fatal::quiet(Broken::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the server did not answer a ping within {}",
                    crate::units::format_duration(PING_TIMEOUT)
                ),
            )));
        }
        if self
            .idle_since
            .is_some_and(|since| now.duration_since(since) >= IDLE)
        {
            return Err(Fatal::quiet(Broken::new(
                io::ErrorKind::ConnectionAborted,
                "the connection idled out",
            )));
        }
        if now.duration_since(self.last_heard) >= KEEPALIVE {
            frame::put(&mut self.out, frame::PING, 0, 0, &[0; 8]);
            self.pinging = true;
            self.keepalive.as_mut().reset(now + PING_TIMEOUT);
            return Ok(true);
        }
        self.keepalive.as_mut().reset(self.last_heard + KEEPALIVE);
        Ok(true)
    }

    /// The connection ended: every stream and queued request hears why.
    fn finish(&mut self, fatal: Fatal) {
        if let Some(code) = fatal.goaway {
            let mut out = Vec::new();
            frame::goaway(&mut out, 0, code);
            // Best effort: the connection is ending either way.
            let waker = futures::task::noop_waker();
            let _ = Pin::new(&mut self.io).poll_write(&mut Context::from_waker(&waker), &out);
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
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> std::future::Future for Driver<T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        match this.drive(cx) {
            Poll::Ready(Ok(())) => {
                let done = Broken::new(io::ErrorKind::ConnectionAborted, "the connection closed");
                this.conn.lock().closed.get_or_insert(done);
                Poll::Ready(())
            }
            Poll::Ready(Err(fatal)) => {
                if fatal.broken.kind != io::ErrorKind::ConnectionAborted {
                    tracing::debug!(error = %fatal.broken.message, "an HTTP/2 connection ended");
                }
                this.finish(fatal);
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
