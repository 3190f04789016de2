//! The record layer against a peer holding the other ends of its keys: what it opens, and every
//! record a server could send that it must refuse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io;

use ring::aead::Aad;
use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::{AlertDescription, ConnectionTrafficSecrets, ContentType, ExtractedSecrets};

use super::{Content, HEADER, MAX_CONTENT, MAX_RECORD, Records, SEAL_LIMIT};

#[derive(Clone, Copy, Debug)]
enum Aead {
    Aes256,
    Chacha,
}

fn secrets(aead: Aead, seed: u8) -> ConnectionTrafficSecrets {
    let key = AeadKey::from([seed; 32]);
    let iv = Iv::from([seed.wrapping_mul(3); 12]);
    match aead {
        Aead::Aes256 => ConnectionTrafficSecrets::Aes256Gcm { key, iv },
        Aead::Chacha => ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv },
    }
}

/// Our client's records and the server's, each reading what the other writes.
fn pair(aead: Aead) -> (Records, Records) {
    let client = Records::new(ExtractedSecrets {
        tx: (0, secrets(aead, 1)),
        rx: (0, secrets(aead, 2)),
    })
    .unwrap();
    let server = Records::new(ExtractedSecrets {
        tx: (0, secrets(aead, 2)),
        rx: (0, secrets(aead, 1)),
    })
    .unwrap();
    (client, server)
}

/// A record the server seals around any inner plaintext (content, type, padding), as no
/// well-behaved server would.
fn sealed_raw(server: &mut Records, inner: &[u8]) -> Vec<u8> {
    let length = inner.len() + 16;
    let header = super::record_header(length);
    let mut out = header.to_vec();
    out.extend_from_slice(inner);
    let nonce = server.write.nonce();
    let tag = server
        .write
        .key
        .seal_in_place_separate_tag(nonce, Aad::from(header), &mut out[HEADER..])
        .unwrap();
    out.extend_from_slice(tag.as_ref());
    server.write.seq += 1;
    out
}

fn sealed(server: &mut Records, kind: ContentType, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    server.seal(kind, content, &mut out).unwrap();
    out
}

/// What our side makes of `record`: what it opened, and the plaintext.
fn opened(client: &mut Records, mut record: Vec<u8>) -> io::Result<(Content, Vec<u8>)> {
    let length = Records::whole(&record)?.expect("a whole record");
    assert_eq!(length, record.len());
    let mut plain = Vec::new();
    let opened = client.open(&mut record, &mut plain)?;
    Ok((opened, plain))
}

fn tls_error(e: &io::Error) -> &rustls::Error {
    e.get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
        .unwrap_or_else(|| panic!("not a TLS error: {e:?}"))
}

#[test]
fn what_one_side_seals_the_other_opens_in_order_at_every_size() {
    for aead in [Aead::Aes256, Aead::Chacha] {
        let (mut client, mut server) = pair(aead);
        for size in [1, 2, 100, 4096, MAX_CONTENT] {
            let content: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            // Both ways.
            let record = sealed(&mut server, ContentType::ApplicationData, &content);
            assert_eq!(record.len(), HEADER + size + 1 + 16);
            let (what, plain) = opened(&mut client, record).unwrap();
            assert_eq!(what, Content::Data, "{aead:?}");
            assert_eq!(plain, content, "{aead:?} {size}");
            let mut out = Vec::new();
            client
                .seal(ContentType::ApplicationData, &content, &mut out)
                .unwrap();
            let mut got = Vec::new();
            server.open(&mut out, &mut got).unwrap();
            assert_eq!(got, content);
        }
        // More than a record's content is not sealed.
        let mut out = Vec::new();
        assert!(
            client
                .seal(
                    ContentType::ApplicationData,
                    &[0; MAX_CONTENT + 1],
                    &mut out
                )
                .is_err()
        );
        assert!(out.is_empty());
    }
}

