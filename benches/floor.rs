//! The floor: what reading a fleet cannot avoid, beside what `fluxfleet get --summary` costs on
//! the same fleet. The floor is a minimal client, in this process: for each cluster its
//! kubeconfig read, one TCP connection, a full TLS 1.3 handshake with the cluster's own CA and
//! server name, and one list of each Flux kind `get` lists (HTTP/1.1 on that connection, the
//! versions known beforehand: no discovery), each page read into the summaries the index keeps
//! (`FluxSummary`, through the same borrowed parser). No index, no tasks, no retries, no state.
//! `fluxfleet get --summary` runs as a child process over the same kubeconfigs; the CPU of each
//! (user + system, from `/proc/self/stat`: this process's own, then its waited-for children's)
//! is divided by the clusters, rounds alternating, and the ratio printed.
//!
//! ```sh
//! cargo build --release
//! target/release/fluxfleet sim --scenario uniform --clusters 2000 --workspaces 12 --objects 30 --out /tmp/floor &
//! cargo bench --bench floor -- --dir /tmp/floor [--rounds 5] [--fluxfleet target/release/fluxfleet]
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a measuring tool, not product code

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use futures::StreamExt;
use http_body_util::{BodyExt, Empty};
use serde::Deserialize;

use fluxfleet::fleet::object::{Lax, Object};
use fluxfleet::fleet::{FluxKind, FluxRelease, FluxSummary};

/// The allocator of the `fluxfleet` binary (see `src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Clusters read at once: `engine.connect_concurrency`'s default.
const CONCURRENCY: usize = 64;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The CPU (user + system) of this process and of its waited-for children, in seconds.
fn cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The fields after the command's closing parenthesis; utime is field 14 of the whole line.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    let tick = 100.0;
    ((f[11] + f[12]) / tick, (f[13] + f[14]) / tick)
}

#[derive(Deserialize)]
struct Kubeconfig {
    clusters: Vec<ClusterEntry>,
    users: Vec<UserEntry>,
}

#[derive(Deserialize)]
struct ClusterEntry {
    cluster: ClusterFields,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterFields {
    server: String,
    certificate_authority_data: String,
    tls_server_name: Option<String>,
}

#[derive(Deserialize)]
struct UserEntry {
    user: UserFields,
}

#[derive(Deserialize)]
struct UserFields {
    token: String,
}

/// A list page's items, each read as the index's summaries read it.
#[derive(Deserialize)]
struct List<'a> {
    #[serde(borrow, default)]
    items: Vec<Lax<Object<'a>>>,
}

/// One cluster read at the floor: the objects summarised.
async fn floor_one(path: PathBuf, kinds: Arc<[FluxKind]>) -> usize {
    let text = tokio::fs::read_to_string(&path).await.unwrap();
    let config: Kubeconfig = serde_saphyr::from_str(&text).unwrap();
    let cluster = &config.clusters[0].cluster;
    let token = &config.users[0].user.token;
    let ca = base64::engine::general_purpose::STANDARD
        .decode(&cluster.certificate_authority_data)
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile_certs(&ca) {
        roots.add(cert).unwrap();
    }
    let tls = rustls::ClientConfig::builder_with_protocol_versions(&[&rustls::version::TLS13])
        .with_root_certificates(roots)
        .with_no_client_auth();
    let uri: http::Uri = cluster.server.parse().unwrap();
    let authority = uri.authority().unwrap();
    let host = authority.host();
    let name = cluster
        .tls_server_name
        .as_deref()
        .unwrap_or(host)
        .to_string();
    let tcp = tokio::net::TcpStream::connect((host, authority.port_u16().unwrap_or(443)))
        .await
        .unwrap();
    tcp.set_nodelay(true).unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(tls));
    let server_name = rustls::pki_types::ServerName::try_from(name).unwrap();
    let stream = connector.connect(server_name, tcp).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    let driving = tokio::spawn(connection);
    let base = uri.path().trim_end_matches('/');
    let authorization = format!("Bearer {token}");
    let mut objects = 0;
    for &kind in kinds.iter() {
        let version = kind.storage_version(FluxRelease::LATEST).unwrap();
        let request = http::Request::get(format!(
            "{base}/apis/{}/{version}/{}?limit=500",
            kind.group(),
            kind.plural()
        ))
        .header(http::header::HOST, authority.as_str())
        .header(http::header::AUTHORIZATION, &authorization)
        .header(http::header::ACCEPT, "application/json")
        .body(Empty::<bytes::Bytes>::new())
        .unwrap();
        sender.ready().await.unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let list: List<'_> = serde_json::from_slice(&body).unwrap();
        for item in &list.items {
            if let Some(object) = item.get()
                && FluxSummary::read(kind, object).is_ok()
            {
                objects += 1;
            }
        }
    }
    drop(sender);
    let _ = driving.await;
    objects
}

/// The certificates of PEM text.
fn rustls_pemfile_certs(pem: &[u8]) -> Vec<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem)
        .map(Result::unwrap)
        .collect()
}

fn kubeconfigs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Some(dir) = arg("--dir") else {
        eprintln!(
            "usage: cargo bench --bench floor -- --dir OUT_OF_A_RUNNING_SIM [--rounds N] [--fluxfleet BINARY]"
        );
        return;
    };
    let rounds: usize = arg("--rounds").map_or(3, |r| r.parse().unwrap());
    let binary = arg("--fluxfleet")
        .unwrap_or_else(|| format!("{}/target/release/fluxfleet", env!("CARGO_MANIFEST_DIR")));
    let kubeconfig_dir = Path::new(&dir).join("kubeconfigs");
    let files = kubeconfigs(&kubeconfig_dir);
    let clusters = files.len() as f64;
    // The kinds `get` lists by default.
    let kinds: Arc<[FluxKind]> = fluxfleet::config::Config::defaults().engine.kinds.into();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (mut floors, mut gets, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (own, _) = cpu();
        let wall = Instant::now();
        let objects: usize = runtime.block_on(async {
            futures::stream::iter(files.iter().map(|f| floor_one(f.clone(), kinds.clone())))
                .buffer_unordered(CONCURRENCY)
                .fold(0, |sum, n| async move { sum + n })
                .await
        });
        let floor_wall = wall.elapsed().as_secs_f64();
        let floor = (cpu().0 - own) / clusters * 1000.0;

        let (_, children) = cpu();
        let wall = Instant::now();
        let out = std::process::Command::new(&binary)
            .args(["get", "--summary", "-o", "json", "--kubeconfig-dir"])
            .arg(&kubeconfig_dir)
            .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let get_wall = wall.elapsed().as_secs_f64();
        let get = (cpu().1 - children) / clusters * 1000.0;
        println!(
            "round {round}: floor {floor:.3} ms CPU a cluster ({objects} objects, {floor_wall:.2} s), get --summary {get:.3} ms ({get_wall:.2} s): ratio {:.2}",
            get / floor
        );
        floors.push(floor);
        gets.push(get);
        ratios.push(get / floor);
    }
    println!(
        "{} clusters, medians of {rounds}: floor {:.3} ms CPU a cluster, get --summary {:.3} ms, ratio {:.2}",
        files.len(),
        median(floors),
        median(gets),
        median(ratios)
    );
}
