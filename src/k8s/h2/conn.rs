//! One HTTP/2 connection: the state its requests share with the task that drives it, and that
//! task. The driver owns the socket; callers hand it header blocks and read what it leaves in
//! their stream's cell. Between frames a connection holds no buffer: a frame is read into an
//! allocation of its own size, handed on as it is, and the write buffer is let go once written.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::frame::{self, Head};
use super::hpack;

/// How much of one stream's answer the server may send ahead of what its reader took.
pub const STREAM_WINDOW: u32 = 1 << 20;
/// How much of all streams' answers together.
pub const CONNECTION_WINDOW: u32 = 4 << 20;
/// The largest header block read (`SETTINGS_MAX_HEADER_LIST_SIZE`, and the fragments kept).
pub const MAX_HEADER_BLOCK: usize = 256 * 1024;
/// The most header fields kept of one answer.
const MAX_FIELDS: usize = 256;
/// A connection that has heard nothing for this long is pinged...
const KEEPALIVE: Duration = Duration::from_secs(30);
/// ...and is dead when the ping goes unanswered for this long.
const PING_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection without a request for this long closes (a later request opens another).
const IDLE: Duration = Duration::from_secs(90);
/// Stream ids are odd and below 2^31.
const LAST_STREAM_ID: u32 = (1 << 31) - 1;

/// What an error that ends streams says, kept to be told to each of them.
#[derive(Clone, Debug)]
pub struct Broken {
    kind: io::ErrorKind,
    message: Arc<str>,
}

impl Broken {
    pub fn new(kind: io::ErrorKind, message: impl Into<Arc<str>>) -> Broken {
        Broken {
            kind,
            message: message.into(),
        }
    }

    fn of(e: &io::Error) -> Broken {
        Broken::new(e.kind(), e.to_string())
    }

    pub fn error(&self) -> io::Error {
        io::Error::new(self.kind, self.message.to_string())
    }
}

/// What a stream's caller and the driver share.
#[derive(Default)]
pub struct Cell {
    pub head: Option<http::response::Parts>,
    /// The head was handed on: a later header block is trailers.
    headed: bool,
    pub data: VecDeque<Bytes>,
    /// The server ended the stream (after `data`).
    pub end: bool,
    pub broken: Option<Broken>,
    pub waker: Option<Waker>,
    /// Bytes the caller read that the server has not been told it may send again.
    pub consumed: u32,
    /// The caller let go of the stream: the driver cancels it.
    pub dropped: bool,
}

pub struct Stream {
    cell: Mutex<Cell>,
}