#[test]
fn padding_and_empty_records_are_read_as_tls_allows() {
    let (mut client, mut server) = pair(Aead::Aes256);
    // Content, its type, then zeros.
    let mut inner = b"padded".to_vec();
    inner.push(23);
    inner.extend([0; 200]);
    let record = sealed_raw(&mut server, &inner);
    assert_eq!(
        opened(&mut client, record).unwrap(),
        (Content::Data, b"padded".to_vec())
    );
    let record = sealed_raw(&mut server, &[23, 0, 0]);
    assert_eq!(
        opened(&mut client, record).unwrap(),
        (Content::Nothing, vec![])
    );
    // Nothing but padding: no content type.
    let record = sealed_raw(&mut server, &[0; 40]);
    assert!(opened(&mut client, record).is_err());
}

#[test]
fn a_forged_replayed_or_reordered_record_is_refused() {
    let (mut client, mut server) = pair(Aead::Chacha);
    let first = sealed(&mut server, ContentType::ApplicationData, b"first");
    let second = sealed(&mut server, ContentType::ApplicationData, b"second");
    // Any one byte changed, header included (it is the AEAD's additional data).
    for at in [2, 4, HEADER, HEADER + 3, first.len() - 1] {
        let mut forged = first.clone();
        forged[at] ^= 0x40;
        let (mut client, _) = pair(Aead::Chacha);
        let e = match Records::whole(&forged) {
            Err(e) => e,
            Ok(Some(n)) if n == forged.len() => {
                client.open(&mut forged, &mut Vec::new()).unwrap_err()
            }
            Ok(_) => continue,
        };
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "byte {at}");
    }
    // Out of order.
    let e = opened(&mut client, second.clone()).unwrap_err();
    assert!(matches!(tls_error(&e), rustls::Error::DecryptError), "{e}");
    // A record refused is not counted: the first still opens.
    let (mut client, _) = pair(Aead::Chacha);
    opened(&mut client, first.clone()).unwrap();
    // Replayed.
    let e = opened(&mut client, first).unwrap_err();
    assert!(matches!(tls_error(&e), rustls::Error::DecryptError), "{e}");
}

#[test]
fn headers_no_tls13_server_sends_after_its_handshake_are_refused_before_the_body() {
    let refuse = |header: [u8; 5]| Records::whole(&header).unwrap_err();
    // Handshake, alert and change_cipher_spec records in the clear.
    for kind in [0x16, 0x15, 0x14, 0x18, 0x00, 0xff] {
        let e = refuse([kind, 3, 3, 0, 40]);
        assert!(
            matches!(tls_error(&e), rustls::Error::InappropriateMessage { .. }),
            "type {kind}: {e}"
        );
    }
    assert!(refuse([0x17, 3, 1, 0, 40]).to_string().contains("version"));
    // Longer than TLS allows; too short to hold a tag and a type.
    let [hi, lo] = u16::try_from(MAX_RECORD + 1).unwrap().to_be_bytes();
    let e = refuse([0x17, 3, 3, hi, lo]);
    assert!(
        matches!(tls_error(&e), rustls::Error::InvalidMessage(_)),
        "{e}"
    );
    let e = refuse([0x17, 3, 3, 0, 16]);
    assert!(matches!(tls_error(&e), rustls::Error::DecryptError), "{e}");
    // The largest allowed waits for its body.
    let [hi, lo] = u16::try_from(MAX_RECORD).unwrap().to_be_bytes();
    assert_eq!(Records::whole(&[0x17, 3, 3, hi, lo]).unwrap(), None);
    assert_eq!(Records::whole(&[0x17, 3]).unwrap(), None);
}

#[test]
fn more_content_than_a_record_may_hold_is_refused_once_opened() {
    let (mut client, mut server) = pair(Aead::Aes256);
    let mut inner = vec![7; MAX_CONTENT + 1];
    inner.push(23);
    let e = opened(&mut client, sealed_raw(&mut server, &inner)).unwrap_err();
    assert!(
        matches!(tls_error(&e), rustls::Error::PeerSentOversizedRecord),
        "{e}"
    );
}

