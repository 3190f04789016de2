//! Just enough DER to find a certificate's public key and subject: webpki reads X.509 v3 certificates only,
//! while kubectl (Go's crypto/x509) also takes v1 ones, which some older PKIs still issue for
//! clients. Reads untrusted bytes: every length is checked, nothing is trusted to fit.

/// One element: its tag, its contents, and the whole encoding (tag and length included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element<'a> {
    pub tag: u8,
    pub contents: &'a [u8],
    pub encoded: &'a [u8],
}

pub const SEQUENCE: u8 = 0x30;
pub const BIT_STRING: u8 = 0x03;
/// `[0] EXPLICIT`, the version of a v2 or v3 certificate.
pub const VERSION: u8 = 0xa0;

/// The first element of `input` and what follows it; None when it is not well-formed DER of a
/// single-byte tag (all X.509 needs).
pub fn next(input: &[u8]) -> Option<(Element<'_>, &[u8])> {
    let (&tag, rest) = input.split_first()?;
    if tag & 0x1f == 0x1f {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let (bytes, rest) = rest.split_at(n);
        let len = bytes
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        // DER: a length in its shortest form only (a leading zero byte, or the long form for
        // what the short form holds, is BER).
        if bytes[0] == 0 || len < 0x80 {
            return None;
        }
        (len, rest)
    };
    if rest.len() < len {
        return None;
    }
    let (contents, after) = rest.split_at(len);
    let header = input.len() - rest.len();
    Some((
        Element {
            tag,
            contents,
            encoded: &input[..header + len],
        },
        after,
    ))
}

/// The elements inside a constructed element's contents, in order.
pub fn children(mut contents: &[u8]) -> Option<Vec<Element<'_>>> {
    let mut out = Vec::new();
    while !contents.is_empty() {
        let (e, rest) = next(contents)?;
        out.push(e);
        contents = rest;
    }
    Some(out)
}

/// The deepest nesting read: an X.509 certificate nests a few levels.
const MAX_DEPTH: usize = 32;

/// Whether `cert` is the DER of one certificate and nothing else, as strictly as Go's
/// crypto/x509 reads it ("x509: malformed certificate"): every length in its shortest form,
/// every constructed element made of whole elements, a certificate of three parts, and no
/// byte after it. The error says what is wrong.
pub fn check_certificate(cert: &[u8]) -> Result<(), &'static str> {
    let malformed = "an element whose length is cut short or not in its shortest form";
    let (certificate, rest) = next(cert).ok_or(malformed)?;
    if !rest.is_empty() {
        return Err("bytes after the certificate");
    }
    if certificate.tag != SEQUENCE {
        return Err("not a SEQUENCE");
    }
    let parts = children(certificate.contents).ok_or(malformed)?;
    let shape: Vec<u8> = parts.iter().map(|p| p.tag).collect();
    if shape != [SEQUENCE, SEQUENCE, BIT_STRING] {
        return Err("not the three parts of a certificate (to be signed, algorithm, signature)");
    }
    whole(certificate.contents, 0).ok_or(malformed)
}

/// Every constructed element inside `contents`, to `MAX_DEPTH`, is made of whole elements.
fn whole(contents: &[u8], depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    for element in children(contents)? {
        if element.tag & 0x20 != 0 {
            whole(element.contents, depth + 1)?;
        }
    }
    Some(())
}

/// Field `i` of an X.509 certificate's `TBSCertificate`, counting from the serial number
/// (serial 0, signature 1, issuer 2, validity 3, subject 4, subjectPublicKeyInfo 5), whole.
fn tbs_field(cert: &[u8], i: usize) -> Option<&[u8]> {
    let (certificate, _) = next(cert)?;
    let (tbs, _) = next(certificate.contents)?;
    if certificate.tag != SEQUENCE || tbs.tag != SEQUENCE {
        return None;
    }
    let fields = children(tbs.contents)?;
    // v1 certificates have no version field.
    let skip = usize::from(fields.first()?.tag == VERSION);
    fields.get(skip + i).map(|f| f.encoded)
}

