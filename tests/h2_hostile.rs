//! `fluxfleet get` against API servers that speak HTTP/2 over TLS (ALPN `h2`) and misbehave in
//! one way each, as an attacker's server would: the command ends with the cluster's error
//! within its timeout, and its memory stays that of a well-behaved server. The frame-level
//! cases (each attack's bound, by the driver's own accounting) are in `src/k8s/wire/h2/attacks.rs`.
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

type Tls = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;

/// Accepts TLS connections for as long as the test runs, each handled by `handle`.
async fn accept_each<F, Fut>(listener: TcpListener, tls: tokio_rustls::TlsAcceptor, handle: F)
where
    F: Fn(Tls) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    while let Ok((tcp, _)) = listener.accept().await {
        if let Ok(io) = tls.accept(tcp).await {
            tokio::spawn(handle(io));
        }
    }
}

/// One connection of a flooding server.
async fn flood_connection(mut io: Tls, attack: Attack) {
    let _ = io.write_all(&frame(0x4, 0, 0, &[])).await;
    let Some(stream) = first_request(&mut io).await else {
        return;
    };
    let (once, again) = flood(attack, stream);
    let _ = io.write_all(&once).await;
    let batch = again.repeat(64);
    // Never read again: the client's answers pile up on its side unless it stops reading.
    while io.write_all(&batch).await.is_ok() {}
}

/// Attacks in the answers' bodies, from a server that otherwise serves discovery and lists
/// as an API server does (and respects the client's windows).
#[derive(Clone, Copy, Debug, PartialEq)]
enum BodyAttack {
    /// A list of 1 MiB sent as one-byte DATA frames.
    OneByteFrames,
    /// Every list answered with 1 MiB of DATA before its HEADERS.
    DataBeforeHeaders,
    /// One object whose `status.inventory.entries` is 32 MiB of `[0,0,…]`.
    HugeInventory,
}

/// How much the client lets the server send: the connection's window and each stream's.
#[derive(Default)]
struct Windows {
    state: std::sync::Mutex<(i64, std::collections::HashMap<u32, i64>, i64)>,
    more: tokio::sync::Notify,
}

impl Windows {
    /// Up to `want` bytes of window on `stream`, waiting for the client to give some.
    async fn take(&self, stream: u32, want: usize) -> usize {
        loop {
            let more = self.more.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            {
                let mut state = self.state.lock().unwrap();
                let initial = state.2;
                let on_stream = *state.1.entry(stream).or_insert(initial);
                let room = state.0.min(on_stream).min(want as i64);
                if room > 0 {
                    state.0 -= room;
                    *state.1.get_mut(&stream).unwrap() -= room;
                    return room as usize;
                }
            }
            more.await;
        }
    }
}

type Writer = Arc<
    tokio::sync::Mutex<
        tokio::io::WriteHalf<tokio_rustls::server::TlsStream<tokio::net::TcpStream>>,
    >,
>;

/// A list of kustomizations as the attack shapes it.
fn list_body(attack: BodyAttack) -> Vec<u8> {
    let status = match attack {
        BodyAttack::HugeInventory => {
            let zeros = vec!["0"; 16 * 1024 * 1024].join(",");
            format!(r#"{{"inventory":{{"entries":[{zeros}]}}}}"#)
        }
        _ => format!(
            r#"{{"conditions":[{{"type":"Ready","status":"False","reason":"BuildFailed","message":"{}"}}]}}"#,
            "m".repeat(1 << 20)
        ),
    };
    format!(
        r#"{{"kind":"KustomizationList","apiVersion":"kustomize.toolkit.fluxcd.io/v1","metadata":{{"resourceVersion":"1"}},"items":[{{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization","metadata":{{"name":"apps","namespace":"flux-system","generation":1,"resourceVersion":"1"}},"status":{status}}}]}}"#
    )
    .into_bytes()
}

/// The answer to `path`: its status and body.
fn answer_to(path: &str) -> (&'static [u8], Vec<u8>) {
    let group = "kustomize.toolkit.fluxcd.io";
    match path {
        "/apis" => (b"200", serde_json::json!({"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [{"name": group, "versions": [{"groupVersion": format!("{group}/v1"), "version": "v1"}],
            "preferredVersion": {"groupVersion": format!("{group}/v1"), "version": "v1"}}]}).to_string().into_bytes()),
        "/apis/kustomize.toolkit.fluxcd.io/v1" => (b"200", serde_json::json!({"kind": "APIResourceList",
            "apiVersion": "v1", "groupVersion": format!("{group}/v1"), "resources": [{"name": "kustomizations",
            "singularName": "kustomization", "namespaced": true, "kind": "Kustomization",
            "verbs": ["list", "watch"]}]}).to_string().into_bytes()),
        _ => (b"404", br#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":404}"#.to_vec()),
    }
}

