//! Streams as the driver keeps them: requests given ids, windows given back as callers read,
//! request bodies sent, and streams ended.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

use super::super::conn::{Broken, CONNECTION_WINDOW, STREAM_WINDOW, Why};
use super::super::frame;
use super::{Active, Driver, LAST_STREAM_ID, MAX_OPEN, OUT_HIGH, RECENT_RESETS};

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    /// Gives queued requests stream ids, as many as the server allows open at once.
    pub(super) fn intake(&mut self) {
        let mut shared = self.conn.lock();
        if self.peer_max_streams == 0 && self.streams.is_empty() && !shared.opening.is_empty() {
            // Nothing would ever leave the queue: say why instead of letting requests time out.
            let broken = Broken::new(
                io::ErrorKind::ConnectionRefused,
                Why::NoStreams,
                format!(
                    "the server {} allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS is 0)",
                    self.conn.server
                ),
            );
            for opening in shared.opening.drain(..) {
                opening.stream.fail(&broken);
            }
            shared.closed.get_or_insert(broken);
            self.going_away = true;
            return;
        }
        while self.streams.len() < self.peer_max_streams.min(MAX_OPEN) && !self.going_away {
            let Some(opening) = shared.opening.pop_front() else {
                break;
            };
            if opening.stream.lock().dropped {
                continue;
            }
            if self.next_id > LAST_STREAM_ID {
                // Every stream id was used: this connection takes no more.
                let broken = Broken::new(
                    io::ErrorKind::ConnectionReset,
                    Why::NoStreams,
                    "stream ids ran out",
                );
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
                send_window: self.peer_initial_window as i32,
                body: opening.body,
                recv_window: STREAM_WINDOW as i32,
                unreturned: 0,
                conn_owed: 0,
                headed: false,
                informational: 0,
                expected: u32::MAX,
                received: 0,
            });
            self.idle_since = None;
        }
        // The queue fills when a client opens many streams at once (a cluster's watches) and
        // then sits empty for hours: its room is let go once it is.
        if shared.opening.is_empty() && shared.opening.capacity() > 0 {
            shared.opening = std::collections::VecDeque::new();
        }
    }

    /// Cancels what callers let go of, gives back the windows of what they read, and sends
    /// request bodies as far as the windows (and the write buffer's high mark) allow.
    pub(super) fn tend_streams(&mut self) {
        let out = &mut self.out;
        let send_window = &mut self.send_window;
        let received = &mut self.received;
        let recent_resets = &mut self.recent_resets;
        let max_frame = self.peer_max_frame;
        self.streams.retain_mut(|active| {
            let (dropped, consumed) = {
                let mut cell = active.stream.lock();
                (cell.dropped, std::mem::take(&mut cell.consumed))
            };
            // What the caller read is the connection's again at once; the stream's window is
            // given back in halves, as a window update costs a frame.
            let consumed = consumed.min(active.conn_owed);
            active.conn_owed -= consumed;
            *received += consumed;
            if dropped {
                frame::rst_stream(out, active.id, frame::CANCEL);
                recent_resets.remember(active.id);
                *received += std::mem::take(&mut active.conn_owed);
                return false;
            }
            active.unreturned += consumed;
            if active.unreturned >= STREAM_WINDOW / 2 {
                let increment = std::mem::take(&mut active.unreturned);
                frame::window_update(out, active.id, increment);
                active.recv_window += increment as i32;
            }
            while !active.body.is_empty() && out.len() < OUT_HIGH {
                let room = i64::from(active.send_window)
                    .min(*send_window)
                    .min(max_frame as i64);
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
                active.send_window -= chunk.len() as i32;
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

    /// A stream error: the server is told (RST_STREAM with `code`) and the caller hears what
    /// rule the server broke.
    pub(super) fn reset(&mut self, id: u32, code: u32, what: &str) {
        self.answer(frame::RST_STREAM, 0, id, &code.to_be_bytes());
        self.recent_resets.remember(id);
        let broken = self.broke(code, what);
        self.end_stream(id, Some(&broken));
    }

    /// Ends a stream: the server finished it, or it broke. A finished answer shorter than its
    /// `content-length` is broken (RFC 9113, 8.1.1).
    pub(super) fn end_stream(&mut self, id: u32, broken: Option<&Broken>) {
        let Some(at) = self.streams.iter().position(|a| a.id == id) else {
            return;
        };
        let active = self.streams.swap_remove(at);
        // What the stream holds is bounded by its own window from now on.
        self.received += active.conn_owed;
        let (expected, received) = (active.expected, active.received);
        let short = (expected != u32::MAX && expected != received).then(|| {
            self.broke(
                frame::PROTOCOL_ERROR,
                &format!("an answer of {received} bytes where its content-length said {expected}"),
            )
        });
        match broken.or(short.as_ref()) {
            Some(broken) => active.stream.fail(broken),
            None => active.stream.update(|cell| cell.end = true),
        }
    }
}

/// The streams we reset lately, whose late frames are then ignored; allocated only once a
/// stream is reset (0 is never a stream we opened).
#[derive(Default)]
pub(super) struct Resets(Option<Box<([u32; RECENT_RESETS], usize)>>);

impl Resets {
    pub(super) fn remember(&mut self, id: u32) {
        let (ids, next) = &mut **self
            .0
            .get_or_insert_with(|| Box::new(([0; RECENT_RESETS], 0)));
        ids[*next % RECENT_RESETS] = id;
        *next = (*next + 1) % RECENT_RESETS;
    }

    pub(super) fn contains(&self, id: u32) -> bool {
        self.0.as_ref().is_some_and(|recent| recent.0.contains(&id))
    }
}