/// The `SubjectPublicKeyInfo` of an X.509 certificate (v1, v2 or v3), whole.
pub fn certificate_spki(cert: &[u8]) -> Option<&[u8]> {
    tbs_field(cert, 5).filter(|spki| spki.first() == Some(&SEQUENCE))
}

/// The subject `Name` of an X.509 certificate, whole.
pub fn certificate_subject(cert: &[u8]) -> Option<&[u8]> {
    tbs_field(cert, 4).filter(|name| name.first() == Some(&SEQUENCE))
}

/// The key bits inside a `SubjectPublicKeyInfo` (its BIT STRING without the unused-bits byte).
pub fn spki_key(spki: &[u8]) -> Option<&[u8]> {
    let (info, _) = next(spki)?;
    let fields = children(info.contents)?;
    let bits = fields.get(1)?;
    if bits.tag != BIT_STRING {
        return None;
    }
    match bits.contents.split_first()? {
        (0, key) => Some(key),
        _ => None,
    }
}

/// Encodes one element.
pub fn encode(tag: u8, contents: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = contents.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|&b| b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(contents);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_trip_and_truncation_is_refused() {
        for len in [0usize, 1, 127, 128, 255, 256, 70_000] {
            let contents = vec![7u8; len];
            let e = encode(0x04, &contents);
            let (got, rest) = next(&e).unwrap_or_else(|| panic!("length {len}"));
            assert_eq!((got.tag, got.contents.len(), rest.len()), (0x04, len, 0));
            if len > 0 {
                assert!(next(&e[..e.len() - 1]).is_none(), "truncated at {len}");
            }
        }
        // A length longer than the input, a length of 5 bytes, a multi-byte tag.
        assert!(next(&[0x30, 0x05, 1, 2]).is_none());
        assert!(next(&[0x30, 0x85, 0, 0, 0, 0, 1]).is_none());
        assert!(next(&[0x1f, 0x01, 0]).is_none());
        assert!(certificate_spki(b"not a certificate").is_none());
    }

    fn certificate(tbs: &[u8]) -> Vec<u8> {
        let parts = [
            encode(SEQUENCE, tbs),
            encode(SEQUENCE, &encode(0x06, &[1, 2, 3])),
            encode(BIT_STRING, &[0, 9, 9]),
        ]
        .concat();
        encode(SEQUENCE, &parts)
    }

    #[test]
    fn only_strict_der_of_one_certificate_is_taken() {
        let tbs = [encode(0x02, &[1]), encode(SEQUENCE, &encode(0x05, &[]))].concat();
        let good = certificate(&tbs);
        assert_eq!(check_certificate(&good), Ok(()));
        // A length in the long form where the short form holds it (0x81 0x05), and one with a
        // leading zero byte (0x82 0x00 0x05): Go refuses both.
        assert!(next(&[0x04, 0x81, 0x05, 1, 2, 3, 4, 5]).is_none());
        assert!(next(&[0x04, 0x82, 0x00, 0x05, 1, 2, 3, 4, 5]).is_none());
        let mut long_form = vec![SEQUENCE, 0x81, good.len() as u8 - 2];
        long_form.extend_from_slice(&good[2..]);
        assert!(
            check_certificate(&long_form)
                .unwrap_err()
                .contains("shortest form")
        );
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(
            check_certificate(&trailing),
            Err("bytes after the certificate")
        );
        // A constructed element inside whose contents do not add up.
        let broken = certificate(&[encode(0x02, &[1]), vec![SEQUENCE, 0x03, 0x02, 0x01]].concat());
        assert!(
            check_certificate(&broken)
                .unwrap_err()
                .contains("cut short")
        );
        let two = encode(
            SEQUENCE,
            &[encode(SEQUENCE, &tbs), encode(BIT_STRING, &[0])].concat(),
        );
        assert!(check_certificate(&two).unwrap_err().contains("three parts"));
        for mutated in crate::hostile::mutations(&good, 2000) {
            let _ = check_certificate(&mutated);
            let _ = certificate_spki(&mutated);
        }
    }
}