#[test]
fn close_notify_ends_and_any_other_alert_is_an_error() {
    let (mut client, mut server) = pair(Aead::Aes256);
    let record = sealed(&mut server, ContentType::Alert, &[1, 0]);
    assert_eq!(opened(&mut client, record).unwrap().0, Content::Closed);
    let record = sealed(&mut server, ContentType::Alert, &[2, 40]);
    let e = opened(&mut client, record).unwrap_err();
    assert!(
        matches!(
            tls_error(&e),
            rustls::Error::AlertReceived(AlertDescription::HandshakeFailure)
        ),
        "{e}"
    );
    let (mut client, mut server) = pair(Aead::Aes256);
    let record = sealed(&mut server, ContentType::Alert, &[1, 0, 0]);
    assert!(opened(&mut client, record).is_err());
    // An alert of no known level, even close_notify.
    let (mut client, mut server) = pair(Aead::Aes256);
    let record = sealed(&mut server, ContentType::Alert, &[3, 0]);
    assert!(opened(&mut client, record).is_err());
    // A warning other than user_canceled is an error in TLS 1.3.
    let (mut client, mut server) = pair(Aead::Aes256);
    let record = sealed(&mut server, ContentType::Alert, &[1, 42]);
    assert!(opened(&mut client, record).is_err());
    // user_canceled passes a few times (as rustls lets it), then not.
    let (mut client, mut server) = pair(Aead::Aes256);
    for _ in 0..super::WARNINGS {
        let record = sealed(&mut server, ContentType::Alert, &[1, 90]);
        assert_eq!(opened(&mut client, record).unwrap().0, Content::Nothing);
    }
    let record = sealed(&mut server, ContentType::Alert, &[1, 90]);
    assert!(opened(&mut client, record).is_err());
    // A change_cipher_spec protected: no TLS 1.3 peer sends one.
    let (mut client, mut server) = pair(Aead::Aes256);
    let record = sealed(&mut server, ContentType::ChangeCipherSpec, &[1]);
    let e = opened(&mut client, record).unwrap_err();
    assert!(
        matches!(tls_error(&e), rustls::Error::InappropriateMessage { .. }),
        "{e}"
    );
}

/// A handshake message: its type, its length in three bytes, its body.
fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let length = u32::try_from(body.len()).unwrap().to_be_bytes();
    let mut m = vec![kind, length[1], length[2], length[3]];
    m.extend_from_slice(body);
    m
}

#[test]
fn session_tickets_are_let_go_whole_or_cut_over_records() {
    let (mut client, mut server) = pair(Aead::Aes256);
    // Two tickets in one record, as rustls sends them.
    let two = [message(4, &[9; 180]), message(4, &[8; 180])].concat();
    let record = sealed(&mut server, ContentType::Handshake, &two);
    assert_eq!(opened(&mut client, record).unwrap().0, Content::Nothing);
    assert_eq!(client.held(), 0);
    // One cut in three pieces: held until whole, then let go.
    let ticket = message(4, &[7; 3000]);
    for piece in [&ticket[..2], &ticket[2..1000], &ticket[1000..]] {
        let record = sealed(&mut server, ContentType::Handshake, piece);
        assert_eq!(opened(&mut client, record).unwrap().0, Content::Nothing);
    }
    assert_eq!(client.held(), 0);
    let record = sealed(&mut server, ContentType::ApplicationData, b"after");
    assert_eq!(opened(&mut client, record).unwrap().1, b"after");
    // Application data between the pieces of one message.
    let record = sealed(&mut server, ContentType::Handshake, &ticket[..100]);
    opened(&mut client, record).unwrap();
    let record = sealed(&mut server, ContentType::ApplicationData, b"between");
    assert!(opened(&mut client, record).is_err());
}

#[test]
fn a_key_update_fails_the_connection_so_that_it_is_opened_again() {
    let (mut client, mut server) = pair(Aead::Chacha);
    let record = sealed(&mut server, ContentType::Handshake, &message(24, &[0]));
    let e = opened(&mut client, record).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
    assert!(e.to_string().contains("updated its TLS keys"), "{e}");
}

