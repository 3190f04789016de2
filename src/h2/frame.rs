//! HTTP/2 frames (RFC 9113, section 4 and 6): their 9-byte header, and writing the few a client
//! sends.

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY_FRAME: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY: u8 = 0x20;

pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 0x1;
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
pub const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// Error codes (RFC 9113, section 7).
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const STREAM_CLOSED: u32 = 0x5;
pub const FRAME_SIZE_ERROR: u32 = 0x6;
pub const CANCEL: u32 = 0x8;
pub const COMPRESSION_ERROR: u32 = 0x9;
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// An error code's name (RFC 9113, 7), for messages.
pub fn error_name(code: u32) -> &'static str {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    NAMES
        .get(code as usize)
        .copied()
        .unwrap_or("an unknown error code")
}

/// The frame size every peer must accept, and the largest fluxfleet reads.
pub const MAX_FRAME: usize = 16_384;
/// The largest flow-control window (2^31 - 1).
pub const MAX_WINDOW: i64 = (1 << 31) - 1;

/// A frame's 9-byte header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    pub fn parse(b: &[u8; 9]) -> Head {
        Head {
            len: usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }

    pub fn write(self, out: &mut Vec<u8>) {
        let len = self.len as u32;
        out.extend_from_slice(&len.to_be_bytes()[1..]);
        out.push(self.kind);
        out.push(self.flags);
        out.extend_from_slice(&(self.stream & 0x7fff_ffff).to_be_bytes());
    }
}

/// Appends a whole frame.
pub fn put(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    Head {
        len: payload.len(),
        kind,
        flags,
        stream,
    }
    .write(out);
    out.extend_from_slice(payload);
}

pub fn settings(out: &mut Vec<u8>, values: &[(u16, u32)]) {
    let mut payload = Vec::with_capacity(values.len() * 6);
    for (id, value) in values {
        payload.extend_from_slice(&id.to_be_bytes());
        payload.extend_from_slice(&value.to_be_bytes());
    }
    put(out, SETTINGS, 0, 0, &payload);
}

pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put(out, WINDOW_UPDATE, 0, stream, &increment.to_be_bytes());
}

pub fn rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put(out, RST_STREAM, 0, stream, &code.to_be_bytes());
}

pub fn goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    let mut payload = [0u8; 8];
    payload[..4].copy_from_slice(&last_stream.to_be_bytes());
    payload[4..].copy_from_slice(&code.to_be_bytes());
    put(out, GOAWAY, 0, 0, &payload);
}

/// A header block as HEADERS and as many CONTINUATION frames as `max_frame` needs.
pub fn headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame: usize) {
    let mut chunks = block.chunks(max_frame.max(1)).peekable();
    let mut kind = HEADERS;
    let mut flags = if end_stream { END_STREAM } else { 0 };
    if chunks.peek().is_none() {
        put(out, HEADERS, flags | END_HEADERS, stream, &[]);
        return;
    }
    while let Some(chunk) = chunks.next() {
        if chunks.peek().is_none() {
            flags |= END_HEADERS;
        }
        put(out, kind, flags, stream, chunk);
        kind = CONTINUATION;
        flags = 0;
    }
}

/// A DATA or HEADERS payload without its padding (and a HEADERS payload without its priority
/// fields); None when the padding is longer than the frame.
pub fn unpadded(head: &Head, payload: &[u8]) -> Option<(usize, usize)> {
    let mut start = 0;
    let mut end = payload.len();
    if head.flags & PADDED != 0 {
        let pad = usize::from(*payload.first()?);
        start = 1;
        end = end.checked_sub(pad)?;
    }
    if head.kind == HEADERS && head.flags & PRIORITY != 0 {
        start += 5;
    }
    (start <= end).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_read_back_and_the_reserved_bit_is_ignored() {
        let head = Head {
            len: 70_000,
            kind: HEADERS,
            flags: END_HEADERS,
            stream: 7,
        };
        let mut out = Vec::new();
        head.write(&mut out);
        let mut bytes: [u8; 9] = out.try_into().unwrap();
        assert_eq!(Head::parse(&bytes), head);
        bytes[5] |= 0x80;
        assert_eq!(Head::parse(&bytes), head);
    }

    #[test]
    fn a_long_header_block_is_continued() {
        let mut out = Vec::new();
        headers(&mut out, 3, &[7u8; 40], true, 16);
        let kinds: Vec<(u8, u8, usize)> = {
            let mut rest = &out[..];
            let mut kinds = Vec::new();
            while rest.len() >= 9 {
                let head = Head::parse(rest[..9].try_into().unwrap());
                kinds.push((head.kind, head.flags, head.len));
                rest = &rest[9 + head.len..];
            }
            kinds
        };
        assert_eq!(
            kinds,
            vec![
                (HEADERS, END_STREAM, 16),
                (CONTINUATION, 0, 16),
                (CONTINUATION, END_HEADERS, 8)
            ]
        );
    }

    #[test]
    fn padding_is_stripped_and_too_much_refused() {
        let head = |flags| Head {
            len: 0,
            kind: HEADERS,
            flags,
            stream: 1,
        };
        assert_eq!(unpadded(&head(PADDED), &[2, 9, 9, 0, 0]), Some((1, 3)));
        assert_eq!(
            unpadded(&head(PADDED | PRIORITY), &[1, 0, 0, 0, 0, 0, 9, 0]),
            Some((6, 7))
        );
        assert_eq!(unpadded(&head(PADDED), &[9, 1]), None);
        assert_eq!(unpadded(&head(PRIORITY), &[0, 0]), None);
    }
}