/// Answers one request on `stream`, as the attack asks.
async fn respond(
    writer: Writer,
    windows: Arc<Windows>,
    stream: u32,
    path: String,
    attack: BodyAttack,
) {
    let head = |status: &[u8], end: bool| {
        let block = [
            &[0x08, 3][..],
            status,
            &[0x0f, 0x10, 16][..],
            b"application/json",
        ]
        .concat();
        frame(0x1, 0x4 | u8::from(end), stream, &block)
    };
    let path_only = path.split('?').next().unwrap_or_default().to_string();
    let listing = path_only.ends_with("/kustomizations");
    // A server before streaming lists: what is attacked here is the paged list.
    let streaming = listing && path.contains("sendInitialEvents=true");
    if listing && path.contains("watch=") && !streaming {
        // A watch that stays quiet.
        let _ = writer.lock().await.write_all(&head(b"200", false)).await;
        return;
    }
    let (status, body) = if streaming {
        let refused = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422}"#;
        (&b"422"[..], refused.as_bytes().to_vec())
    } else if listing {
        (&b"200"[..], list_body(attack))
    } else {
        answer_to(&path_only)
    };
    let listing = listing && !streaming;
    let early = listing && attack == BodyAttack::DataBeforeHeaders;
    if !early
        && writer
            .lock()
            .await
            .write_all(&head(status, false))
            .await
            .is_err()
    {
        return;
    }
    let one_byte = listing && attack == BodyAttack::OneByteFrames;
    let mut sent = 0;
    while sent < body.len() {
        let want = if one_byte { 4096 } else { 16_384 }.min(body.len() - sent);
        let n = windows.take(stream, want).await;
        let mut out = Vec::new();
        let frames: Vec<&[u8]> = if one_byte {
            body[sent..sent + n].chunks(1).collect()
        } else {
            vec![&body[sent..sent + n]]
        };
        sent += n;
        let last = frames.len() - 1;
        for (i, piece) in frames.into_iter().enumerate() {
            let end = !early && sent == body.len() && i == last;
            out.extend(frame(0x0, u8::from(end), stream, piece));
        }
        if writer.lock().await.write_all(&out).await.is_err() {
            return;
        }
    }
    if early {
        let _ = writer.lock().await.write_all(&head(status, true)).await;
    }
}

/// One connection of a server that serves discovery and lists, with the attack in its bodies.
async fn list_connection(io: Tls, attack: BodyAttack) {
    let (mut reading, writing) = tokio::io::split(io);
    let writer: Writer = Arc::new(tokio::sync::Mutex::new(writing));
    let windows = Arc::new(Windows::default());
    *windows.state.lock().unwrap() = (65_535, Default::default(), 65_535);
    let _ = writer.lock().await.write_all(&frame(0x4, 0, 0, &[])).await;
    let mut preface = [0u8; 24];
    if reading.read_exact(&mut preface).await.is_err() {
        return;
    }
    let mut decoder = hpack::Decoder::new();
    loop {
        let mut head = [0u8; 9];
        if reading.read_exact(&mut head).await.is_err() {
            return;
        }
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let (kind, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0; len];
        if reading.read_exact(&mut payload).await.is_err() {
            return;
        }
        match kind {
            0x1 => {
                let fields = decoder.decode(&payload).unwrap_or_default();
                let path = fields
                    .iter()
                    .find(|(n, _)| n == b":path")
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                    .unwrap_or_default();
                tokio::spawn(respond(
                    writer.clone(),
                    windows.clone(),
                    stream,
                    path,
                    attack,
                ));
            }
            0x4 if flags & 1 == 0 => {
                for entry in payload.chunks_exact(6) {
                    if entry[..2] == [0, 4] {
                        let value = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
                        windows.state.lock().unwrap().2 = i64::from(value);
                    }
                }
                let _ = writer.lock().await.write_all(&frame(0x4, 1, 0, &[])).await;
            }
            0x8 => {
                let increment = i64::from(u32::from_be_bytes(payload[..4].try_into().unwrap()));
                let mut state = windows.state.lock().unwrap();
                if stream == 0 {
                    state.0 += increment;
                } else {
                    let initial = state.2;
                    *state.1.entry(stream).or_insert(initial) += increment;
                }
                drop(state);
                windows.more.notify_waiters();
            }
            // A well-behaved server answers a ping (the client pings a connection quiet for
            // 10 s: on a loaded machine a body in one-byte frames can pause that long).
            0x6 if flags & 1 == 0 => {
                let _ = writer
                    .lock()
                    .await
                    .write_all(&frame(0x6, 1, 0, &payload))
                    .await;
            }
            _ => {}
        }
    }
}

