//! TLS 1.3's record protection after the handshake, with the traffic keys rustls negotiated and
//! nothing else of its state.
//!
//! A watched cluster's connection lives for hours and, after its handshake, needs only its two
//! traffic keys to read and write records. rustls keeps the whole connection for that life —
//! its key schedule, the server's certificate chain, its handshake's leftovers: ~3 KiB a
//! connection beside the keys (docs/performance.md, "The fifth pass"). Once rustls has done the
//! handshake, the cryptography that verified the server and agreed the keys, it hands the keys
//! over (`dangerous_extract_secrets`, as for kernel TLS), and these records are sealed and
//! opened with ring's AEADs, as rustls' own record layer does.
//!
//! What a server may send is judged as rustls judges it: a record is application data on the
//! outside, at most 2^14 + 256 bytes, and opens with the next sequence number or the
//! connection fails (a forged, replayed, reordered or cut record alike); inside, at most
//! 2^14 bytes of application data, an alert (close_notify ends the stream, a few user_canceled
//! warnings pass, any other is an error), or handshake messages — a session ticket, ignored (these connections do not resume),
//! or a key update, which a connection without its traffic secret cannot follow: it fails,
//! and the connection is opened again. A handshake message cut over records is joined, up to
//! rustls' 64 KiB.

use std::io;

use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use rustls::{AlertDescription, ConnectionTrafficSecrets, ContentType, ExtractedSecrets};

/// The largest record a server may send: 2^14 bytes of content, and 256 of type, padding and
/// tag.
pub const MAX_RECORD: usize = 16_384 + 256;
/// The most content a record may hold.
const MAX_CONTENT: usize = 16_384;
/// Header: type, version, length.
pub const HEADER: usize = 5;
const TAG: usize = 16;
/// Records this side seals with one key before the connection is opened again: AES-GCM's
/// confidentiality limit is 2^24.5 full records (RFC 8446 §5.5), and a key update needs the
/// secret rustls kept.
const SEAL_LIMIT: u64 = 1 << 24;
/// The most of a handshake message cut over records that is held (rustls' own limit).
const MAX_HANDSHAKE: usize = 0xffff;
/// The user_canceled warnings let pass before the connection fails (rustls' own count).
const WARNINGS: u8 = 4;

/// What the content of one opened record was.
#[derive(Debug, PartialEq)]
pub enum Content {
    /// Application data, appended to the reader's plaintext.
    Data,
    /// Nothing for the reader: a session ticket, or empty application data.
    Nothing,
    /// The server's close_notify.
    Closed,
}

/// One direction's key, its IV and its next sequence number.
struct Direction {
    key: LessSafeKey,
    iv: [u8; aead::NONCE_LEN],
    seq: u64,
}

impl Direction {
    fn new((seq, secrets): (u64, ConnectionTrafficSecrets)) -> Result<Direction, rustls::Error> {
        let (algorithm, key, iv) = match &secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (&aead::AES_128_GCM, key, iv),
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (&aead::AES_256_GCM, key, iv),
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                (&aead::CHACHA20_POLY1305, key, iv)
            }
            _ => return Err(rustls::Error::General("an AEAD ring does not offer".into())),
        };
        let key = UnboundKey::new(algorithm, key.as_ref())
            .map_err(|_| rustls::Error::General("a traffic key of the wrong size".into()))?;
        let iv = <[u8; aead::NONCE_LEN]>::try_from(iv.as_ref())
            .map_err(|_| rustls::Error::General("an IV of the wrong size".into()))?;
        Ok(Direction {
            key: LessSafeKey::new(key),
            iv,
            seq,
        })
    }

    /// The nonce of the next record (RFC 8446 §5.3): the IV, its last eight bytes XORed with
    /// the sequence number.
    fn nonce(&self) -> Nonce {
        let mut nonce = self.iv;
        for (n, s) in nonce[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        Nonce::assume_unique_for_key(nonce)
    }
}

/// The two directions' keys of a TLS 1.3 connection after its handshake.
pub struct Records {
    read: Direction,
    write: Direction,
    /// The start of a handshake message whose end is in a later record.
    handshake: Vec<u8>,
    /// user_canceled warnings let pass so far.
    warnings: u8,
}

