//! Reading an answer's body whole. However the server cut it into frames, what is held is its
//! bytes: with a `content-length` into one buffer made once at that size; without one the
//! pieces (frames, or the HTTP/2 client's chunks of small frames) are kept as they came and
//! joined once when small, or parsed where they lie when large, as growing a buffer by
//! doubling holds up to three times a body at its peak and joining twice.

use std::collections::VecDeque;
use std::io::Read;
use std::marker::PhantomData;

use bytes::{Buf, Bytes};
use http::Response;
use http_body_util::BodyExt;
use serde::de::{DeserializeOwned, DeserializeSeed};
use tower::BoxError;

use super::response::ResponseBody;

/// Bodies up to this size, without a `content-length`, are joined into one buffer (parsing a
/// slice is fastest); larger ones are parsed from their pieces.
const JOIN_LIMIT: usize = 4 * 1024 * 1024;

/// Why a body could not be read whole.
pub enum BodyError {
    TooLarge,
    Broken(BoxError),
}

/// A body read whole.
pub enum Received {
    Whole(Bytes),
    Pieces(VecDeque<Bytes>),
}

impl Received {
    /// The body as JSON: a large one is parsed from its pieces, each let go once read.
    pub fn json<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        self.json_seed(PhantomData)
    }

    /// The body read by `seed`, which may keep only part of it: from its bytes when whole (its
    /// strings may be borrowed while read), else from its pieces.
    pub fn json_seed<S, T>(self, seed: S) -> Result<T, serde_json::Error>
    where
        S: for<'de> DeserializeSeed<'de, Value = T>,
    {
        match self {
            Received::Whole(bytes) => {
                let mut de = serde_json::Deserializer::from_slice(&bytes);
                let value = seed.deserialize(&mut de)?;
                de.end().map(|()| value)
            }
            Received::Pieces(pieces) => {
                let mut de = serde_json::Deserializer::from_reader(Pieces(pieces));
                let value = seed.deserialize(&mut de)?;
                de.end().map(|()| value)
            }
        }
    }

    /// How many bytes the body has.
    pub fn len(&self) -> usize {
        match self {
            Received::Whole(bytes) => bytes.len(),
            Received::Pieces(pieces) => pieces.iter().map(Bytes::len).sum(),
        }
    }

    /// The body in one buffer (error bodies, which are small).
    pub fn joined(self) -> Bytes {
        match self {
            Received::Whole(bytes) => bytes,
            Received::Pieces(pieces) => join(pieces),
        }
    }
}

/// Reads `response`'s whole body, at most `limit` bytes.
pub async fn read(response: Response<ResponseBody>, limit: usize) -> Result<Received, BodyError> {
    let announced = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if announced.is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge);
    }
    let mut body = response.into_body();
    let mut whole: Vec<u8> = Vec::with_capacity(announced.unwrap_or(0));
    let mut pieces = VecDeque::new();
    let mut total = 0;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(BodyError::Broken)?.into_data() else {
            continue;
        };
        total += data.len();
        if total > limit {
            return Err(BodyError::TooLarge);
        }
        if announced.is_some() {
            whole.extend_from_slice(&data);
        } else {
            pieces.push_back(data);
        }
    }
    if announced.is_some() {
        return Ok(Received::Whole(Bytes::from(whole)));
    }
    if total > JOIN_LIMIT {
        return Ok(Received::Pieces(pieces));
    }
    Ok(Received::Whole(join(pieces)))
}

/// Reads at most `cap` bytes of `response`'s body, and whether there was more (the rest is
/// never read: dropping the body resets the stream). For text a server may send too much of,
/// such as a log that ignores `limitBytes`.
pub async fn read_capped(
    response: Response<ResponseBody>,
    cap: usize,
) -> Result<(Bytes, bool), BodyError> {
    let mut body = response.into_body();
    let mut out = Vec::with_capacity(cap.min(64 * 1024));
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(BodyError::Broken)?.into_data() else {
            continue;
        };
        let room = cap - out.len();
        if data.len() > room {
            out.extend_from_slice(&data[..room]);
            return Ok((Bytes::from(out), true));
        }
        out.extend_from_slice(&data);
    }
    Ok((Bytes::from(out), false))
}

/// The pieces in one buffer; one piece is handed on as it is.
fn join(mut pieces: VecDeque<Bytes>) -> Bytes {
    if pieces.len() <= 1 {
        return pieces.pop_front().unwrap_or_default();
    }
    let mut whole = Vec::with_capacity(pieces.iter().map(Bytes::len).sum());
    for piece in pieces {
        whole.extend_from_slice(&piece);
    }
    Bytes::from(whole)
}

/// The pieces as one reader; each is let go once read.
struct Pieces(VecDeque<Bytes>);

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(front) = self.0.front_mut() {
            if front.is_empty() {
                self.0.pop_front();
                continue;
            }
            let n = front.len().min(buf.len());
            buf[..n].copy_from_slice(&front[..n]);
            front.advance(n);
            return Ok(n);
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_in_pieces_reads_as_the_same_json_joined_or_not() {
        let text = br#"{"items":[{"a":"xyz"},{"b":[1,2,3]}],"metadata":{"continue":"t"}}"#;
        let pieces = |size: usize| -> VecDeque<Bytes> {
            text.chunks(size).map(Bytes::copy_from_slice).collect()
        };
        let expected: serde_json::Value = serde_json::from_slice(text).unwrap();
        for size in [1, 3, 7, 64, 1000] {
            let parsed: serde_json::Value = Received::Pieces(pieces(size)).json().unwrap();
            assert_eq!(parsed, expected);
            assert_eq!(Received::Pieces(pieces(size)).joined(), &text[..]);
        }
        let cut: Result<serde_json::Value, _> =
            Received::Pieces(pieces(5).into_iter().take(3).collect()).json();
        assert!(cut.is_err());
    }
}
