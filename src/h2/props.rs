//! Property tests of the frame layer and of the driver under random frame sequences: nothing
//! panics, every request ends, and what the driver holds stays within its bound.

use proptest::prelude::*;
use tokio::io::AsyncWriteExt;

use super::conn::{CONNECTION_WINDOW, MAX_HEADER_BLOCK};
use super::frame::{self, Head};
use super::hpack::{self, BadBlock, Decoder};
use super::huffman;
use super::tests::{body_text, connected, request};

/// A frame as a hostile server might send it: any type (the known ones more often), any flags,
/// a stream among those opened, never opened, pushed and 0, any short payload.
fn frames() -> impl Strategy<Value = Vec<(u8, u8, u32, Vec<u8>)>> {
    let kind = prop_oneof![0u8..10, any::<u8>()];
    let stream = prop_oneof![Just(0u32), Just(1), Just(3), Just(2), Just(5), any::<u32>()];
    let payload = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..16),
        proptest::collection::vec(any::<u8>(), 0..300),
    ];
    proptest::collection::vec((kind, any::<u8>(), stream, payload), 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn heads_read_back(len in 0usize..(1 << 24), kind: u8, flags: u8, stream in 0u32..(1 << 31)) {
        let head = Head { len, kind, flags, stream };
        let mut out = Vec::new();
        head.write(&mut out);
        let bytes: [u8; 9] = out.try_into().unwrap();
        prop_assert_eq!(Head::parse(&bytes), head);
    }

    #[test]
    fn padding_is_within_the_payload(kind: u8, flags: u8, payload in proptest::collection::vec(any::<u8>(), 0..300)) {
        let head = Head { len: payload.len(), kind, flags, stream: 1 };
        if let Some((start, end)) = frame::unpadded(&head, &payload) {
            prop_assert!(start <= end && end <= payload.len());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Whatever frames come, the two waiting requests end (with an answer or an error) once
    /// the server hangs up, and the driver held no more than its windows and one header block.
    #[test]
    fn random_frame_sequences_end_every_request_within_bounds(frames in frames()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        let held = runtime.block_on(async move {
            let (conn, mut server) = connected().await;
            let first = request(&conn, "/a").await;
            let second = request(&conn, "/b").await;
            let mut out = Vec::new();
            for (kind, flags, stream, payload) in frames {
                frame::put(&mut out, kind, flags, stream, &payload);
            }
            // The client may have closed the connection already: writing may fail.
            let _ = server.io.write_all(&out).await;
            drop(server);
            for waiting in [first, second] {
                if let Ok(response) = waiting.await.unwrap() {
                    let _ = body_text(response).await;
                }
            }
            conn.peak_held()
        });
        prop_assert!(held <= CONNECTION_WINDOW as usize + MAX_HEADER_BLOCK + 64 * 1024, "{}", held);
    }
}

/// Header fields as a server might send them: names from a small pool (so that a table
/// finds them again), any value.
fn header_lists() -> impl proptest::strategy::Strategy<Value = Vec<Fields>> {
    use proptest::prelude::*;
    let name = prop_oneof![
        Just(b":status".to_vec()),
        Just(b"content-type".to_vec()),
        Just(b"date".to_vec()),
        Just(b"x-a".to_vec()),
        proptest::collection::vec(b'a'..=b'z', 1..20),
    ];
    let value = proptest::collection::vec(any::<u8>(), 0..80);
    let list = proptest::collection::vec((name, value), 0..12);
    proptest::collection::vec(list, 1..6)
}

/// Header fields as (name, value) bytes.
type Fields = Vec<(Vec<u8>, Vec<u8>)>;

fn decoded(decoder: &mut Decoder, block: &[u8]) -> Result<Fields, BadBlock> {
    let mut out = Vec::new();
    decoder.decode(block, |n, v| {
        out.push((n.to_vec(), v.to_vec()));
        Ok(())
    })?;
    Ok(out)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Blocks written by an independent encoder (the `hpack` crate, which indexes what it
    /// can into a 4 KiB table) read back field for field, block after block, and our table
    /// never grows past its size.
    #[test]
    fn blocks_from_the_hpack_crate_read_back(lists in header_lists()) {
        let mut theirs = ::hpack::Encoder::new();
        let mut ours = Decoder::new(4096);
        for list in lists {
            let block = theirs.encode(list.iter().map(|(n, v)| (&n[..], &v[..])));
            proptest::prop_assert_eq!(decoded(&mut ours, &block).ok(), Some(list));
            let (size, summed, max) = ours.table_bytes();
            proptest::prop_assert!(size == summed && size <= max);
        }
    }

    /// What fluxfleet writes (literals, raw or Huffman-coded, and static indexes) the
    /// `hpack` crate reads as written.
    #[test]
    fn our_blocks_read_with_the_hpack_crate(lists in header_lists(), sensitive: bool) {
        for list in lists {
            let mut block = Vec::new();
            for (i, (name, value)) in list.iter().enumerate() {
                if i % 2 == 0 {
                    hpack::literal(&mut block, name, value, sensitive);
                } else {
                    // Both strings Huffman-coded (the high bit of the length).
                    block.push(0x00);
                    for text in [name, value] {
                        let coded = huffman::encode(text);
                        let at = block.len();
                        hpack::put_integer(&mut block, 0x00, 7, coded.len());
                        block[at] |= 0x80;
                        block.extend_from_slice(&coded);
                    }
                }
            }
            let theirs = ::hpack::Decoder::new().decode(&block).ok();
            proptest::prop_assert_eq!(theirs, Some(list.clone()));
            proptest::prop_assert_eq!(decoded(&mut Decoder::new(0), &block).ok(), Some(list));
        }
    }

    /// Any bytes, and valid blocks cut and changed: an answer or a compression error, never
    /// a panic, and a table within its size.
    #[test]
    fn hostile_blocks_are_errors_never_panics(
        lists in header_lists(),
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        cut in 0usize..400,
        flip in 0usize..400,
    ) {
        let mut theirs = ::hpack::Encoder::new();
        let mut ours = Decoder::new(4096);
        let mut empty = Decoder::new(0);
        let _ = decoded(&mut ours, &noise);
        let _ = decoded(&mut empty, &noise);
        for list in lists {
            let mut block = theirs.encode(list.iter().map(|(n, v)| (&n[..], &v[..])));
            if let Some(byte) = block.get_mut(flip) {
                *byte ^= 0x5a;
            }
            block.truncate(cut);
            let _ = decoded(&mut ours, &block);
            let _ = decoded(&mut empty, &block);
            let ((size, _, max), (empty, _, _)) = (ours.table_bytes(), empty.table_bytes());
            proptest::prop_assert!(size <= max && empty == 0);
        }
    }
}