/// Which hostile server to run.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    Flood(Attack),
    Body(BodyAttack),
}

/// A TLS server speaking only `h2`, and a kubeconfig that trusts it.
async fn hostile(server: Hostile, dir: &std::path::Path) -> std::path::PathBuf {
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
    let tls = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    match server {
        Hostile::Flood(attack) => tokio::spawn(accept_each(listener, tls, move |io| {
            flood_connection(io, attack)
        })),
        Hostile::Body(attack) => tokio::spawn(accept_each(listener, tls, move |io| {
            list_connection(io, attack)
        })),
    };
    let ca = base64::engine::general_purpose::STANDARD.encode(ca.pem());
    let path = dir.join(format!("{server:?}.kubeconfig"));
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

/// `fluxfleet get ks -o json` against each server at once: each one's output (stdout and
/// stderr), whether it succeeded, and its peak memory in MiB, read while it runs (`VmHWM` only
/// grows). A command that does not end within a minute fails the test.
async fn get_against(servers: &[Hostile], timeout: &str) -> Vec<(Hostile, String, bool, u64)> {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for server in servers {
        let kubeconfig = hostile(*server, dir.path()).await;
        let child = Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
            .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
            .env("HOME", "/nonexistent-home")
            .env_remove("KUBECONFIG")
            .args([
                "get",
                "ks",
                "-o",
                "json",
                "--timeout",
                timeout,
                "--kubeconfig",
            ])
            .arg(&kubeconfig)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        runs.push((*server, pid, 0, tokio::spawn(child.wait_with_output())));
    }
    // Sampling the peaks every 50 ms for up to two minutes: past any `timeout` given here.
    for _ in 0..2400 {
        if runs.iter().all(|(_, _, _, waiting)| waiting.is_finished()) {
            break;
        }
        for (_, pid, peak, _) in &mut runs {
            *peak = (*peak).max(peak_mib(*pid).unwrap_or(0));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mut outcomes = Vec::new();
    for (server, _, peak, waiting) in runs {
        assert!(waiting.is_finished(), "{server:?}: get did not end");
        let out = waiting.await.unwrap().unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        outcomes.push((server, all, out.status.success(), peak));
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_ends_with_the_error_and_small_memory_whatever_the_server_floods() {
    let floods = [
        Attack::PingFlood,
        Attack::SettingsFlood,
        Attack::Continuations,
        Attack::Informational,
    ];
    let servers: Vec<Hostile> = floods.into_iter().map(Hostile::Flood).collect();
    for (server, all, success, peak) in get_against(&servers, "5s").await {
        assert!(!success, "{server:?}: {all}");
        assert!(
            all.contains("hostile"),
            "{server:?} names the cluster: {all}"
        );
        let expected = match server {
            Hostile::Flood(Attack::PingFlood) => {
                "frames that carry nothing within 10s (the last: PING)"
            }
            Hostile::Flood(Attack::SettingsFlood) => {
                "frames that carry nothing within 10s (the last: SETTINGS)"
            }
            Hostile::Flood(Attack::Continuations) => {
                "more than 32 CONTINUATION frames in one header block"
            }
            _ => "more than 5 informational answers",
        };
        assert!(
            all.contains("broke HTTP/2") && all.contains(expected),
            "{server:?}: {all}"
        );
        assert!(peak < 100, "{server:?}: {peak} MiB");
    }
}

/// Attacks in the bodies: what is held is the bytes, never the frames, and an object is read
/// keeping only what its summary shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_reads_hostile_bodies_in_the_memory_of_a_well_behaved_server() {
    let attacks = [
        BodyAttack::OneByteFrames,
        BodyAttack::DataBeforeHeaders,
        BodyAttack::HugeInventory,
    ];
    let servers: Vec<Hostile> = attacks.into_iter().map(Hostile::Body).collect();
    // A bound, not a speed: a body in one-byte frames reads in ~4 s alone, and took over 20 s
    // once beside the whole suite on two cores; what is checked is the answer and the memory.
    for (server, all, success, peak) in get_against(&servers, "60s").await {
        let (succeeds, says) = match server {
            Hostile::Body(BodyAttack::OneByteFrames) => (true, "\"name\": \"apps\""),
            Hostile::Body(BodyAttack::HugeInventory) => (true, "\"inventory\": 16777216"),
            _ => (false, "broke HTTP/2: DATA before the answer's HEADERS"),
        };
        assert_eq!(success, succeeds, "{server:?}: {all}");
        assert!(all.contains(says), "{server:?}: {all}");
        assert!(peak < 100, "{server:?}: {peak} MiB");
    }
}