fn refused(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

fn misbehaved(what: &str) -> io::Error {
    refused(rustls::Error::General(format!("the server sent {what}")))
}

impl Records {
    pub fn new(secrets: ExtractedSecrets) -> Result<Records, rustls::Error> {
        Ok(Records {
            read: Direction::new(secrets.rx)?,
            write: Direction::new(secrets.tx)?,
            handshake: Vec::new(),
            warnings: 0,
        })
    }

    /// Bytes held between records (tests).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.handshake.capacity()
    }

    /// Appends to `out` one record of `content` of type `kind`: at most [`MAX_CONTENT`] bytes.
    pub fn seal(&mut self, kind: ContentType, content: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        if content.len() > MAX_CONTENT {
            return Err(io::Error::other("more than one record's content"));
        }
        if self.write.seq >= SEAL_LIMIT {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "this connection has sealed as many TLS records as one key may; it is opened again",
            ));
        }
        let length = content.len() + 1 + TAG;
        let header = record_header(length);
        let nonce = self.write.nonce();
        let at = out.len();
        out.extend_from_slice(&header);
        out.extend_from_slice(content);
        out.push(u8::from(kind));
        let tag = self
            .write
            .key
            .seal_in_place_separate_tag(nonce, Aad::from(header), &mut out[at + HEADER..])
            .map_err(|_| {
                out.truncate(at);
                io::Error::other("a record could not be sealed")
            })?;
        out.extend_from_slice(tag.as_ref());
        self.write.seq += 1;
        Ok(())
    }

    /// The length of the first record in `incoming` (header included) once it is whole; None
    /// while more is needed. A header no TLS 1.3 server sends after its handshake is refused
    /// before the rest is read.
    pub fn whole(incoming: &[u8]) -> io::Result<Option<usize>> {
        let Some(header) = incoming.get(..HEADER) else {
            return Ok(None);
        };
        let kind = ContentType::from(header[0]);
        if kind != ContentType::ApplicationData {
            return Err(refused(rustls::Error::InappropriateMessage {
                expect_types: vec![ContentType::ApplicationData],
                got_type: kind,
            }));
        }
        if header[1..3] != [0x03, 0x03] {
            return Err(misbehaved(
                "a record of a version other than TLS 1.2's legacy one",
            ));
        }
        let length = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if length > MAX_RECORD {
            return Err(refused(rustls::Error::InvalidMessage(
                rustls::InvalidMessage::MessageTooLarge,
            )));
        }
        if length < TAG + 1 {
            return Err(refused(rustls::Error::DecryptError));
        }
        Ok((incoming.len() >= HEADER + length).then_some(HEADER + length))
    }

    /// Opens the whole record `record` (as [`Records::whole`] measured it) in place, appending
    /// application data to `plain`.
    pub fn open(&mut self, record: &mut [u8], plain: &mut Vec<u8>) -> io::Result<Content> {
        let (header, body) = record.split_at_mut(HEADER);
        let header: [u8; HEADER] = [header[0], header[1], header[2], header[3], header[4]];
        let nonce = self.read.nonce();
        let inner = self
            .read
            .key
            .open_in_place(nonce, Aad::from(header), body)
            .map_err(|_| refused(rustls::Error::DecryptError))?;
        self.read.seq = self
            .read
            .seq
            .checked_add(1)
            .ok_or_else(|| misbehaved("more records than sequence numbers"))?;
        // The content type is the last byte that is not padding.
        let Some(end) = inner.iter().rposition(|b| *b != 0) else {
            return Err(misbehaved("a record with no content type"));
        };
        let (content, kind) = (&inner[..end], ContentType::from(inner[end]));
        if content.len() > MAX_CONTENT {
            return Err(refused(rustls::Error::PeerSentOversizedRecord));
        }
        if !self.handshake.is_empty() && kind != ContentType::Handshake {
            return Err(misbehaved(
                "a record between the pieces of a handshake message",
            ));
        }
        match kind {
            ContentType::ApplicationData if content.is_empty() => Ok(Content::Nothing),
            ContentType::ApplicationData => {
                plain.extend_from_slice(content);
                Ok(Content::Data)
            }
            // As rustls reads alerts in TLS 1.3: close_notify ends the stream; a warning is
            // an error but for user_canceled, let pass a few times; a fatal alert is an error.
            ContentType::Alert => match *content {
                [1 | 2, 0] => Ok(Content::Closed),
                [1, 90] if self.warnings < WARNINGS => {
                    self.warnings += 1;
                    Ok(Content::Nothing)
                }
                [1 | 2, description] => Err(refused(rustls::Error::AlertReceived(
                    AlertDescription::from(description),
                ))),
                [_, _] => Err(misbehaved("an alert of no known level")),
                _ => Err(misbehaved("an alert of the wrong length")),
            },
            ContentType::Handshake if content.is_empty() => {
                Err(misbehaved("an empty handshake record"))
            }
            ContentType::Handshake => self.handshake(content),
            other => Err(refused(rustls::Error::InappropriateMessage {
                expect_types: vec![ContentType::ApplicationData],
                got_type: other,
            })),
        }
    }

    /// Handshake messages after the handshake: session tickets are let go; a key update cannot
    /// be followed.
    fn handshake(&mut self, content: &[u8]) -> io::Result<Content> {
        let joined;
        let mut rest = if self.handshake.is_empty() {
            content
        } else {
            if self.handshake.len() + content.len() > MAX_HANDSHAKE + 4 {
                return Err(refused(rustls::Error::InvalidMessage(
                    rustls::InvalidMessage::MessageTooLarge,
                )));
            }
            let mut whole = std::mem::take(&mut self.handshake);
            whole.extend_from_slice(content);
            joined = whole;
            &joined[..]
        };
        while !rest.is_empty() {
            let Some(&[kind, a, b, c]) = rest.get(..4) else {
                return self.keep(rest);
            };
            let length = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
            if length > MAX_HANDSHAKE {
                return Err(refused(rustls::Error::InvalidMessage(
                    rustls::InvalidMessage::HandshakePayloadTooLarge,
                )));
            }
            if rest.len() < 4 + length {
                return self.keep(rest);
            }
            match kind {
                // NewSessionTicket: these connections do not resume.
                4 => {}
                // KeyUpdate.
                24 => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "the server updated its TLS keys, which this connection does not \
                         follow; it is opened again",
                    ));
                }
                other => {
                    return Err(misbehaved(&format!(
                        "a handshake message of type {other} after the handshake"
                    )));
                }
            }
            rest = &rest[4 + length..];
        }
        Ok(Content::Nothing)
    }

    /// Keeps the start of a handshake message until its end comes.
    fn keep(&mut self, start: &[u8]) -> io::Result<Content> {
        self.handshake = start.to_vec();
        Ok(Content::Nothing)
    }
}

fn record_header(length: usize) -> [u8; HEADER] {
    let [hi, lo] = u16::try_from(length).unwrap_or(u16::MAX).to_be_bytes();
    [u8::from(ContentType::ApplicationData), 0x03, 0x03, hi, lo]
}

#[cfg(test)]
mod tests;
