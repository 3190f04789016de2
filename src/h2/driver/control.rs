//! Frames about the connection rather than a stream's answer: PING, WINDOW_UPDATE, SETTINGS
//! and GOAWAY.

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};

use super::super::conn::{Broken, Opening, Why};
use super::super::frame::{self, Head};
use super::frames::{Found, word};
use super::{Driver, Fatal};

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    pub(super) fn on_ping(&mut self, head: Head, payload: &[u8]) -> Result<(), Fatal> {
        if head.stream != 0 {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "PING on a stream"));
        }
        let Ok(payload) = <[u8; 8]>::try_from(payload) else {
            return Err(self.fatal(frame::FRAME_SIZE_ERROR, "a PING frame's size"));
        };
        if head.flags & frame::ACK == 0 {
            self.answer(frame::PING, frame::ACK, 0, &payload);
            return self.idle_frame("PING");
        }
        if self.ping == Some(payload) {
            self.ping = None;
            self.heard();
            return Ok(());
        }
        // An answer to no ping of ours says nothing about the connection (h2 and Go ignore it).
        self.idle_frame("a PING acknowledgement for no ping of ours")
    }

    pub(super) fn on_window_update(&mut self, head: Head, payload: &[u8]) -> Result<(), Fatal> {
        let Some(increment) = word(payload).filter(|_| payload.len() == 4) else {
            return Err(self.fatal(frame::FRAME_SIZE_ERROR, "a WINDOW_UPDATE frame's size"));
        };
        let increment = i64::from(increment & 0x7fff_ffff);
        if head.stream == 0 {
            if increment == 0 {
                return Err(self.fatal(frame::PROTOCOL_ERROR, "a WINDOW_UPDATE of 0"));
            }
            self.send_window += increment;
            if self.send_window > frame::MAX_WINDOW {
                return Err(self.fatal(
                    frame::FLOW_CONTROL_ERROR,
                    "a connection window beyond 2^31-1",
                ));
            }
            return self.idle_frame("WINDOW_UPDATE");
        }
        let at = match self.find("WINDOW_UPDATE", head.stream)? {
            Found::Open(at) => at,
            // A stream's window may be raised as it closes: ignored.
            Found::Closed { .. } => return self.idle_frame("WINDOW_UPDATE on a closed stream"),
        };
        if increment == 0 {
            self.reset(head.stream, frame::PROTOCOL_ERROR, "a WINDOW_UPDATE of 0");
        } else {
            let active = &mut self.streams[at];
            let window = i64::from(active.send_window) + increment;
            active.send_window = window.min(frame::MAX_WINDOW) as i32;
            if window > frame::MAX_WINDOW {
                self.reset(
                    head.stream,
                    frame::FLOW_CONTROL_ERROR,
                    "a stream window beyond 2^31-1",
                );
            }
        }
        self.idle_frame("WINDOW_UPDATE")
    }

    pub(super) fn on_settings(&mut self, head: Head, payload: &[u8]) -> Result<(), Fatal> {
        if head.stream != 0 {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "SETTINGS on a stream"));
        }
        if head.flags & frame::ACK != 0 {
            if !payload.is_empty() {
                return Err(self.fatal(
                    frame::FRAME_SIZE_ERROR,
                    "a SETTINGS acknowledgement with a payload",
                ));
            }
            if std::mem::take(&mut self.settings_unacked) {
                return Ok(());
            }
            return self.idle_frame("a SETTINGS acknowledgement for no SETTINGS of ours");
        }
        if !payload.len().is_multiple_of(6) {
            return Err(self.fatal(frame::FRAME_SIZE_ERROR, "a SETTINGS frame's size"));
        }
        for entry in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([entry[0], entry[1]]);
            let value = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
            self.setting(id, value)?;
        }
        self.answer(frame::SETTINGS, frame::ACK, 0, &[]);
        self.idle_frame("SETTINGS")
    }

    pub(super) fn setting(&mut self, id: u16, value: u32) -> Result<(), Fatal> {
        match id {
            frame::SETTINGS_ENABLE_PUSH if value != 0 => {
                Err(self.fatal(frame::PROTOCOL_ERROR, "SETTINGS_ENABLE_PUSH from a server"))
            }
            frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                self.peer_max_streams = value as usize;
                Ok(())
            }
            frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                if i64::from(value) > frame::MAX_WINDOW {
                    return Err(
                        self.fatal(frame::FLOW_CONTROL_ERROR, "an initial window beyond 2^31-1")
                    );
                }
                let delta = i64::from(value) - self.peer_initial_window;
                self.peer_initial_window = i64::from(value);
                // A raised initial window may push an open stream's window past the limit (6.9.2).
                let mut over = None;
                for active in &mut self.streams {
                    let window = i64::from(active.send_window) + delta;
                    if window > frame::MAX_WINDOW {
                        over.get_or_insert(active.id);
                    }
                    active.send_window =
                        window.clamp(i64::from(i32::MIN), frame::MAX_WINDOW) as i32;
                }
                if let Some(id) = over {
                    let what = format!(
                        "SETTINGS_INITIAL_WINDOW_SIZE pushing stream {id}'s window beyond 2^31-1"
                    );
                    return Err(self.fatal(frame::FLOW_CONTROL_ERROR, &what));
                }
                Ok(())
            }
            frame::SETTINGS_MAX_FRAME_SIZE => {
                if !(16_384..=16_777_215).contains(&value) {
                    return Err(
                        self.fatal(frame::PROTOCOL_ERROR, "a maximum frame size out of range")
                    );
                }
                self.peer_max_frame = value as usize;
                Ok(())
            }
            // The header table size limits what we index, and we index nothing.
            _ => Ok(()),
        }
    }

    /// The server takes no new streams; those above `last` were never seen and fail, those it
    /// saw go on and are told their connection is going away, so that a caller holding one
    /// for long (a watch) can move it to a new connection. A server may say it once (kube-apiserver
    /// v1.35.4 at SIGTERM: the last stream it took) or twice, as h2's graceful shutdown does: first
    /// with the highest stream id (2^31-1), then, a round trip later, with the last stream it took.
    pub(super) fn go_away(&mut self, last: u32, code: u32) {
        self.going_away = true;
        let broken = Broken::new(
            io::ErrorKind::ConnectionAborted,
            Why::Ended { code },
            format!(
                "the server {} is closing the connection (GOAWAY, {})",
                self.conn.server,
                frame::error_name(code)
            ),
        );
        let queued: Vec<Opening> = {
            let mut shared = self.conn.lock();
            shared.closed.get_or_insert(broken.clone());
            shared.opening.drain(..).collect()
        };
        for opening in queued {
            opening.stream.fail(&broken);
        }
        let above: Vec<u32> = self
            .streams
            .iter()
            .filter(|a| a.id > last)
            .map(|a| a.id)
            .collect();
        for id in above {
            self.end_stream(id, Some(&broken));
        }
        // Each stream is told once, however often the server says it.
        for active in &self.streams {
            let waker = {
                let mut cell = active.stream.lock();
                if cell.away {
                    None
                } else {
                    cell.away = true;
                    cell.waker.take()
                }
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}
