//! The lean TLS stream against a rustls server on an in-memory pipe: what it reads and writes,
//! what it holds between records (nothing), and servers that send what no TLS server sends.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::{Lean, READ};

/// A server certificate for `localhost`, and a client configuration that trusts it, offers
/// `h2` and takes the records over after a TLS 1.3 handshake, as a watching connection does.
fn configs() -> (Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>) {
    configs_with(rustls::ALL_VERSIONS, true)
}

/// [`configs`] with the server on `versions`, and the client keeping rustls throughout unless
/// `own`.
fn configs_with(
    versions: &[&'static rustls::SupportedProtocolVersion],
    own: bool,
) -> (Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    let cert = params.self_signed(&key).unwrap();
    let der = CertificateDer::from(cert.der().to_vec());
    let provider = Arc::new(crate::k8s::wire::transport::crypto_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![der.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    server.alpn_protocols = vec![b"h2".to_vec()];
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der).unwrap();
    let mut client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    client.enable_secret_extraction = own;
    (Arc::new(server), Arc::new(client))
}

fn localhost() -> ServerName<'static> {
    ServerName::try_from("localhost").unwrap()
}

/// A connected pair: our client, and a tokio-rustls server on the other end of a pipe.
async fn connected() -> (
    Lean<DuplexStream>,
    tokio_rustls::server::TlsStream<DuplexStream>,
) {
    connected_with(configs()).await
}

async fn connected_with(
    (server_config, client_config): (Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>),
) -> (
    Lean<DuplexStream>,
    tokio_rustls::server::TlsStream<DuplexStream>,
) {
    // Room for the largest answer below: the test writes it whole before reading it.
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let acceptor = tokio_rustls::TlsAcceptor::from(server_config);
    let server = tokio::spawn(async move { acceptor.accept(theirs).await.unwrap() });
    let lean = Lean::connect(client_config, localhost(), ours)
        .await
        .unwrap();
    (lean, server.await.unwrap())
}

#[tokio::test]
async fn data_both_ways_and_nothing_held_between_records() {
    let (lean, server) = connected().await;
    assert!(
        lean.own(),
        "TLS 1.3: the records are ours after the handshake"
    );
    both_ways(lean, server).await;
}

/// Every TLS 1.3 suite the client offers, the records ours; TLS 1.2, and a client that keeps
/// rustls, rustls' throughout: each reads and writes the same.
#[tokio::test]
async fn every_suite_and_version_reads_and_writes_the_same() {
    use rustls::crypto::ring::cipher_suite as suites;
    for suite in [
        suites::TLS13_AES_128_GCM_SHA256,
        suites::TLS13_AES_256_GCM_SHA384,
        suites::TLS13_CHACHA20_POLY1305_SHA256,
    ] {
        let (server, client) = configs();
        let mut server = Arc::unwrap_or_clone(server);
        let mut provider = crate::k8s::wire::transport::crypto_provider();
        provider.cipher_suites = vec![suite];
        server = rebuilt(server, provider);
        let (lean, server) = connected_with((Arc::new(server), client)).await;
        assert!(lean.own(), "{suite:?}");
        both_ways(lean, server).await;
    }
    let (lean, server) = connected_with(configs_with(&[&rustls::version::TLS12], true)).await;
    assert!(!lean.own(), "TLS 1.2 stays rustls'");
    both_ways(lean, server).await;
    let (lean, server) = connected_with(configs_with(rustls::ALL_VERSIONS, false)).await;
    assert!(!lean.own(), "a client that keeps its secrets in");
    both_ways(lean, server).await;
}

/// `server` again with only what `provider` offers.
fn rebuilt(
    server: rustls::ServerConfig,
    provider: rustls::crypto::CryptoProvider,
) -> rustls::ServerConfig {
    let mut again = rustls::ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(server.cert_resolver.clone());
    again.alpn_protocols = server.alpn_protocols.clone();
    again
}

/// A server that updates its keys: the connection fails saying so (it cannot follow), and is
/// opened again by its pool; what came before is read.
#[tokio::test]
async fn a_key_update_from_the_server_fails_the_connection_by_name() {
    let (mut lean, mut server) = connected().await;
    server.write_all(b"before").await.unwrap();
    server.flush().await.unwrap();
    let mut got = [0; 6];
    lean.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"before");
    server.get_mut().1.refresh_traffic_keys().unwrap();
    server.write_all(b"after").await.unwrap();
    server.flush().await.unwrap();
    let e = lean.read(&mut [0; 16]).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
}