impl Stream {
    pub fn lock(&self) -> MutexGuard<'_, Cell> {
        self.cell.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, change: impl FnOnce(&mut Cell)) {
        let waker = {
            let mut cell = self.lock();
            change(&mut cell);
            cell.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn fail(&self, broken: &Broken) {
        self.update(|cell| {
            if !cell.end {
                cell.broken = Some(broken.clone());
            }
        });
    }
}

/// A request waiting for a stream id.
struct Opening {
    stream: Arc<Stream>,
    block: Vec<u8>,
    body: Bytes,
}

#[derive(Default)]
struct Shared {
    opening: VecDeque<Opening>,
    /// Why no new request is taken: the connection broke, went away, or idled out.
    closed: Option<Broken>,
    /// Nobody will send another request: the driver ends once its streams are done.
    abandoned: bool,
}

/// The handle requests go through.
#[derive(Default)]
pub struct Conn {
    shared: Mutex<Shared>,
    driver: AtomicWaker,
}

impl Conn {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a new request may go on this connection.
    pub fn usable(&self) -> bool {
        self.lock().closed.is_none()
    }

    /// Queues a request (its header block and body) and wakes the driver.
    pub fn open(&self, block: Vec<u8>, body: Bytes) -> Result<Arc<Stream>, io::Error> {
        let stream = Arc::new(Stream {
            cell: Mutex::new(Cell::default()),
        });
        {
            let mut shared = self.lock();
            if let Some(broken) = &shared.closed {
                return Err(broken.error());
            }
            shared.opening.push_back(Opening {
                stream: stream.clone(),
                block,
                body,
            });
        }
        self.driver.wake();
        Ok(stream)
    }

    pub fn wake(&self) {
        self.driver.wake();
    }

    /// No more requests will come; the connection closes when its streams are done.
    pub fn abandon(&self) {
        self.lock().abandoned = true;
        self.driver.wake();
    }
}

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
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(frame::PREFACE);
        frame::settings(
            &mut out,
            &[
                (frame::SETTINGS_HEADER_TABLE_SIZE, hpack::TABLE_SIZE as u32),
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (frame::SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_BLOCK as u32),
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
            self.out = Vec::new();
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

    fn on_frame(&mut self, head: Head) -> Result<(), Fatal> {
        let payload = std::mem::take(&mut self.payload);
        if self.block.is_some() && head.kind != frame::CONTINUATION {
            return Err(Fatal::protocol(
                frame::PROTOCOL_ERROR,
                "a frame inside a header block",
            ));
        }
        match head.kind {
            frame::DATA => self.on_data(head, payload),
            frame::HEADERS => {
                if head.stream == 0 {
                    return Err(Fatal::protocol(frame::PROTOCOL_ERROR, "HEADERS on stream 0"));
                }
                let (start, end) = frame::unpadded(&head, &payload).ok_or_else(|| {
                    Fatal::protocol(frame::PROTOCOL_ERROR, "HEADERS padded beyond its end")
                })?;
                let mut fragment = payload;
                fragment.truncate(end);
                fragment.drain(..start);
                self.block = Some(Block {
                    stream: head.stream,
                    end_stream: head.flags & frame::END_STREAM != 0,
                    fragment,
                });
                if head.flags & frame::END_HEADERS != 0 {
                    self.on_block()?;
                }
                Ok(())
            }
            frame::CONTINUATION => {
                let Some(block) = self.block.as_mut().filter(|b| b.stream == head.stream) else {
                    return Err(Fatal::protocol(
                        frame::PROTOCOL_ERROR,
                        "CONTINUATION without HEADERS",
                    ));
                };
                if block.fragment.len() + payload.len() > MAX_HEADER_BLOCK {
                    return Err(Fatal::protocol(
                        frame::PROTOCOL_ERROR,
                        "a header block larger than 256 KiB",
                    ));
                }
                block.fragment.extend_from_slice(&payload);
                if head.flags & frame::END_HEADERS != 0 {
                    self.on_block()?;
                }
                Ok(())
            }
            frame::RST_STREAM => {
                let code = word(&payload)
                    .ok_or_else(|| Fatal::protocol(frame::FRAME_SIZE_ERROR, "RST_STREAM size"))?;
                let broken = Broken::new(
                    io::ErrorKind::ConnectionReset,
                    format!("the server reset the stream (HTTP/2 error code {code})"),
                );
                self.end_stream(head.stream, Some(&broken));
                Ok(())
            }
            frame::SETTINGS => self.on_settings(head, &payload),
            frame::PUSH_PROMISE => Err(Fatal::protocol(
                frame::PROTOCOL_ERROR,
                "PUSH_PROMISE, which fluxfleet disabled",
            )),
            frame::PING => {
                if payload.len() != 8 || head.stream != 0 {
                    return Err(Fatal::protocol(frame::FRAME_SIZE_ERROR, "PING size"));
                }
                if head.flags & frame::ACK != 0 {
                    self.pinging = false;
                } else {
                    frame::put(&mut self.out, frame::PING, frame::ACK, 0, &payload);
                }
                Ok(())
            }
            frame::GOAWAY => {
                let last = word(&payload)
                    .ok_or_else(|| Fatal::protocol(frame::FRAME_SIZE_ERROR, "GOAWAY size"))?
                    & 0x7fff_ffff;
                self.go_away(last);
                Ok(())
            }
            frame::WINDOW_UPDATE => {
                let increment = word(&payload)
                    .ok_or_else(|| Fatal::protocol(frame::FRAME_SIZE_ERROR, "WINDOW_UPDATE size"))?
                    & 0x7fff_ffff;
                let window = if head.stream == 0 {
                    Some(&mut self.send_window)
                } else {
                    self.streams
                        .iter_mut()
                        .find(|a| a.id == head.stream)
                        .map(|a| &mut a.send_window)
                };
                if let Some(window) = window {
                    *window += i64::from(increment);
                    if *window > frame::MAX_WINDOW {
                        return Err(Fatal::protocol(
                            frame::FLOW_CONTROL_ERROR,
                            "a window beyond 2^31-1",
                        ));
                    }
                }
                Ok(())
            }
            // PRIORITY, and frame types this client does not know, are ignored (RFC 9113, 4.1).
            _ => Ok(()),
        }
    }

    fn on_data(&mut self, head: Head, payload: Vec<u8>) -> Result<(), Fatal> {
        if head.stream == 0 {
            return Err(Fatal::protocol(frame::PROTOCOL_ERROR, "DATA on stream 0"));
        }
        let len = payload.len();
        self.recv_window -= len as i64;
        if self.recv_window < 0 {
            return Err(Fatal::protocol(
                frame::FLOW_CONTROL_ERROR,
                "more data than the connection's window",
            ));
        }
        self.received += len as u32;
        let (start, end) = frame::unpadded(&head, &payload)
            .ok_or_else(|| Fatal::protocol(frame::PROTOCOL_ERROR, "DATA padded beyond its end"))?;
        let Some(active) = self.streams.iter_mut().find(|a| a.id == head.stream) else {
            // A stream already cancelled or reset: its data is dropped.
            return Ok(());
        };
        active.recv_window -= len as i64;
        if active.recv_window < 0 {
            frame::rst_stream(&mut self.out, head.stream, frame::FLOW_CONTROL_ERROR);
            let broken = Broken::new(
                io::ErrorKind::InvalidData,
                "the server broke HTTP/2: more data than the stream's window",
            );
            self.end_stream(head.stream, Some(&broken));
            return Ok(());
        }
        let data = Bytes::from(payload).slice(start..end);
        let end_stream = head.flags & frame::END_STREAM != 0;
        active.stream.update(|cell| {
            // Padding is never read: its window comes back with the next read.
            cell.consumed += (len - data.len()) as u32;
            if !data.is_empty() {
                cell.data.push_back(data);
            }
        });
        if end_stream {
            self.end_stream(head.stream, None);
        }
        Ok(())
    }

    /// A whole header block: the answer's head, trailers, or an informational answer.
    fn on_block(&mut self) -> Result<(), Fatal> {
        let Some(block) = self.block.take() else {
            return Ok(());
        };
        let mut builder = http::Response::builder().version(http::Version::HTTP_2);
        let mut status: Option<u16> = None;
        let mut fields = 0;
        let mut malformed = false;
        self.decoder
            .decode(&block.fragment, |name, value| {
                fields += 1;
                if name == b":status" {
                    status = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok());
                } else if name.first() == Some(&b':') {
                    malformed = true;
                } else if fields <= MAX_FIELDS {
                    match (
                        http::HeaderName::from_bytes(name),
                        http::HeaderValue::from_bytes(value),
                    ) {
                        (Ok(n), Ok(v)) => builder = std::mem::take(&mut builder).header(n, v),
                        _ => malformed = true,
                    }
                }
                Ok(())
            })
            .map_err(|e| Fatal::protocol(frame::COMPRESSION_ERROR, e.0))?;
        let Some(active) = self.streams.iter().find(|a| a.id == block.stream) else {
            return Ok(());
        };
        let headed = active.stream.lock().headed;
        if !headed {
            let broken = |what: &str| {
                Broken::new(
                    io::ErrorKind::InvalidData,
                    format!("the server broke HTTP/2: {what}"),
                )
            };
            match status {
                Some(code) if (100..200).contains(&code) && !block.end_stream => return Ok(()),
                Some(code) if !malformed => {
                    match builder.status(code).body(()) {
                        Ok(response) => {
                            let (parts, ()) = response.into_parts();
                            active.stream.update(|cell| {
                                cell.head = Some(parts);
                                cell.headed = true;
                            });
                        }
                        Err(_) => {
                            let broken = broken("an answer with a malformed status");
                            frame::rst_stream(&mut self.out, block.stream, frame::PROTOCOL_ERROR);
                            self.end_stream(block.stream, Some(&broken));
                            return Ok(());
                        }
                    }
                }
                _ => {
                    let broken = broken("an answer without a valid :status");
                    frame::rst_stream(&mut self.out, block.stream, frame::PROTOCOL_ERROR);
                    self.end_stream(block.stream, Some(&broken));
                    return Ok(());
                }
            }
        }
        if block.end_stream {
            self.end_stream(block.stream, None);
        }
        Ok(())
    }

    fn on_settings(&mut self, head: Head, payload: &[u8]) -> Result<(), Fatal> {
        if head.stream != 0 {
            return Err(Fatal::protocol(frame::PROTOCOL_ERROR, "SETTINGS on a stream"));
        }
        if head.flags & frame::ACK != 0 {
            return Ok(());
        }
        if payload.len() % 6 != 0 {
            return Err(Fatal::protocol(frame::FRAME_SIZE_ERROR, "SETTINGS size"));
        }
        for entry in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([entry[0], entry[1]]);
            let value = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
            match id {
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    self.peer_max_streams = value as usize;
                }
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    if i64::from(value) > frame::MAX_WINDOW {
                        return Err(Fatal::protocol(
                            frame::FLOW_CONTROL_ERROR,
                            "an initial window beyond 2^31-1",
                        ));
                    }
                    let delta = i64::from(value) - self.peer_initial_window;
                    self.peer_initial_window = i64::from(value);
                    for active in &mut self.streams {
                        active.send_window += delta;
                    }
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(16_384..=16_777_215).contains(&value) {
                        return Err(Fatal::protocol(
                            frame::PROTOCOL_ERROR,
                            "a maximum frame size out of range",
                        ));
                    }
                    self.peer_max_frame = value as usize;
                }
                // The header table size limits what we index, and we index nothing.
                _ => {}
            }
        }
        frame::put(&mut self.out, frame::SETTINGS, frame::ACK, 0, &[]);
        Ok(())
    }

    /// The server takes no new streams; those above `last` were never seen and fail.
    fn go_away(&mut self, last: u32) {
        self.going_away = true;
        let broken = Broken::new(
            io::ErrorKind::ConnectionAborted,
            "the server is closing the connection (GOAWAY)",
        );
        let queued: Vec<Opening> = {
            let mut shared = self.conn.lock();
            shared.closed.get_or_insert(broken.clone());
            shared.opening.drain(..).collect()
        };
        for opening in queued {
            opening.stream.fail(&broken);
        }
        self.streams.retain(|active| {
            if active.id > last {
                active.stream.fail(&broken);
                false
            } else {
                true
            }
        });
    }

    /// Ends a stream: the server finished it, or it broke.
    fn end_stream(&mut self, id: u32, broken: Option<&Broken>) {
        let Some(at) = self.streams.iter().position(|a| a.id == id) else {
            return;
        };
        let active = self.streams.swap_remove(at);
        match broken {
            Some(broken) => active.stream.fail(broken),
            None => active.stream.update(|cell| cell.end = true),
        }
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

fn word(payload: &[u8]) -> Option<u32> {
    let bytes: [u8; 4] = payload.get(..4)?.try_into().ok()?;
    Some(u32::from_be_bytes(bytes))
}
