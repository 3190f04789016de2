//! What one HTTP/2 connection's requests share with the task that drives it (`super::driver`):
//! callers queue header blocks and read what the driver leaves in their stream's cell.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

use bytes::Bytes;
use futures::task::AtomicWaker;

/// How much of one stream's answer the server may send ahead of what its reader took.
pub const STREAM_WINDOW: u32 = 1 << 20;
/// How much of all streams' answers together.
pub const CONNECTION_WINDOW: u32 = 4 << 20;
/// The largest header block read (`SETTINGS_MAX_HEADER_LIST_SIZE`, and the fragments kept).
pub const MAX_HEADER_BLOCK: usize = 256 * 1024;
/// The most header fields kept of one answer.
pub const MAX_FIELDS: usize = 256;

/// What an error that ends streams says, kept to be told to each of them.
#[derive(Clone, Debug)]
pub struct Broken {
    pub(super) kind: io::ErrorKind,
    pub(super) message: Arc<str>,
}

impl Broken {
    pub fn new(kind: io::ErrorKind, message: impl Into<Arc<str>>) -> Broken {
        Broken {
            kind,
            message: message.into(),
        }
    }

    pub(super) fn of(e: &io::Error) -> Broken {
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
    pub(super) headed: bool,
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
    shared: Mutex<Shared>,
    pub(super) driver: AtomicWaker,
}

impl Conn {
    pub(super) fn lock(&self) -> MutexGuard<'_, Shared> {
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
