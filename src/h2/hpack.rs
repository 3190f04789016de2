//! HPACK (RFC 7541) as a client that never asks the server to remember anything needs it.
//!
//! - Requests are written as literals without indexing (never indexed for sensitive values such
//!   as `authorization`), so the server's table of our headers stays empty.
//! - Responses are read with the static table, Huffman-coded strings, and a dynamic table bounded
//!   by the size fluxfleet announces: zero, so that a connection holds no table at all. A server
//!   that indexes anyway fails its answer, never the process.

use std::collections::VecDeque;

use super::huffman;

/// The header table size fluxfleet announces (`SETTINGS_HEADER_TABLE_SIZE`).
pub const TABLE_SIZE: usize = 0;

/// RFC 7541, Appendix A: index 1–61.
const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Why a header block cannot be read: a compression error, which ends the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadBlock(pub &'static str);

/// A remembered header field: name and value.
type Entry = (Box<[u8]>, Box<[u8]>);

/// One connection's decoding state: the dynamic table, bounded by `max` bytes (RFC 7541, 4.1:
/// each entry counts its name, its value and 32).
pub struct Decoder {
    table: VecDeque<Entry>,
    size: usize,
    max: usize,
    /// The most the server may ask for: what was announced.
    limit: usize,
}

impl Decoder {
    pub fn new(limit: usize) -> Decoder {
        Decoder {
            table: VecDeque::new(),
            size: 0,
            max: limit,
            limit,
        }
    }

    /// Every header of `block`, in order, given to `field` as (name, value). Pseudo-headers
    /// (`:status`) come first as the server sent them.
    pub fn decode(
        &mut self,
        mut block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]) -> Result<(), BadBlock>,
    ) -> Result<(), BadBlock> {
        let mut headers_seen = false;
        while let Some(&first) = block.first() {
            if first & 0x80 != 0 {
                // Indexed header field.
                let index = integer(&mut block, 7)?;
                let (name, value) = self.entry(index)?;
                field(name, value)?;
                headers_seen = true;
            } else if first & 0xe0 == 0x20 {
                // Dynamic table size update: only before the block's first field.
                if headers_seen {
                    return Err(BadBlock("a table size update after a header"));
                }
                let size = integer(&mut block, 5)?;
                if size > self.limit {
                    return Err(BadBlock("a table larger than announced"));
                }
                self.max = size;
                self.evict(0);
            } else {
                // Literals: with incremental indexing (01), without (0000), never indexed (0001).
                let (prefix, indexing) = if first & 0xc0 == 0x40 {
                    (6, true)
                } else {
                    (4, false)
                };
                let index = integer(&mut block, prefix)?;
                let name: Vec<u8> = if index == 0 {
                    string(&mut block)?
                } else {
                    self.entry(index)?.0.to_vec()
                };
                let value = string(&mut block)?;
                field(&name, &value)?;
                if indexing {
                    self.insert(name, value);
                }
                headers_seen = true;
            }
        }
        Ok(())
    }

    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), BadBlock> {
        match index {
            0 => Err(BadBlock("header index 0")),
            1..=61 => {
                let (name, value) = STATIC[index - 1];
                Ok((name.as_bytes(), value.as_bytes()))
            }
            _ => self
                .table
                .get(index - 62)
                .map(|(name, value)| (&name[..], &value[..]))
                .ok_or(BadBlock("a header index beyond the table")),
        }
    }

    fn insert(&mut self, name: Vec<u8>, value: Vec<u8>) {
        let size = name.len() + value.len() + 32;
        if size > self.max {
            // RFC 7541, 4.4: an entry larger than the table empties it and is not added.
            self.table.clear();
            self.size = 0;
            return;
        }
        self.evict(size);
        self.size += size;
        self.table
            .push_front((name.into_boxed_slice(), value.into_boxed_slice()));
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max {
            let Some((name, value)) = self.table.pop_back() else {
                self.size = 0;
                return;
            };
            self.size -= name.len() + value.len() + 32;
        }
    }
}

impl Decoder {
    /// The table's size as counted, as summed from its entries, and its maximum.
    #[cfg(any(test, feature = "testing"))]
    pub fn table_bytes(&self) -> (usize, usize, usize) {
        let summed = self.table.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
        (self.size, summed, self.max)
    }
}

/// An integer with an N-bit prefix (RFC 7541, 5.1), at most 2^28.
fn integer(block: &mut &[u8], prefix: u32) -> Result<usize, BadBlock> {
    let truncated = BadBlock("a header block cut short");
    let (&first, rest) = block
        .split_first()
        .ok_or(BadBlock("a header block cut short"))?;
    *block = rest;
    let max = (1usize << prefix) - 1;
    let mut value = usize::from(first) & max;
    if value < max {
        return Ok(value);
    }
    let mut shift = 0;
    loop {
        let (&byte, rest) = block.split_first().ok_or(truncated)?;
        *block = rest;
        value += usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
        if shift > 21 {
            return Err(BadBlock("a header integer too large"));
        }
    }
}

