//! `fluxfleet get` against API servers that speak HTTP/2 over TLS (ALPN `h2`) and misbehave in
//! one way each, as an attacker's server would: the command ends with the cluster's error
//! within its timeout, and its memory stays that of a well-behaved server. The frame-level
//! cases (each attack's bound, by the driver's own accounting) are in `src/k8s/h2/attacks.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use base64::Engine as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::process::Command;

/// One misbehaviour per server.
#[derive(Clone, Copy, Debug)]
enum Attack {
    /// PING frames as fast as the client reads, never reading the socket again.
    PingFlood,
    /// SETTINGS frames likewise.
    SettingsFlood,
    /// The first request answered with HEADERS and empty CONTINUATION frames, forever.
    Continuations,
    /// The first request answered with 100 Continue, forever.
    Informational,
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    out.extend([kind, flags]);
    out.extend(stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The first stream the client opens (it sends its preface, SETTINGS and WINDOW_UPDATE first).
async fn first_request(io: &mut (impl AsyncReadExt + Unpin)) -> Option<u32> {
    let mut preface = [0u8; 24];
    io.read_exact(&mut preface).await.ok()?;
    loop {
        let mut head = [0u8; 9];
        io.read_exact(&mut head).await.ok()?;
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let mut payload = vec![0; len];
        io.read_exact(&mut payload).await.ok()?;
        if head[3] == 0x1 {
            return Some(u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff);
        }
    }
}

/// What the server sends, over and over, once it has read the first request.
fn flood(attack: Attack, stream: u32) -> (Vec<u8>, Vec<u8>) {
    // `:status: 100` and `:status: 200`, literal without indexing, name from the static table.
    let status = |code: &[u8]| [&[0x08, 3][..], code].concat();
    match attack {
        Attack::PingFlood => (Vec::new(), frame(0x6, 0, 0, b"hostile!")),
        Attack::SettingsFlood => (Vec::new(), frame(0x4, 0, 0, &[0, 3, 0, 0, 0, 100])),
        Attack::Continuations => (
            frame(0x1, 0, stream, &status(b"200")),
            frame(0x9, 0, stream, &[]),
        ),
        Attack::Informational => (Vec::new(), frame(0x1, 0x4, stream, &status(b"100"))),
    }
}

async fn serve(listener: TcpListener, tls: tokio_rustls::TlsAcceptor, attack: Attack) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let tls = tls.clone();
        tokio::spawn(async move {
            let Ok(mut io) = tls.accept(tcp).await else {
                return;
            };
            let _ = io.write_all(&frame(0x4, 0, 0, &[])).await;
            let Some(stream) = first_request(&mut io).await else {
                return;
            };
            let (once, again) = flood(attack, stream);
            let _ = io.write_all(&once).await;
            let batch = again.repeat(64);
            // Never read again: the client's answers pile up on its side unless it stops reading.
            while io.write_all(&batch).await.is_ok() {}
        });
    }
}

/// A TLS server speaking only `h2`, and a kubeconfig that trusts it.
async fn hostile(attack: Attack, dir: &std::path::Path) -> std::path::PathBuf {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
    )
    .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve(
        listener,
        tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        attack,
    ));
    let ca = base64::engine::general_purpose::STANDARD.encode(ca.pem());
    let path = dir.join(format!("{attack:?}.kubeconfig"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority-data: {ca}\n\
             users:\n- name: u\n  user:\n    token: t\n\
             contexts:\n- name: hostile\n  context: {{cluster: c, user: u}}\ncurrent-context: hostile\n"
        ),
    )
    .unwrap();
    path
}

/// The peak resident memory of `pid` so far (`VmHWM`), in MiB.
fn peak_mib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? / 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_ends_with_the_error_and_small_memory_whatever_the_server_floods() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for attack in [
        Attack::PingFlood,
        Attack::SettingsFlood,
        Attack::Continuations,
        Attack::Informational,
    ] {
        let kubeconfig = hostile(attack, dir.path()).await;
        let child = Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
            .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
            .env("HOME", "/nonexistent-home")
            .env_remove("KUBECONFIG")
            .args(["get", "ks", "-o", "json", "--timeout", "5s", "--kubeconfig"])
            .arg(&kubeconfig)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        runs.push((attack, child));
    }
    let mut runs: Vec<_> = runs
        .into_iter()
        .map(|(attack, child)| {
            let pid = child.id().unwrap();
            (attack, pid, 0, tokio::spawn(child.wait_with_output()))
        })
        .collect();
    // Peaks are read while the commands run (`VmHWM` only grows); a command that does not end
    // within a minute fails the test.
    for _ in 0..1200 {
        if runs.iter().all(|(_, _, _, waiting)| waiting.is_finished()) {
            break;
        }
        for (_, pid, peak, _) in &mut runs {
            *peak = (*peak).max(peak_mib(*pid).unwrap_or(0));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for (attack, _, peak, waiting) in runs {
        assert!(waiting.is_finished(), "{attack:?}: get did not end");
        let out = waiting.await.unwrap().unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{attack:?}: {all}");
        assert!(
            all.contains("hostile"),
            "{attack:?} names the cluster: {all}"
        );
        let expected = match attack {
            Attack::PingFlood => "frames that carry nothing within 10s (the last: PING)",
            Attack::SettingsFlood => "frames that carry nothing within 10s (the last: SETTINGS)",
            Attack::Continuations => "more than 32 CONTINUATION frames in one header block",
            Attack::Informational => "more than 5 informational answers",
        };
        assert!(
            all.contains("broke HTTP/2") && all.contains(expected),
            "{attack:?}: {all}"
        );
        assert!(peak < 100, "{attack:?}: {peak} MiB");
    }
}