#[test]
fn handshake_messages_no_server_sends_after_its_handshake_are_refused() {
    // A ServerHello, a Finished, a certificate request: nothing a client may take now.
    for kind in [2, 20, 13] {
        let (mut client, mut server) = pair(Aead::Aes256);
        let record = sealed(
            &mut server,
            ContentType::Handshake,
            &message(kind, &[0; 32]),
        );
        let e = opened(&mut client, record).unwrap_err();
        assert!(e.to_string().contains("after the handshake"), "{kind}: {e}");
    }
    // One announcing more than a handshake message may be.
    let (mut client, mut server) = pair(Aead::Aes256);
    let record = sealed(&mut server, ContentType::Handshake, &[4, 0x01, 0x00, 0x00]);
    let e = opened(&mut client, record).unwrap_err();
    assert!(
        matches!(tls_error(&e), rustls::Error::InvalidMessage(_)),
        "{e}"
    );
    // Pieces that would join into more than that.
    let (mut client, mut server) = pair(Aead::Aes256);
    let start = [4, 0x00, 0xff, 0xff];
    let record = sealed(&mut server, ContentType::Handshake, &start);
    opened(&mut client, record).unwrap();
    let mut refused = false;
    for _ in 0..5 {
        let record = sealed(&mut server, ContentType::Handshake, &[0; MAX_CONTENT]);
        match opened(&mut client, record) {
            Ok(_) => assert!(client.held() <= 0xffff + 4),
            Err(_) => {
                refused = true;
                break;
            }
        }
    }
    assert!(refused, "joined beyond the bound");
    // An empty handshake record.
    let (mut client, mut server) = pair(Aead::Aes256);
    let record = sealed(&mut server, ContentType::Handshake, &[]);
    assert!(opened(&mut client, record).is_err());
}

#[test]
fn a_key_is_not_used_beyond_its_limit() {
    let (mut client, _) = pair(Aead::Aes256);
    client.write.seq = SEAL_LIMIT;
    let mut out = Vec::new();
    let e = client
        .seal(ContentType::ApplicationData, b"x", &mut out)
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
    assert!(out.is_empty());
    // The sequence number the hand-over gave is where sealing goes on.
    let mut client = Records::new(ExtractedSecrets {
        tx: (5, secrets(Aead::Aes256, 1)),
        rx: (9, secrets(Aead::Aes256, 2)),
    })
    .unwrap();
    let mut server = Records::new(ExtractedSecrets {
        tx: (9, secrets(Aead::Aes256, 2)),
        rx: (5, secrets(Aead::Aes256, 1)),
    })
    .unwrap();
    let record = sealed(&mut server, ContentType::ApplicationData, b"nine");
    assert_eq!(opened(&mut client, record).unwrap().1, b"nine");
    let mut out = Vec::new();
    client
        .seal(ContentType::ApplicationData, b"five", &mut out)
        .unwrap();
    let mut got = Vec::new();
    server.open(&mut out, &mut got).unwrap();
    assert_eq!(got, b"five");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any bytes where a record should be: judged without a panic, and never opened.
    #[test]
    fn any_bytes_are_judged_without_a_panic(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
        record_like: bool,
    ) {
        let (mut client, _) = pair(Aead::Aes256);
        let mut record = if record_like {
            let [hi, lo] = u16::try_from(bytes.len()).unwrap().to_be_bytes();
            vec![0x17, 3, 3, hi, lo]
        } else {
            Vec::new()
        };
        record.extend(bytes);
        if let Ok(Some(n)) = Records::whole(&record) {
            let mut plain = Vec::new();
            proptest::prop_assert!(client.open(&mut record[..n], &mut plain).is_err());
            proptest::prop_assert!(plain.is_empty());
        }
    }

    /// Any inner plaintext a server seals is opened without a panic, and what is read is its
    /// content exactly when it is application data.
    #[test]
    fn any_inner_plaintext_is_opened_or_refused(
        inner in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
    ) {
        let (mut client, mut server) = pair(Aead::Chacha);
        let record = sealed_raw(&mut server, &inner);
        if let Ok((Content::Data, plain)) = opened(&mut client, record) {
            let end = inner.iter().rposition(|b| *b != 0).unwrap();
            proptest::prop_assert_eq!(inner[end], 23);
            proptest::prop_assert_eq!(&plain[..], &inner[..end]);
        }
    }
}