/// Data both ways between a connected pair; nothing held between records.
async fn both_ways(
    mut lean: Lean<DuplexStream>,
    mut server: tokio_rustls::server::TlsStream<DuplexStream>,
) {
    assert_eq!(lean.alpn_protocol(), Some(&b"h2"[..]));
    assert_eq!(lean.held(), 0, "after the handshake");
    // A request out, larger than one record.
    let request: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    lean.write_all(&request).await.unwrap();
    lean.flush().await.unwrap();
    let mut got = vec![0; request.len()];
    server.read_exact(&mut got).await.unwrap();
    assert_eq!(got, request);
    assert_eq!(lean.held(), 0, "after writing");
    // Answers of every size, read in pieces as the HTTP/2 client reads (a 9-byte head, then
    // the rest): each arrives whole, and nothing is held once it has been read.
    for size in [1, 9, 100, 4096, 16_384, 16_385, 70_000] {
        let answer: Vec<u8> = (0..size).map(|i| (i * 7 % 256) as u8).collect();
        server.write_all(&answer).await.unwrap();
        server.flush().await.unwrap();
        let mut head = [0; 9];
        let first = size.min(9);
        lean.read_exact(&mut head[..first]).await.unwrap();
        let mut rest = vec![0; size - first];
        lean.read_exact(&mut rest).await.unwrap();
        assert_eq!([&head[..first], &rest[..]].concat(), answer, "{size} bytes");
        assert_eq!(lean.held(), 0, "after reading {size} bytes");
    }
}

#[tokio::test]
async fn a_clean_close_ends_the_stream_and_ours_reaches_the_server() {
    let (mut lean, mut server) = connected().await;
    server.write_all(b"last words").await.unwrap();
    server.shutdown().await.unwrap();
    let mut got = Vec::new();
    lean.read_to_end(&mut got).await.unwrap();
    assert_eq!(got, b"last words");
    lean.shutdown().await.unwrap();
    let mut rest = Vec::new();
    server.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
}

