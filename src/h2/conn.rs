//! What one HTTP/2 connection's requests share with the task that drives it (`super::driver`):
//! callers queue header blocks and read what the driver leaves in their stream's cell.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use futures::task::AtomicWaker;

/// How much of one stream's answer the server may send ahead of what its reader took.
pub const STREAM_WINDOW: u32 = 1 << 20;
/// How much of all streams' answers together.
pub const CONNECTION_WINDOW: u32 = 4 << 20;
/// A reader wakes the driver once it has read this much since the driver last looked: with at
/// most 100 streams open that keeps less than half the connection's window unnoticed.
pub const WAKE_AFTER_READ: u32 = 16 * 1024;
/// The largest header block read (`SETTINGS_MAX_HEADER_LIST_SIZE`, and the fragments kept).
pub const MAX_HEADER_BLOCK: usize = 256 * 1024;
/// The most header fields one answer may have.
pub const MAX_FIELDS: usize = 256;
/// DATA payloads smaller than this are copied into a shared chunk instead of kept as their own
/// allocation, so that what a stream holds is proportional to its bytes, never to its frames.
pub const SMALL_DATA: usize = 4 * 1024;
/// The size of a chunk small payloads are gathered into.
const CHUNK: usize = 16 * 1024;
/// What keeping one piece of data costs beyond its bytes (its `Bytes`, its shared header, its
/// place in the queue), counted so that the accounting tells the truth about many small pieces.
pub const PIECE_COST: usize = 64;

/// Why a stream or its connection ended, as its caller can tell (the words say the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The server broke HTTP/2 (or flooded it); we answered with this error code, in GOAWAY
    /// for the connection or RST_STREAM for one stream.
    Violation { code: u32 },
    /// The server reset the stream, or is going away, with this error code.
    Ended { code: u32 },
    /// The server did not answer a ping in time: the connection is dead.
    PingUnanswered,
    /// The server takes no streams at all, or this connection has used every stream id.
    NoStreams,
    /// The connection closed (idled out, the server hung up, or the socket failed).
    Closed,
}

/// The error a caller gets when a stream or its connection ended: [`Why`] for logic, the words
/// (naming the server and the rule it broke) for people. Inside the `io::Error` the body and
/// the client return; [`H2Error::of`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct H2Error {
    pub why: Why,
    pub message: Arc<str>,
}

impl std::fmt::Display for H2Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for H2Error {}

impl H2Error {
    /// The H2Error inside `e`, if this client made it.
    pub fn of<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a H2Error> {
        let mut source = Some(e);
        while let Some(e) = source {
            if let Some(found) = e.downcast_ref::<H2Error>() {
                return Some(found);
            }
            if let Some(io) = e.downcast_ref::<io::Error>()
                && let Some(found) = io.get_ref().and_then(|i| i.downcast_ref::<H2Error>())
            {
                return Some(found);
            }
            source = e.source();
        }
        None
    }
}

/// What an error that ends streams says, kept to be told to each of them.
#[derive(Clone, Debug)]
pub struct Broken {
    pub(super) kind: io::ErrorKind,
    pub(super) error: H2Error,
}

impl Broken {
    pub fn new(kind: io::ErrorKind, why: Why, message: impl Into<Arc<str>>) -> Broken {
        Broken {
            kind,
            error: H2Error {
                why,
                message: message.into(),
            },
        }
    }

    pub(super) fn of(e: &io::Error) -> Broken {
        Broken::new(e.kind(), Why::Closed, e.to_string())
    }

    pub fn error(&self) -> io::Error {
        io::Error::new(self.kind, self.error.clone())
    }
}

/// What a stream's caller and the driver share.
#[derive(Default)]
pub struct Cell {
    /// Boxed: taken once, while the cell is kept for the stream's life (a watch's: hours), and
    /// the parts inline were half of it.
    pub head: Option<Box<http::response::Parts>>,
    /// Received data not read yet, oldest first; small payloads are gathered in `tail`.
    data: VecDeque<Bytes>,
    /// Boxed: most streams never gather anything, and each stream's cell is kept for its life.
    tail: Option<Box<BytesMut>>,
    /// The server ended the stream (after `data`).
    pub end: bool,
    pub broken: Option<Broken>,
    pub waker: Option<Waker>,
    /// Bytes the caller read that the server has not been told it may send again.
    pub consumed: u32,
    /// The caller let go of the stream: the driver cancels it.
    pub dropped: bool,
    /// The server sent GOAWAY: this stream goes on, but its connection takes no new ones. A
    /// caller that holds a stream for long (a watch) moves it to a new connection.
    pub away: bool,
}

pub struct Stream {
    cell: Mutex<Cell>,
}

impl Stream {
    pub fn lock(&self) -> MutexGuard<'_, Cell> {
        self.cell.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates a stream with nothing received yet.
    pub(super) fn new() -> Stream {
        Stream {
            cell: Mutex::new(Cell::default()),
        }
    }

