//! The fuzz targets: one per decoder of what a server sends (frames through the whole driver,
//! HPACK header blocks, Huffman strings). Each takes any bytes and returns the first broken
//! promise as a [`Finding`]; a panic is a finding too, caught by the harness
//! (`examples/fuzz.rs`, which mutates a seeded corpus on the stable toolchain; the same
//! functions fit cargo-fuzz's `fuzz_target!` where a nightly toolchain is at hand).
//! `docs/fuzzing.md` says how to run them.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::conn::{CONNECTION_WINDOW, Conn, MAX_HEADER_BLOCK};
use crate::driver::Driver;
use crate::frame;
use crate::hpack::Decoder;
use crate::{Handle, answer, huffman};

/// A promise a decoder broke on an input.
#[derive(Debug, PartialEq, Eq)]
pub struct Finding(pub String);

/// A fuzz target: any bytes in, the first broken promise out.
pub type Target = fn(&[u8]) -> Result<(), Finding>;

/// The targets by name, as the harness lists them.
pub const TARGETS: [(&str, Target); 3] =
    [("frames", frames), ("hpack", hpack), ("huffman", huffman)];

/// What a header block may decode to, at most: a literal string at most 8/5 of its octets
/// (5-bit Huffman codes are the shortest); an index, one octet, names a static entry (under 64
/// octets) or a dynamic one (under the table's size).
fn decoded_bound(block: &[u8], table: usize) -> usize {
    block.len() * 8 / 5 + block.len() * (64 + table)
}

/// HPACK: a block from the server, decoded with the table size we announce (none) and with a
/// table of 4 KiB (what a server may assume if we announced the default). Decoding ends, the
/// table stays within its size, and what comes out is bounded by the block.
pub fn hpack(data: &[u8]) -> Result<(), Finding> {
    for limit in [0, 4096] {
        let mut decoder = Decoder::new(limit);
        let mut out = 0usize;
        let _ = decoder.decode(data, |name, value| {
            out += name.len() + value.len();
            Ok(())
        });
        let (size, summed, max) = decoder.table_bytes();
        if size != summed || size > max || max > limit {
            return Err(Finding(format!(
                "the table counts {size} bytes, holds {summed}, of at most {max} (announced {limit})"
            )));
        }
        if out > decoded_bound(data, limit) {
            return Err(Finding(format!(
                "a {}-byte block decoded to {out} bytes",
                data.len()
            )));
        }
    }
    Ok(())
}

/// Huffman: any bytes decode to at most 8/5 of their length; what decodes, coded again,
/// decodes to the same text.
pub fn huffman(data: &[u8]) -> Result<(), Finding> {
    let mut out = Vec::new();
    if huffman::decode(data, &mut out).is_err() {
        return Ok(());
    }
    if out.len() > data.len() * 8 / 5 {
        return Err(Finding(format!(
            "{} bytes decoded to {}",
            data.len(),
            out.len()
        )));
    }
    let mut again = Vec::new();
    if huffman::decode(&huffman::encode(&out), &mut again).is_err() || again != out {
        return Err(Finding(
            "a decoded text does not read back once coded".into(),
        ));
    }
    Ok(())
}

/// Frames: after the preface, the server sends `data`, then hangs up. Two requests wait on the
/// connection; both end (an answer or an error) within a minute of the hang-up, and the driver
/// never holds more than its windows and one header block. (The property test
/// `random_frame_sequences_end_every_request_within_bounds` makes the same promise of frames
/// it builds; this one takes any bytes.)
pub fn frames(data: &[u8]) -> Result<(), Finding> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Finding(format!("no runtime: {e}")))?;
    let data = data.to_vec();
    runtime.block_on(async move {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let conn = Arc::new(Conn::new("api.example:6443"));
        tokio::spawn(Driver::new(client, conn.clone()));
        let mut preface = [0u8; 24];
        if server.read_exact(&mut preface).await.is_err() || preface != frame::PREFACE {
            return Err(Finding("the client did not send the preface".into()));
        }
        let mut waiting = Vec::new();
        for path in ["/a", "/b"] {
            let request = http::Request::get(format!("https://api.example:6443{path}"))
                .body(())
                .map_err(|e| Finding(format!("a request: {e}")))?;
            let block = crate::header_block(&request.into_parts().0)
                .map_err(|e| Finding(format!("a request's header block: {e}")))?;
            let stream = conn
                .open(block, bytes::Bytes::new())
                .map_err(|e| Finding(format!("a request could not open: {e}")))?;
            let handle = Handle {
                conn: conn.clone(),
                stream,
            };
            waiting.push(tokio::spawn(answer(handle)));
        }
        // The client may have closed the connection already: writing may fail.
        let _ = server.write_all(&data).await;
        drop(server);
        for request in waiting {
            let ended = tokio::time::timeout(Duration::from_secs(60), async {
                if let Ok(Ok(response)) = request.await {
                    let _ = http_body_util::BodyExt::collect(response.into_body()).await;
                }
            });
            if ended.await.is_err() {
                return Err(Finding(
                    "a request did not end after the server hung up".into(),
                ));
            }
        }
        let held = conn.peak_held();
        let bound = CONNECTION_WINDOW as usize + MAX_HEADER_BLOCK + 64 * 1024;
        if held > bound {
            return Err(Finding(format!(
                "the driver held {held} bytes (bound {bound})"
            )));
        }
        Ok(())
    })
}