/// A string literal (RFC 7541, 5.2): raw, or Huffman-coded.
fn string(block: &mut &[u8]) -> Result<Vec<u8>, BadBlock> {
    let huffman = block.first().is_some_and(|b| b & 0x80 != 0);
    let len = integer(block, 7)?;
    if len > block.len() {
        return Err(BadBlock("a header block cut short"));
    }
    let (text, rest) = block.split_at(len);
    *block = rest;
    if !huffman {
        return Ok(text.to_vec());
    }
    let mut decoded = Vec::with_capacity(text.len() * 8 / 5);
    huffman::decode(text, &mut decoded).map_err(|_| BadBlock("a badly Huffman-coded string"))?;
    Ok(decoded)
}

/// Appends a header field as a literal that no table keeps: never indexed when `sensitive`
/// (RFC 7541, 6.2.3), else without indexing (6.2.2). Names must already be lowercase.
pub fn literal(out: &mut Vec<u8>, name: &[u8], value: &[u8], sensitive: bool) {
    out.push(if sensitive { 0x10 } else { 0x00 });
    put_string(out, name);
    put_string(out, value);
}

/// A pseudo-header or field by its static name index, its value literal and unindexed.
pub fn indexed_name(out: &mut Vec<u8>, index: usize, value: &[u8]) {
    put_integer(out, 0x00, 4, index);
    put_string(out, value);
}

/// A whole static entry (`:method GET`, `:scheme https`).
pub fn indexed(out: &mut Vec<u8>, index: usize) {
    put_integer(out, 0x80, 7, index);
}

/// The static index of an exact (name, value) pair, or of the name alone.
pub fn find_static(name: &str, value: &str) -> (Option<usize>, Option<usize>) {
    let mut by_name = None;
    for (i, (n, v)) in STATIC.iter().enumerate() {
        if *n == name {
            if *v == value {
                return (Some(i + 1), Some(i + 1));
            }
            by_name.get_or_insert(i + 1);
        }
    }
    (None, by_name)
}

fn put_string(out: &mut Vec<u8>, text: &[u8]) {
    put_integer(out, 0x00, 7, text.len());
    out.extend_from_slice(text);
}

pub fn put_integer(out: &mut Vec<u8>, flags: u8, prefix: u32, value: usize) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = value - max;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

#[cfg(test)]
mod tests {
    use super::super::huffman::tests::hex;
    use super::*;

    fn fields(decoder: &mut Decoder, block: &str) -> Result<Vec<(String, String)>, BadBlock> {
        let mut out = Vec::new();
        decoder.decode(&hex(block), |n, v| {
            out.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ));
            Ok(())
        })?;
        Ok(out)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_rfc_responses_decode_with_huffman_and_a_dynamic_table() {
        // RFC 7541, C.6: three responses sharing a 256-byte table.
        let mut decoder = Decoder::new(256);
        let first = fields(
            &mut decoder,
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        )
        .unwrap();
        assert_eq!(
            first,
            pairs(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("location", "https://www.example.com"),
            ])
        );
        let second = fields(&mut decoder, "4883 640e ff c1 c0 bf").unwrap();
        assert_eq!(
            second,
            pairs(&[
                (":status", "307"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("location", "https://www.example.com"),
            ])
        );
    }

    #[test]
    fn a_server_that_indexes_beyond_an_empty_table_fails_the_block() {
        let mut decoder = Decoder::new(TABLE_SIZE);
        // Literal with incremental indexing, new name "a" value "b": allowed, but not kept.
        assert_eq!(
            fields(&mut decoder, "40 0161 0162").unwrap(),
            pairs(&[("a", "b")])
        );
        assert_eq!(
            fields(&mut decoder, "be"),
            Err(BadBlock("a header index beyond the table"))
        );
        // Asking for a larger table than announced.
        assert!(fields(&mut decoder, "3f e1 1f").is_err());
        // Cut short, and an integer that never ends.
        assert!(fields(&mut decoder, "0f").is_err());
        assert!(fields(&mut decoder, "0f ff ff ff ff ff 01").is_err());
        assert!(fields(&mut decoder, "00 05 61").is_err());
    }

    #[test]
    fn what_is_written_reads_back() {
        let mut block = Vec::new();
        let (Some(get), _) = find_static(":method", "GET") else {
            panic!("GET is in the static table")
        };
        indexed(&mut block, get);
        let (_, Some(path)) = find_static(":path", "/apis") else {
            panic!(":path is in the static table")
        };
        indexed_name(&mut block, path, b"/apis?watch=1");
        let long = "x".repeat(300);
        literal(&mut block, b"authorization", long.as_bytes(), true);
        literal(&mut block, b"user-agent", b"fluxfleet", false);
        let mut out = Vec::new();
        Decoder::new(TABLE_SIZE)
            .decode(&block, |n, v| {
                out.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            out,
            pairs(&[
                (":method", "GET"),
                (":path", "/apis?watch=1"),
                ("authorization", &long),
                ("user-agent", "fluxfleet"),
            ])
        );
        let never = block.windows(14).position(|w| w == b"\x0dauthorization");
        assert_eq!(never.map(|i| block[i - 1]), Some(0x10));
    }
}
