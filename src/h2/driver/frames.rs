//! What the driver does with each frame the server sends: the stream states of RFC 9113 (5.1)
//! and the rules of each frame type (6).

use std::io;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use super::super::conn::{Broken, MAX_HEADER_BLOCK, Why};
use super::super::frame::{self, Head};
use super::{Block, Driver, Fatal, MAX_CONTINUATIONS, fields};

/// The most informational (1xx) answers before the final one (Go's client allows 5).
pub(super) const MAX_INFORMATIONAL: u8 = 5;

/// Where a frame's stream stands.
pub(super) enum Found {
    /// Open: its index among the driver's streams.
    Open(usize),
    /// Closed; `reset` when we reset it lately, so that its late frames are expected.
    Closed { reset: bool },
}

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    pub(super) fn on_frame(&mut self, head: Head) -> Result<(), Fatal> {
        let payload = std::mem::take(&mut self.payload);
        if self.block.is_some() && head.kind != frame::CONTINUATION {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "a frame inside a header block"));
        }
        match head.kind {
            frame::DATA => self.on_data(head, payload),
            frame::HEADERS => self.on_headers(head, payload),
            frame::CONTINUATION => self.on_continuation(head, &payload),
            frame::PRIORITY_FRAME => {
                if head.stream == 0 {
                    return Err(self.fatal(frame::PROTOCOL_ERROR, "PRIORITY on stream 0"));
                }
                if payload.len() != 5 {
                    return Err(self.fatal(frame::FRAME_SIZE_ERROR, "a PRIORITY frame's size"));
                }
                // Priorities are ignored, as the protocol allows.
                self.idle_frame("PRIORITY")
            }
            frame::RST_STREAM => self.on_reset(head, &payload),
            frame::SETTINGS => self.on_settings(head, &payload),
            frame::PUSH_PROMISE => Err(self.fatal(
                frame::PROTOCOL_ERROR,
                "PUSH_PROMISE, which fluxfleet disabled",
            )),
            frame::PING => self.on_ping(head, &payload),
            frame::GOAWAY => {
                if head.stream != 0 {
                    return Err(self.fatal(frame::PROTOCOL_ERROR, "GOAWAY on a stream"));
                }
                let (Some(last), Some(code)) = (word(&payload), payload.get(4..).and_then(word))
                else {
                    return Err(self.fatal(frame::FRAME_SIZE_ERROR, "a GOAWAY frame's size"));
                };
                self.go_away(last & 0x7fff_ffff, code);
                // Said once or twice by a server going away; past that it is counted as the
                // frames that carry nothing are.
                self.idle_frame("GOAWAY")
            }
            frame::WINDOW_UPDATE => self.on_window_update(head, &payload),
            // Frame types this client does not know are ignored (RFC 9113, 4.1), and counted.
            _ => self.idle_frame("a frame of an unknown type"),
        }
    }

    /// The state of the stream a frame of `kind` names; frames on streams that were never
    /// opened, or that the server would have opened itself, are connection errors (5.1).
    pub(super) fn find(&self, kind: &str, id: u32) -> Result<Found, Fatal> {
        if id.is_multiple_of(2) {
            let what = format!("{kind} on stream {id}, which only a server push could open");
            return Err(self.fatal(frame::PROTOCOL_ERROR, &what));
        }
        if id >= self.next_id {
            let what = format!("{kind} on stream {id}, which was never opened");
            return Err(self.fatal(frame::PROTOCOL_ERROR, &what));
        }
        Ok(match self.streams.iter().position(|a| a.id == id) {
            Some(at) => Found::Open(at),
            None => Found::Closed {
                reset: self.recent_resets.contains(id),
            },
        })
    }

    /// A frame on a closed stream: late frames of a stream we reset are ignored; DATA or
    /// HEADERS on one the server ended is answered with STREAM_CLOSED (5.1). Both are counted.
    pub(super) fn on_closed(&mut self, kind: &str, id: u32, reset: bool) -> Result<(), Fatal> {
        if !reset && matches!(kind, "DATA" | "HEADERS") {
            self.answer(
                frame::RST_STREAM,
                0,
                id,
                &frame::STREAM_CLOSED.to_be_bytes(),
            );
            self.recent_resets.remember(id);
        }
        self.idle_frame(&format!("{kind} on a closed stream"))
    }

    fn on_data(&mut self, head: Head, payload: Vec<u8>) -> Result<(), Fatal> {
        if head.stream == 0 {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "DATA on stream 0"));
        }
        let len = payload.len();
        self.recv_window -= len as i64;
        if self.recv_window < 0 {
            return Err(self.fatal(
                frame::FLOW_CONTROL_ERROR,
                "more data than the connection's window",
            ));
        }
        let Some((start, end)) = frame::unpadded(&head, &payload) else {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "DATA padded beyond its end"));
        };
        let at = match self.find("DATA", head.stream)? {
            Found::Open(at) => at,
            Found::Closed { reset } => {
                // Dropped, and its share of the connection's window given back.
                self.received += len as u32;
                return self.on_closed("DATA", head.stream, reset);
            }
        };
        let active = &mut self.streams[at];
        active.conn_owed += len as u32;
        active.recv_window -= len as i32;
        let violation = if active.recv_window < 0 {
            Some((
                frame::FLOW_CONTROL_ERROR,
                "more data than the stream's window",
            ))
        } else if !active.headed {
            Some((frame::PROTOCOL_ERROR, "DATA before the answer's HEADERS"))
        } else {
            None
        };
        if let Some((code, what)) = violation {
            self.reset(head.stream, code, what);
            return Ok(());
        }
        active.received = active.received.saturating_add((end - start) as u32);
        if active.received > active.expected {
            let expected = active.expected;
            let what = format!("more data than its content-length of {expected}");
            self.reset(head.stream, frame::PROTOCOL_ERROR, &what);
            return Ok(());
        }
        let end_stream = head.flags & frame::END_STREAM != 0;
        let data = Bytes::from(payload).slice(start..end);
        if data.is_empty() && !end_stream {
            self.idle_frame("an empty DATA frame")?;
        } else {
            self.heard();
        }
        let active = &self.streams[at];
        active.stream.update(|cell| {
            // Padding is never read: its window comes back at once.
            cell.consumed += (len - data.len()) as u32;
            if !data.is_empty() {
                cell.push(data);
            }
        });
        if end_stream {
            self.end_stream(head.stream, None);
        }
        Ok(())
    }

    fn on_headers(&mut self, head: Head, payload: Vec<u8>) -> Result<(), Fatal> {
        if head.stream == 0 {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "HEADERS on stream 0"));
        }
        self.find("HEADERS", head.stream)?;
        let Some((start, end)) = frame::unpadded(&head, &payload) else {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "HEADERS padded beyond its end"));
        };
        let mut fragment = payload;
        fragment.truncate(end);
        fragment.drain(..start);
        self.block = Some(Block {
            stream: head.stream,
            end_stream: head.flags & frame::END_STREAM != 0,
            fragment,
            continuations: 0,
        });
        if head.flags & frame::END_HEADERS != 0 {
            self.on_block()?;
        }
        Ok(())
    }

    fn on_continuation(&mut self, head: Head, payload: &[u8]) -> Result<(), Fatal> {
        let Some(block) = self.block.as_mut().filter(|b| b.stream == head.stream) else {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "CONTINUATION without HEADERS"));
        };
        block.continuations += 1;
        if block.continuations > MAX_CONTINUATIONS {
            let what =
                format!("more than {MAX_CONTINUATIONS} CONTINUATION frames in one header block");
            return Err(self.fatal(frame::ENHANCE_YOUR_CALM, &what));
        }
        if block.fragment.len() + payload.len() > MAX_HEADER_BLOCK {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "a header block larger than 256 KiB"));
        }
        block.fragment.extend_from_slice(payload);
        if head.flags & frame::END_HEADERS != 0 {
            self.on_block()?;
        }
        Ok(())
    }

    /// A whole header block: the answer's head, trailers, or an informational answer.
    fn on_block(&mut self) -> Result<(), Fatal> {
        let Some(block) = self.block.take() else {
            return Ok(());
        };
        let at = match self.find("HEADERS", block.stream)? {
            Found::Open(at) => Some(at),
            Found::Closed { .. } => None,
        };
        let trailers = at.is_some_and(|at| self.streams[at].headed);
        // Decoded even for a closed stream: the block is part of the connection's state.
        let fields = fields::read(&mut self.decoder, &block.fragment, trailers)
            .map_err(|e| self.fatal(frame::COMPRESSION_ERROR, e.0))?;
        let Some(at) = at else {
            let reset = self.recent_resets.contains(block.stream);
            return self.on_closed("HEADERS", block.stream, reset);
        };
        let id = block.stream;
        if let Some(what) = &fields.malformed {
            self.reset(id, frame::PROTOCOL_ERROR, what);
            return Ok(());
        }
        if trailers {
            if !block.end_stream {
                self.reset(
                    id,
                    frame::PROTOCOL_ERROR,
                    "trailers that do not end the stream",
                );
                return Ok(());
            }
            self.heard();
            self.end_stream(id, None);
            return Ok(());
        }
        let Some(code) = fields.status else {
            self.reset(id, frame::PROTOCOL_ERROR, "an answer without :status");
            return Ok(());
        };
        if (100..200).contains(&code) {
            if code == 101 || block.end_stream {
                let what = format!("an informational answer ({code}) that HTTP/2 forbids here");
                self.reset(id, frame::PROTOCOL_ERROR, &what);
                return Ok(());
            }
            let active = &mut self.streams[at];
            active.informational += 1;
            if active.informational > MAX_INFORMATIONAL {
                let what = format!("more than {MAX_INFORMATIONAL} informational answers");
                return Err(self.fatal(frame::ENHANCE_YOUR_CALM, &what));
            }
            return self.idle_frame("an informational answer");
        }
        let (mut parts, ()) = http::Response::new(()).into_parts();
        parts.version = http::Version::HTTP_2;
        parts.headers = fields.headers;
        match http::StatusCode::from_u16(code) {
            Ok(status) => parts.status = status,
            Err(_) => {
                self.reset(
                    id,
                    frame::PROTOCOL_ERROR,
                    "an answer with a malformed status",
                );
                return Ok(());
            }
        }
        self.heard();
        let active = &mut self.streams[at];
        active.headed = true;
        active.expected = fields
            .content_length
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(u32::MAX);
        active
            .stream
            .update(|cell| cell.head = Some(Box::new(parts)));
        if block.end_stream {
            self.end_stream(id, None);
        }
        Ok(())
    }

    fn on_reset(&mut self, head: Head, payload: &[u8]) -> Result<(), Fatal> {
        if head.stream == 0 {
            return Err(self.fatal(frame::PROTOCOL_ERROR, "RST_STREAM on stream 0"));
        }
        let Some(code) = word(payload).filter(|_| payload.len() == 4) else {
            return Err(self.fatal(frame::FRAME_SIZE_ERROR, "a RST_STREAM frame's size"));
        };
        if let Found::Open(_) = self.find("RST_STREAM", head.stream)? {
            let broken = Broken::new(
                io::ErrorKind::ConnectionReset,
                Why::Ended { code },
                format!(
                    "the server {} reset the stream (HTTP/2 error code {code}, {})",
                    self.conn.server,
                    frame::error_name(code)
                ),
            );
            self.end_stream(head.stream, Some(&broken));
        }
        self.idle_frame("RST_STREAM")
    }
}

pub(super) fn word(payload: &[u8]) -> Option<u32> {
    let bytes: [u8; 4] = payload.get(..4)?.try_into().ok()?;
    Some(u32::from_be_bytes(bytes))
}