/// The inputs each target starts from: well-formed ones, so that mutations stay near what
/// servers send (the RFC 7541 examples, an answer's frames).
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "huffman" => [
            "f1e3c2e5f23a6ba0ab90f4ff",
            "a8eb10649cbf",
            "25a849e95bb8e8b4bf",
            "6402",
            "d07abe941054d444a8200595040b8166e082a62d1bff",
            "9d29ad171863c78f0b97c8e9ae82ae43d3",
        ]
        .iter()
        .map(|h| hex(h))
        .collect(),
        "hpack" => [
            // RFC 7541, C.3 and C.4 (requests) and C.5 (a response with a table).
            "828684410f7777772e6578616d706c652e636f6d",
            "828684418cf1e3c2e5f23a6ba0ab90f4ff",
            "4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
            "3fe11f8804",
            "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c0",
        ]
        .iter()
        .map(|h| hex(h))
        .collect(),
        "frames" => {
            let mut answer = Vec::new();
            frame::settings(&mut answer, &[(frame::SETTINGS_MAX_CONCURRENT_STREAMS, 100)]);
            frame::put(&mut answer, frame::SETTINGS, frame::ACK, 0, &[]);
            let mut block = Vec::new();
            crate::hpack::indexed(&mut block, 8);
            crate::hpack::literal(&mut block, b"content-type", b"application/json", false);
            frame::put(&mut answer, frame::HEADERS, frame::END_HEADERS, 1, &block);
            frame::put(&mut answer, frame::DATA, 0, 1, b"{\"kind\":\"List\"");
            frame::put(&mut answer, frame::DATA, frame::END_STREAM, 1, b",\"items\":[]}");
            let mut split = Vec::new();
            frame::put(&mut split, frame::HEADERS, 0, 3, &block[..1]);
            frame::put(&mut split, frame::CONTINUATION, frame::END_HEADERS, 3, &block[1..]);
            frame::put(&mut split, frame::PING, 0, 0, &[7; 8]);
            frame::put(&mut split, frame::WINDOW_UPDATE, 0, 0, &1024u32.to_be_bytes());
            frame::put(&mut split, frame::RST_STREAM, 0, 3, &frame::CANCEL.to_be_bytes());
            let mut goaway = Vec::new();
            frame::goaway(&mut goaway, 1, frame::PROTOCOL_ERROR);
            vec![answer, split, goaway]
        }
        _ => Vec::new(),
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .filter_map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// A small, seeded generator (xorshift64*): the same seed makes the same inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn word(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.word() % n as u64) as usize
        }
    }
}

/// `input` changed a few times over: bits flipped, bytes set to edge values, bytes inserted,
/// removed or repeated, a piece of another corpus entry spliced in. Inputs stay under `max`.
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], max: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 if at < out.len() => out[at] ^= 1 << rng.below(8),
            1 if at < out.len() => out[at] = [0, 0x7f, 0x80, 0xff, 0x3f, 0x20][rng.below(6)],
            2 => out.insert(at, rng.word() as u8),
            3 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            4 if at < out.len() => {
                let end = (at + 1 + rng.below(32)).min(out.len());
                let piece = out[at..end].to_vec();
                for _ in 0..=rng.below(8) {
                    out.splice(at..at, piece.iter().copied());
                }
            }
            5 if !other.is_empty() => {
                let from = rng.below(other.len());
                let end = (from + 1 + rng.below(64)).min(other.len());
                out.splice(at..at, other[from..end].iter().copied());
            }
            _ if at + 4 <= out.len() => {
                let value = [0u32, 1, 0x7fff_ffff, 0xffff_ffff, 16_384, 65_535][rng.below(6)];
                out[at..at + 4].copy_from_slice(&value.to_be_bytes());
            }
            _ => out.push(rng.word() as u8),
        }
    }
    out.truncate(max);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each target holds on its seeds and on a few hundred mutations of them: the short run of
    /// what `examples/fuzz.rs` runs for as long as one likes.
    #[test]
    fn every_target_holds_on_its_seeds_and_their_mutations() {
        for (name, target) in TARGETS {
            let seeds = seeds(name);
            assert!(!seeds.is_empty(), "{name} has no seeds");
            let mut rng = Rng::new(0x5eed);
            for seed in &seeds {
                assert_eq!(target(seed), Ok(()), "{name} on a seed");
            }
            for _ in 0..300 {
                let input = &seeds[rng.below(seeds.len())];
                let other = &seeds[rng.below(seeds.len())];
                let mutated = mutate(&mut rng, input, other, 64 * 1024);
                assert_eq!(target(&mutated), Ok(()), "{name} on {mutated:02x?}");
            }
        }
    }

    #[test]
    fn seeds_are_what_they_claim() {
        let mut out = Vec::new();
        huffman::decode(&seeds("huffman")[0], &mut out).unwrap();
        assert_eq!(out, b"www.example.com");
        let mut fields = Vec::new();
        Decoder::new(4096)
            .decode(&seeds("hpack")[2], |n, v| {
                fields.push((n.to_vec(), v.to_vec()));
                Ok(())
            })
            .unwrap();
        assert_eq!(fields[0], (b":status".to_vec(), b"302".to_vec()));
    }
}
