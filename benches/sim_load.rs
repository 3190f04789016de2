//! Load on a running `fluxfleet sim`: one HTTP/2 connection per cluster carrying one watch per Flux
//! kind (7 per cluster), as fluxfleet's engine connects. Reports how long until every watch has
//! its initial objects, and what the server says it holds.
//!
//! ```sh
//! cargo run --release -- sim --clusters 2000 --workspaces 12 --objects 30 --out /tmp/fleet &
//! cargo bench --bench sim_load -- --dir /tmp/fleet [--pid <sim pid>] [--kinds 1..7] [--hold 10]
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a measuring tool, not product code

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};

const KINDS: [(&str, &str); 7] = [
    ("source.toolkit.fluxcd.io/v1", "gitrepositories"),
    ("source.toolkit.fluxcd.io/v1", "ocirepositories"),
    ("source.toolkit.fluxcd.io/v1", "helmrepositories"),
    ("source.toolkit.fluxcd.io/v1", "helmcharts"),
    ("source.toolkit.fluxcd.io/v1", "buckets"),
    ("kustomize.toolkit.fluxcd.io/v1", "kustomizations"),
    ("helm.toolkit.fluxcd.io/v2", "helmreleases"),
];

/// The annotation on the bookmark that ends a watch's initial events.
const END: &[u8] = b"k8s.io/initial-events-end";

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn rss_mib(pid: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

struct Target {
    server: String,
    token: String,
}

type Sender = hyper::client::conn::http2::SendRequest<Empty<Bytes>>;

async fn connect(tls: Arc<rustls::ClientConfig>, server: &str) -> (Sender, String) {
    let uri: http::Uri = server.parse().unwrap();
    let authority = uri.authority().unwrap().clone();
    let tcp = tokio::net::TcpStream::connect(authority.as_str())
        .await
        .unwrap();
    let name = ServerName::try_from(authority.host().to_string()).unwrap();
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    (sender, uri.path().trim_end_matches('/').to_string())
}

fn get(base: &str, path: &str, token: &str) -> http::Request<Empty<Bytes>> {
    http::Request::get(format!("https://fleet{base}{path}"))
        .header("authorization", format!("Bearer {token}"))
        .body(Empty::new())
        .unwrap()
}

/// Opens the cluster's watches; returns when each has delivered its initial objects, leaving
/// the streams open in the background.
async fn watch_cluster(tls: Arc<rustls::ClientConfig>, t: Target, kinds: usize) -> usize {
    let (sender, base) = connect(tls, &t.server).await;
    let mut waits = Vec::new();
    for (gv, plural) in KINDS.into_iter().take(kinds) {
        let mut s = sender.clone();
        let req = get(
            &base,
            &format!(
                "/apis/{gv}/{plural}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3600"
            ),
            &t.token,
        );
        waits.push(tokio::spawn(async move {
            let resp = s.send_request(req).await.unwrap();
            assert_eq!(resp.status(), 200);
            let mut body = resp.into_body();
            let mut seen = Vec::new();
            let (tx, rx) = tokio::sync::oneshot::channel();
            let mut tx = Some(tx);
            tokio::spawn(async move {
                while let Some(Ok(frame)) = body.frame().await {
                    if let (Some(data), Some(_)) = (frame.data_ref(), tx.as_ref()) {
                        seen.extend_from_slice(data);
                        if seen.windows(END.len()).any(|w| w == END) {
                            let _ = tx
                                .take()
                                .map(|t| t.send(seen.iter().filter(|&&b| b == b'\n').count()));
                            seen = Vec::new();
                        }
                    }
                }
            });
            rx.await.unwrap_or(0)
        }));
    }
    let mut events = 0;
    for w in waits {
        events += w.await.unwrap();
    }
    events
}

#[tokio::main]
async fn main() {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let Some(dir) = arg("--dir") else {
        eprintln!(
            "usage: cargo bench --bench sim_load -- --dir OUT_DIR_OF_fluxfleet_sim [--pid PID] [--hold SECONDS]"
        );
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let kc = kube::config::Kubeconfig::read_from(dir.join("fleet.kubeconfig")).unwrap();
    let ca = kc.clusters[0]
        .cluster
        .as_ref()
        .unwrap()
        .certificate_authority_data
        .clone()
        .unwrap();
    let ca_pem = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(&ca_pem).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let tls = Arc::new(tls);

    let targets: Vec<Target> = kc
        .contexts
        .iter()
        .map(|ctx| {
            let c = ctx.context.as_ref().unwrap();
            let cluster = kc
                .clusters
                .iter()
                .find(|x| x.name == c.cluster)
                .unwrap()
                .cluster
                .clone()
                .unwrap();
            let user = kc
                .auth_infos
                .iter()
                .find(|a| Some(&a.name) == c.user.as_ref())
                .unwrap()
                .auth_info
                .clone()
                .unwrap();
            Target {
                server: cluster.server.unwrap(),
                token: secrecy::ExposeSecret::expose_secret(&user.token.unwrap()).to_string(),
            }
        })
        .collect();
    let clusters = targets.len();
    let kinds: usize = arg("--kinds")
        .and_then(|k| k.parse().ok())
        .unwrap_or(KINDS.len())
        .clamp(1, KINDS.len());
    let pid = arg("--pid");
    let before = pid.as_deref().and_then(rss_mib);
    let started = Instant::now();
    let limit = Arc::new(tokio::sync::Semaphore::new(256));
    let mut tasks = Vec::new();
    for t in targets {
        let (tls, limit) = (tls.clone(), limit.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = limit.acquire_owned().await.unwrap();
            watch_cluster(tls, t, kinds).await
        }));
    }
    let mut events = 0;
    for t in tasks {
        events += t.await.unwrap();
    }
    let elapsed = started.elapsed();
    let token = std::fs::read_to_string(dir.join("sim-token")).unwrap();
    let server = kc.clusters[0]
        .cluster
        .as_ref()
        .unwrap()
        .server
        .clone()
        .unwrap();
    let root = server.split("/clusters/").next().unwrap().to_string();
    let (mut s, _) = connect(tls.clone(), &root).await;
    let stats = s
        .send_request(get("", "/sim/stats", token.trim()))
        .await
        .unwrap()
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes();
    let stats: serde_json::Value = serde_json::from_slice(&stats).unwrap();
    println!(
        "clusters: {clusters}; watches: {} live, {events} initial events, all delivered in {elapsed:.2?}",
        clusters * kinds
    );
    println!(
        "server: {} connections open ({} HTTP/2), {} HTTP/2 streams, {} open watches",
        stats["connectionsOpen"],
        stats["h2ConnectionsOpen"],
        stats["h2OpenStreams"],
        stats["openWatches"]
    );
    if let Some(pid) = pid {
        println!(
            "sim resident memory: {:.0} MiB before, {:.0} MiB with the watches",
            before.unwrap_or(0.0),
            rss_mib(&pid).unwrap_or(0.0)
        );
    }
    let hold: u64 = arg("--hold").and_then(|h| h.parse().ok()).unwrap_or(0);
    tokio::time::sleep(Duration::from_secs(hold)).await;
}
