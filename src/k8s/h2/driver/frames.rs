//! What the driver does with each frame the server sends.

use std::io;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use super::super::conn::{Broken, MAX_FIELDS, MAX_HEADER_BLOCK, Opening};
use super::super::frame::{self, Head};
use super::{Block, Driver, Fatal};

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    pub(super) fn on_frame(&mut self, head: Head) -> Result<(), Fatal> {
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
                    return Err(Fatal::protocol(
                        frame::PROTOCOL_ERROR,
                        "HEADERS on stream 0",
                    ));
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
                let increment = word(&payload).ok_or_else(|| {
                    Fatal::protocol(frame::FRAME_SIZE_ERROR, "WINDOW_UPDATE size")
                })? & 0x7fff_ffff;
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
                Some(code) if !malformed => match builder.status(code).body(()) {
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
                },
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
            return Err(Fatal::protocol(
                frame::PROTOCOL_ERROR,
                "SETTINGS on a stream",
            ));
        }
        if head.flags & frame::ACK != 0 {
            return Ok(());
        }
        if !payload.len().is_multiple_of(6) {
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
}

fn word(payload: &[u8]) -> Option<u32> {
    let bytes: [u8; 4] = payload.get(..4)?.try_into().ok()?;
    Some(u32::from_be_bytes(bytes))
}