    pub(super) fn update(&self, change: impl FnOnce(&mut Cell)) {
        let waker = {
            let mut cell = self.lock();
            change(&mut cell);
            cell.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    pub(super) fn fail(&self, broken: &Broken) {
        self.update(|cell| {
            if !cell.end {
                cell.broken = Some(broken.clone());
            }
        });
    }
}

impl Cell {
    /// Keeps a DATA payload for the reader. While the reader keeps up, each payload is handed
    /// on as it came (one allocation of its own size); once data waits, a small payload is
    /// copied into a shared chunk instead, so that a server sending many small frames costs
    /// their bytes, not a piece each.
    pub(super) fn push(&mut self, data: Bytes) {
        if data.len() >= SMALL_DATA || self.drained() {
            self.seal();
            self.data.push_back(data);
            return;
        }
        let room = self.tail.as_ref().map_or(0, |t| t.capacity() - t.len());
        if room < data.len() {
            self.seal();
            self.tail = Some(Box::new(BytesMut::with_capacity(CHUNK)));
        }
        if let Some(tail) = self.tail.as_mut() {
            tail.extend_from_slice(&data);
        }
    }

    /// The chunk gathering small payloads is done: it joins the queue.
    fn seal(&mut self) {
        if let Some(tail) = self.tail.as_mut().filter(|t| !t.is_empty()) {
            let full = tail.split().freeze();
            self.data.push_back(full);
        }
    }

    /// The oldest data not read yet.
    pub fn pop(&mut self) -> Option<Bytes> {
        if let Some(data) = self.data.pop_front() {
            // Caught up: the queue's room is let go. A burst (a streaming list's initial
            // events) would otherwise leave every watch holding room for it for hours; a
            // payload that waits again costs one small allocation.
            if self.data.is_empty() {
                self.data = VecDeque::new();
            }
            return Some(data);
        }
        // The reader caught up: the chunk's spare room is let go with it.
        let tail = self.tail.take().filter(|t| !t.is_empty())?;
        Some((*tail).freeze())
    }

    /// Whether every byte received was read.
    pub fn drained(&self) -> bool {
        self.data.is_empty() && self.tail.as_ref().is_none_or(|t| t.is_empty())
    }

    /// The memory this stream's received data holds, pieces counted at their cost.
    pub fn held(&self) -> usize {
        let pieces: usize = self.data.iter().map(|d| d.len() + PIECE_COST).sum();
        pieces + self.tail.as_ref().map_or(0, |t| t.capacity())
    }
}

/// A request waiting for a stream id.
pub(super) struct Opening {
    pub(super) stream: Arc<Stream>,
    pub(super) block: Vec<u8>,
    pub(super) body: Bytes,
}

#[derive(Default)]
pub(super) struct Shared {
    pub(super) opening: VecDeque<Opening>,
    /// Why no new request is taken: the connection broke, went away, or idled out.
    pub(super) closed: Option<Broken>,
    /// Nobody will send another request: the driver ends once its streams are done.
    pub(super) abandoned: bool,
}

/// The handle requests go through.
#[derive(Default)]
pub struct Conn {
    /// The server's authority, named in every error.
    pub(super) server: Box<str>,
    shared: Mutex<Shared>,
    pub(super) driver: AtomicWaker,
    /// The most memory the driver held at once for this connection (its buffers and what its
    /// streams received and nobody read yet), by its own accounting.
    peak_held: AtomicUsize,
}

impl Conn {
    /// The handle of a connection to `server` (its authority).
    pub fn new(server: &str) -> Conn {
        Conn {
            server: server.into(),
            ..Conn::default()
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a new request may go on this connection.
    pub fn usable(&self) -> bool {
        self.lock().closed.is_none()
    }

    /// Queues a request (its header block and body) and wakes the driver.
    pub fn open(&self, block: Vec<u8>, body: Bytes) -> Result<Arc<Stream>, io::Error> {
        let stream = Arc::new(Stream::new());
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

    /// Records what the driver holds now; the peak is kept.
    pub(super) fn holding(&self, bytes: usize) {
        self.peak_held.fetch_max(bytes, Ordering::Relaxed);
    }

    /// The most memory the driver held at once for this connection.
    #[cfg(any(test, feature = "testing"))]
    pub fn peak_held(&self) -> usize {
        self.peak_held.load(Ordering::Relaxed)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_that_keeps_up_gets_payloads_as_they_came_and_nothing_is_kept_between() {
        let mut cell = Cell::default();
        cell.push(Bytes::from_static(b"event one\n"));
        assert_eq!(cell.pop().as_deref(), Some(&b"event one\n"[..]));
        assert_eq!(cell.held(), 0);
        // Behind: small payloads gather in one chunk, in order, and the chunk goes when read.
        for piece in [&b"a"[..], b"b", b"c"] {
            cell.push(Bytes::copy_from_slice(piece));
        }
        cell.push(Bytes::from(vec![b'd'; SMALL_DATA]));
        cell.push(Bytes::from_static(b"e"));
        let mut read = Vec::new();
        while let Some(data) = cell.pop() {
            read.extend_from_slice(&data);
        }
        assert_eq!(read, [&b"abc"[..], &[b'd'; SMALL_DATA], b"e"].concat());
        assert!(cell.drained());
        assert_eq!(cell.held(), 0);
        // Nor room for the burst: a watch's cell is kept for hours after its initial events.
        assert_eq!(cell.data.capacity(), 0);
    }
}
