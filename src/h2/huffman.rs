//! HPACK's Huffman code (RFC 7541, Appendix B), decoding only: fluxfleet sends its own header
//! strings as they are, and reads the server's either way.
//!
//! The code is canonical — within one length, codes count up in symbol order — so the lengths
//! alone define it, and a decoder needs per length only the first code and where its symbols
//! start in the symbols sorted by (length, symbol).

/// Code length in bits of each octet (0–255); the end-of-string symbol (256) has 30.
const LENGTHS: [u8; 256] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, //   0
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, //  16
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, //  32 ' ' … '/'
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, //  48 '0' … '?'
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, //  64 '@' … 'O'
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, //  80 'P' … '_'
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, //  96 '`' … 'o'
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, // 112 'p' … DEL
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240
];
const EOS_LENGTH: u8 = 30;
const LONGEST: usize = 30;

/// The canonical code, per length: the first code, how many codes, and where their symbols
/// start in `symbols`.
struct Code {
    first: [u32; LONGEST + 1],
    count: [u16; LONGEST + 1],
    start: [u16; LONGEST + 1],
    /// Symbols (256 is end-of-string) sorted by (length, symbol).
    symbols: [u16; 257],
}

const fn length(symbol: usize) -> u8 {
    if symbol == 256 {
        EOS_LENGTH
    } else {
        LENGTHS[symbol]
    }
}

const fn build() -> Code {
    let mut code = Code {
        first: [0; LONGEST + 1],
        count: [0; LONGEST + 1],
        start: [0; LONGEST + 1],
        symbols: [0; 257],
    };
    let mut symbol = 0;
    while symbol < 257 {
        code.count[length(symbol) as usize] += 1;
        symbol += 1;
    }
    let (mut next, mut placed, mut len) = (0u32, 0u16, 1);
    while len <= LONGEST {
        code.first[len] = next;
        code.start[len] = placed;
        let mut symbol = 0;
        while symbol < 257 {
            if length(symbol) as usize == len {
                code.symbols[placed as usize] = symbol as u16;
                placed += 1;
            }
            symbol += 1;
        }
        next = (next + code.count[len] as u32) << 1;
        len += 1;
    }
    code
}

static CODE: Code = build();

/// Why a Huffman-coded string cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub struct BadHuffman;

/// Decodes `input` onto `out`. Padding must be the most significant bits of end-of-string (all
/// ones) and shorter than an octet; end-of-string itself may not appear (RFC 7541, 5.2).
pub fn decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), BadHuffman> {
    let (mut code, mut len) = (0u32, 0usize);
    for byte in input {
        for shift in (0..8).rev() {
            code = (code << 1) | u32::from((byte >> shift) & 1);
            len += 1;
            let offset = code.wrapping_sub(CODE.first[len]);
            if offset < u32::from(CODE.count[len]) {
                match CODE.symbols[usize::from(CODE.start[len]) + offset as usize] {
                    256 => return Err(BadHuffman),
                    symbol => out.push(symbol as u8),
                }
                (code, len) = (0, 0);
            } else if len == LONGEST {
                return Err(BadHuffman);
            }
        }
    }
    // What is left must be padding: fewer than 8 bits, all ones.
    if len >= 8 || code != (1u32 << len) - 1 {
        return Err(BadHuffman);
    }
    Ok(())
}

/// `text` Huffman-coded with the canonical code built from `LENGTHS`, padded with ones. The
/// property tests check what it writes against an independent decoder (the `hpack` crate): a
/// wrong length in the table would fail them. The fuzz target reads back what it writes.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn encode(text: &[u8]) -> Vec<u8> {
    let code_of = |symbol: u16| {
        (1..=LONGEST)
            .find_map(|len| {
                let start = usize::from(CODE.start[len]);
                let group = &CODE.symbols[start..start + usize::from(CODE.count[len])];
                let at = group.iter().position(|s| *s == symbol)?;
                Some((CODE.first[len] + at as u32, len))
            })
            .unwrap_or((0, 0))
    };
    let (mut out, mut bits, mut pending) = (Vec::new(), 0u64, 0usize);
    for byte in text {
        let (code, len) = code_of(u16::from(*byte));
        bits = (bits << len) | u64::from(code);
        pending += len;
        while pending >= 8 {
            pending -= 8;
            out.push((bits >> pending) as u8);
        }
    }
    if pending > 0 {
        let pad = 8 - pending;
        out.push(((bits << pad) | ((1 << pad) - 1)) as u8);
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Bytes written as hex, spaces allowed ("f1e3 c2e5"), as the RFCs print them.
    pub(crate) fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    fn decoded(text: &str) -> Result<String, BadHuffman> {
        let mut out = Vec::new();
        decode(&hex(text), &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn the_rfc_examples_decode() {
        // RFC 7541, C.4 and C.6.
        assert_eq!(
            decoded("f1e3 c2e5 f23a 6ba0 ab90 f4ff").unwrap(),
            "www.example.com"
        );
        assert_eq!(decoded("a8eb 1064 9cbf").unwrap(), "no-cache");
        assert_eq!(decoded("25a8 49e9 5ba9 7d7f").unwrap(), "custom-key");
        assert_eq!(decoded("25a8 49e9 5bb8 e8b4 bf").unwrap(), "custom-value");
        assert_eq!(decoded("6402").unwrap(), "302");
        assert_eq!(decoded("aec3 771a 4b").unwrap(), "private");
        assert_eq!(
            decoded("d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff").unwrap(),
            "Mon, 21 Oct 2013 20:13:21 GMT"
        );
        assert_eq!(
            decoded("9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3").unwrap(),
            "https://www.example.com"
        );
        assert_eq!(decoded("").unwrap(), "");
    }

    #[test]
    fn bad_padding_and_end_of_string_are_refused() {
        // "0" is 00000 (5 bits): padded with ones it is 0x07; with zeros it is not.
        assert_eq!(decoded("07").unwrap(), "0");
        assert_eq!(decoded("00"), Err(BadHuffman));
        // A whole octet of padding.
        assert_eq!(decoded("07ff"), Err(BadHuffman));
        // End-of-string: thirty ones.
        assert_eq!(decoded("ffff fffc"), Err(BadHuffman));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Random bytes: both decoders agree on what is valid and on what it says.
        #[test]
        fn random_bytes_decode_as_the_hpack_crate_decodes_them(
            input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48)
        ) {
            let mut ours = Vec::new();
            let ours = decode(&input, &mut ours).map(|()| ours);
            let theirs = ::hpack::huffman::HuffmanDecoder::new().decode(&input);
            proptest::prop_assert_eq!(ours.ok(), theirs.ok());
        }

        /// Any text, coded: the hpack crate reads it back (the code table is right) and so do we.
        #[test]
        fn any_text_coded_reads_back(
            text in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)
        ) {
            let coded = super::encode(&text);
            let theirs = ::hpack::huffman::HuffmanDecoder::new().decode(&coded);
            proptest::prop_assert_eq!(theirs.ok(), Some(text.clone()));
            let mut ours = Vec::new();
            proptest::prop_assert!(decode(&coded, &mut ours).is_ok());
            proptest::prop_assert_eq!(ours, text);
        }
    }
}