/// What a client reads of a 50,000-byte answer whose TLS bytes reach it in pieces of the sizes
/// `chunks` gives (in turn), and what it holds once it has read it all.
async fn relayed(chunks: Vec<usize>) -> (Vec<u8>, usize) {
    let (server_config, client_config) = configs();
    let (ours, relay_near) = tokio::io::duplex(64 * 1024);
    let (relay_far, theirs) = tokio::io::duplex(64 * 1024);
    let acceptor = tokio_rustls::TlsAcceptor::from(server_config);
    let server = tokio::spawn(async move {
        let mut tls = acceptor.accept(theirs).await.unwrap();
        tls.write_all(&answer()).await.unwrap();
        tls.flush().await.unwrap();
        // Kept open until the client has read it all.
        let mut end = [0; 1];
        let _ = tls.read(&mut end).await;
    });
    let (mut near_read, mut near_write) = tokio::io::split(relay_near);
    let (mut far_read, mut far_write) = tokio::io::split(relay_far);
    // The client's bytes pass as they come; the server's a piece at a time.
    tokio::spawn(async move { tokio::io::copy(&mut near_read, &mut far_write).await });
    tokio::spawn(async move {
        for chunk in chunks.iter().cycle() {
            let mut buf = vec![0; *chunk];
            let n = far_read.read(&mut buf).await.unwrap_or(0);
            if n == 0 || near_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    let mut lean = Lean::connect(client_config, localhost(), ours)
        .await
        .unwrap();
    let mut got = vec![0; 50_000];
    lean.read_exact(&mut got).await.unwrap();
    let held = lean.held();
    lean.write_all(b"x").await.unwrap();
    lean.flush().await.unwrap();
    server.await.unwrap();
    (got, held)
}

fn answer() -> Vec<u8> {
    (0..50_000u32).map(|i| (i % 253) as u8).collect()
}

/// Records cut anywhere arrive whole, as they do over a slow link.
#[tokio::test]
async fn records_cut_anywhere_read_the_same() {
    for chunk in [1, 3, 5, 6, 4095, 16_389] {
        let (got, held) = relayed(vec![chunk]).await;
        assert!(got == answer(), "chunks of {chunk}");
        assert_eq!(held, 0, "chunks of {chunk}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Any way of cutting the server's bytes reads the same, and leaves nothing held.
    #[test]
    fn any_cut_reads_the_same(chunks in proptest::collection::vec(1usize..20_000, 1..6)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (got, held) = runtime.block_on(relayed(chunks));
        proptest::prop_assert!(got == answer());
        proptest::prop_assert_eq!(held, 0);
    }

    /// Whatever bytes come after the handshake where records should, a read ends (with data,
    /// the end, or an error: never a panic) and the stream holds no more than TLS allows.
    #[test]
    fn any_bytes_after_the_handshake_end_within_bounds(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40_000),
        record_like: bool,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let held = runtime.block_on(async move {
            let (mut lean, server) = connected().await;
            let (mut raw, _) = server.into_inner();
            // Half the time a record header the decrypting layer must judge.
            let mut sent = Vec::new();
            if record_like {
                sent.extend([0x17, 0x03, 0x03, 0x00, 0x40]);
            }
            sent.extend(bytes);
            raw.write_all(&sent).await.unwrap();
            drop(raw);
            let mut all = Vec::new();
            let _ = lean.read_to_end(&mut all).await;
            lean.held()
        });
        proptest::prop_assert!(held <= super::MAX_INCOMING);
    }
}

/// What a client reading `server`'s bytes in answer to its hello says, and the most it held.
async fn against(server: Vec<u8>) -> std::io::Error {
    let (_, client_config) = configs();
    let (ours, mut theirs) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let mut hello = [0; 512];
        let _ = theirs.read(&mut hello).await;
        let _ = theirs.write_all(&server).await;
        // Then silence, open: the client must decide from what it has.
        std::future::pending::<()>().await;
    });
    match Lean::connect(client_config, localhost(), ours).await {
        Ok(_) => panic!("connected to a server that is not one"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn a_server_that_does_not_speak_tls_is_refused_at_once() {
    let e = against(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_vec()).await;
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
    // What the rest of fluxfleet reads it as: rustls' own error, wrapped as tokio-rustls does.
    let tls = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
    assert!(tls.is_some(), "{e:?}");
}

#[tokio::test]
async fn a_record_longer_than_tls_allows_is_refused_before_it_is_read() {
    // A handshake record announcing 65,535 bytes: more than any TLS record may hold.
    let mut record = vec![0x16, 0x03, 0x03, 0xff, 0xff];
    record.extend(std::iter::repeat_n(0u8, 4096));
    let e = against(record).await;
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
}

#[tokio::test]
async fn a_server_closing_in_the_handshake_is_named() {
    let (_, client_config) = configs();
    let (ours, mut theirs) = tokio::io::duplex(4096);
    tokio::spawn(async move {
        let mut hello = [0; 512];
        let _ = theirs.read(&mut hello).await;
        drop(theirs);
    });
    let e = Lean::connect(client_config, localhost(), ours)
        .await
        .err()
        .expect("no handshake");
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
    assert!(e.to_string().contains("during the TLS handshake"), "{e}");
}

/// A connected stream fed raw bytes (as if the server's record layer had gone astray): what a
/// read says, and what the stream holds meanwhile. Time is paused: the read's deadline passes
/// only once nothing else can run.
#[tokio::test(start_paused = true)]
async fn a_record_that_never_ends_holds_no_more_than_one_record() {
    let (mut lean, server) = connected().await;
    // The server's socket: write under its TLS, straight into the pipe.
    let (mut raw, _) = server.into_inner();
    // An application-data record announcing 16,000 bytes, of which 10,000 come.
    let mut partial = vec![0x17, 0x03, 0x03, 0x3e, 0x80];
    partial.extend(std::iter::repeat_n(0xaau8, 10_000));
    raw.write_all(&partial).await.unwrap();
    let mut buf = [0; 16];
    let waited =
        tokio::time::timeout(std::time::Duration::from_millis(50), lean.read(&mut buf)).await;
    assert!(waited.is_err(), "a read waits for the rest of the record");
    assert!(lean.held() <= READ, "{} bytes held", lean.held());
    // The rest, forged: rustls refuses it, and the stream says so.
    raw.write_all(&[0xaa; 6000]).await.unwrap();
    let e = lean.read(&mut buf).await.expect_err("a forged record");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
}
