//! Attacks on the user's machine through what fluxfleet reads: a management cluster's Secrets,
//! hostile API servers, local files. Each test stages the attack against the simulator or a
//! small hostile server written here, and checks that it does nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::process::Command;

async fn fluxfleet(args: &[&str], envs: &[(&str, &Path)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluxfleet"));
    cmd.env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .args(args)
        .kill_on_drop(true);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().await.unwrap()
}

/// Replaces the kubeconfig in `cluster`'s Secret on the simulated management cluster.
async fn plant(sim: &common::Sim, cluster: &str, workspace: &str, kubeconfig: &str) {
    let client = common::client(&sim.handle.files.management, "management").await;
    let secrets: Api<DynamicObject> = Api::namespaced_with(
        client,
        workspace,
        &ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    let value = base64::engine::general_purpose::STANDARD.encode(kubeconfig);
    secrets
        .patch(
            &format!("{cluster}-kubeconfig"),
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"value": value}})),
        )
        .await
        .unwrap();
}

fn hostile_kubeconfig(server: &str, cluster: &str, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n{cluster}\
         users:\n- name: u\n  user:\n{user}\
         contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
    )
}

/// A cluster's connection phase and error, by name.
fn state(live: &fluxfleet::session::Session, name: &str) -> (fluxfleet::fleet::Phase, String) {
    let c = live.index.cluster_named(name).unwrap();
    let error = c.connection.error.as_deref().unwrap_or_default();
    (c.connection.phase, error.to_string())
}

/// The fleet of one kubeconfig file.
fn load(
    path: std::path::PathBuf,
    config: &fluxfleet::config::Config,
) -> fluxfleet::inventory::Inventory {
    let request = fluxfleet::inventory::Lookup {
        kubeconfigs: vec![path],
        ..Default::default()
    };
    fluxfleet::inventory::load(&request, config)
}

/// A one-cluster simulation and what reaches it: server URL, CA data, admin token.
async fn one_cluster() -> (common::Sim, String, String, String) {
    use secrecy::ExposeSecret;
    let sim = common::start_with(|c| {
        c.clusters = 1;
        c.workspaces = 1;
    })
    .await;
    let fleet = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let cluster = fleet.clusters[0].cluster.as_ref().unwrap();
    let user = fleet.auth_infos[0].auth_info.as_ref().unwrap();
    let server = cluster.server.clone().unwrap();
    let ca = cluster.certificate_authority_data.clone().unwrap();
    let token = user.token.as_ref().unwrap().expose_secret().to_string();
    (sim, server, ca, token)
}

/// A management cluster's Secret cannot run a command on the user's machine, read a local file
/// and send it as a token, or point the connection at a proxy or at plain http.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfigs_from_secrets_are_data_not_instructions() {
    let sim = common::start().await;
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("pwned");
    let local_secret = scratch.path().join("local-secret");
    std::fs::write(&local_secret, "the-users-own-secret\n").unwrap();
    let truth = sim.handle.truth();
    let workloads: Vec<(String, String)> = truth
        .iter()
        .filter(|c| !c.management)
        .map(|c| (c.name.clone(), c.workspace.clone()))
        .collect();
    let real = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let server_of = |name: &str| {
        let ctx = real.contexts.iter().find(|c| c.name == name).unwrap();
        let cluster = &ctx.context.as_ref().unwrap().cluster;
        let c = real.clusters.iter().find(|c| &c.name == cluster).unwrap();
        c.cluster.as_ref().unwrap().server.clone().unwrap()
    };
    let exec = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      \
         args: [\"-c\", \"touch {}; echo '{{\\\"status\\\":{{\\\"token\\\":\\\"x\\\"}}}}'\"]\n",
        marker.display()
    );
    let token_file = format!("    tokenFile: {}\n", local_secret.display());
    let attacks: Vec<(&str, String, String)> = vec![
        ("exec", String::new(), exec),
        ("tokenFile", String::new(), token_file),
        (
            "proxy-url",
            "    proxy-url: http://127.0.0.1:9\n".into(),
            "    token: t\n".into(),
        ),
        (
            "insecure-skip-tls-verify",
            "    insecure-skip-tls-verify: true\n".into(),
            "    token: t\n".into(),
        ),
        ("not https://", String::new(), "    token: t\n".into()),
    ];
    let mut attacked = BTreeMap::new();
    for ((name, workspace), (what, cluster, user)) in workloads.iter().zip(&attacks) {
        let server = if *what == "not https://" {
            server_of(name).replacen("https://", "http://", 1)
        } else {
            server_of(name)
        };
        plant(
            &sim,
            name,
            workspace,
            &hostile_kubeconfig(&server, cluster, user),
        )
        .await;
        attacked.insert(name.clone(), *what);
    }
    let management = sim.handle.files.management.display().to_string();
    let out = fluxfleet(
        &[
            "get",
            "--summary",
            "-o",
            "json",
            "--timeout",
            "20s",
            "--kubeconfig",
            &management,
            "--management",
            "management",
        ],
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!marker.exists(), "the Secret's exec plugin ran: {stderr}");
    assert!(!stdout.contains("the-users-own-secret") && !stderr.contains("the-users-own-secret"));
    assert_eq!(
        out.status.code(),
        Some(3),
        "refusals are problems: {stderr}"
    );
    for (name, what) in &attacked {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("context \"{name}\"")))
            .unwrap_or_else(|| panic!("{name} ({what}) is refused: {stderr}"));
        assert!(line.contains(what), "{line}");
        assert!(
            line.contains("a kubeconfig from another cluster may hold only"),
            "{line}"
        );
    }
    // The simulator never saw the local file's contents as a bearer token: the refused clusters
    // were never contacted, and the rest of the fleet is live.
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let live: Vec<&str> = doc["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["state"] == "live")
        .map(|c| c["cluster"].as_str().unwrap())
        .collect();
    assert_eq!(live.len(), workloads.len() - attacked.len() + 1, "{live:?}");
    for name in attacked.keys() {
        assert!(!live.contains(&name.as_str()));
    }
    sim.handle.shutdown().await;
}

fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A process that is gone or a zombie waiting for its parent.
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Exec plugins are bounded: their output is capped, a hung one is killed with everything it
/// started once `exec_timeout` (not `connect_timeout`) has passed, and what they print on stderr
/// never shows a credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_plugins_are_capped_killed_with_their_group_and_their_stderr_redacted() {
    use fluxfleet::config::Config;
    use fluxfleet::fleet::Phase;
    use fluxfleet::session::Session;
    use std::time::Duration;

    let (sim, server, ca, token) = one_cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let credential = format!(
        "printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'"
    );
    let pidfile = dir.path().join("grandchild");
    let plugins = [
        (
            "huge",
            script(dir.path(), "huge", "exec head -c 50000000 /dev/zero"),
        ),
        (
            "slow",
            script(dir.path(), "slow", &format!("sleep 2\n{credential}")),
        ),
        (
            "hung",
            script(
                dir.path(),
                "hung",
                &format!("sleep 300 &\necho $! > {}\nwait", pidfile.display()),
            ),
        ),
        (
            "leaky",
            script(
                dir.path(),
                "leaky",
                "echo 'refresh_token=eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXJlZnJlc2g.abcdefghijklmnop has expired; run corp login' >&2\nexit 1",
            ),
        ),
    ];
    let mut kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    \
         certificate-authority-data: {ca}\nusers:\n"
    );
    for (name, path) in &plugins {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n",
            path.display()
        ));
    }
    kubeconfig.push_str("contexts:\n");
    for (name, _) in &plugins {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  context: {{cluster: c, user: {name}}}\n"
        ));
    }
    let path = dir.path().join("plugins.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let mut config = Config::defaults();
    config.engine.connect_timeout = Duration::from_secs(1);
    config.engine.exec_timeout = Duration::from_secs(6);
    let inv = load(path, &config);
    assert_eq!(inv.problems, []);
    let mut live = Session::kube(&inv, &config.engine);
    live.settle(Duration::from_secs(30)).await;
    let state = |name: &str| state(&live, name);
    let (phase, error) = state("huge");
    assert_eq!(phase, Phase::Unauthorized, "{error}");
    assert!(error.contains("larger than 1024 KiB"), "{error}");
    // Slower than connect_timeout, well within exec_timeout: it is waited for.
    assert_eq!(state("slow").0, Phase::Live, "{:?}", state("slow"));
    let (phase, error) = state("hung");
    assert_eq!(phase, Phase::Unauthorized, "{error}");
    assert!(error.contains("within 6s"), "{error}");
    let grandchild = std::fs::read_to_string(&pidfile).unwrap();
    common::eventually("the plugin's own child is killed too", || {
        let gone = dead(grandchild.trim());
        async move { gone }
    })
    .await;
    let (phase, error) = state("leaky");
    assert_eq!(phase, Phase::Unauthorized);
    assert!(error.contains("has expired; run corp login"), "{error}");
    assert!(
        !error.contains("eyJhbGci") && !error.contains("abcdefghijklmnop"),
        "{error}"
    );
    live.shutdown().await;
    sim.handle.shutdown().await;
}

/// A malformed kubeconfig is reported by line, column and kind of error — never with the lines
/// around the error, which hold tokens and keys.
#[tokio::test]
async fn kubeconfig_parse_errors_never_quote_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://x:6443}\n\
         users:\n- name: u\n  user:\n    token: sup3r-s3cret-t0ken\n    client-key-data: S0VZLURBVEE=\n   \
         bad: indent\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n",
    )
    .unwrap();
    let typed = dir.path().join("typed.yaml");
    std::fs::write(
        &typed,
        "apiVersion: v1\nclusters:\n- name: c\n  cluster: {server: https://x, insecure-skip-tls-verify: \"sup3r-s3cret-t0ken\"}\n",
    )
    .unwrap();
    for file in [&bad, &typed] {
        let file = file.display().to_string();
        for format in ["table", "json"] {
            let out = fluxfleet(&["inventory", "-o", format, "--kubeconfig", &file], &[]).await;
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.status.code(), Some(3), "{all}");
            assert!(all.contains("not a valid kubeconfig"), "{all}");
            assert!(all.contains("line "), "says where: {all}");
            for secret in ["sup3r", "S0VZ", "token:", "client-key-data"] {
                assert!(!all.contains(secret), "{secret} leaked: {all}");
            }
        }
    }
}

/// A small hostile API server: Flux's Kustomization kind, and per path prefix one way of
/// misbehaving.
mod hostile {
    use std::convert::Infallible;

    use bytes::Bytes;
    use futures::StreamExt;
    use http_body_util::{BodyExt, StreamBody, combinators::BoxBody};
    use hyper::body::Frame;
    use serde_json::json;

    type Body = BoxBody<Bytes, Infallible>;

    fn body(bytes: impl Into<Bytes>) -> Body {
        http_body_util::Full::new(bytes.into()).boxed()
    }

    fn streamed(s: impl futures::Stream<Item = Bytes> + Send + Sync + 'static) -> Body {
        BodyExt::boxed(StreamBody::new(
            s.map(|b| Ok::<_, Infallible>(Frame::data(b))),
        ))
    }

    fn kustomization(name: &str, message: &str) -> serde_json::Value {
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": name, "namespace": "flux-system", "generation": 1,
                "resourceVersion": "1"},
            "status": {"observedGeneration": 1, "conditions": [{"type": "Ready",
                "status": "False", "reason": "BuildFailed", "message": message}]}})
    }

    fn page(items: usize, continue_token: Option<&str>) -> Bytes {
        let message = "m".repeat(100_000);
        let items: Vec<_> = (0..items)
            .map(|i| kustomization(&format!("ks-{i}"), &message))
            .collect();
        let mut meta = json!({"resourceVersion": "1"});
        if let Some(c) = continue_token {
            meta["continue"] = json!(c);
        }
        Bytes::from(
            json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "KustomizationList",
                "metadata": meta, "items": items})
            .to_string(),
        )
    }

    async fn answer(
        request: hyper::Request<hyper::body::Incoming>,
    ) -> Result<hyper::Response<Body>, Infallible> {
        let path = request.uri().path().to_string();
        let query = request.uri().query().unwrap_or_default().to_string();
        let (mode, rest) = path[1..].split_once('/').unwrap_or((&path[1..], ""));
        let rest = format!("/{rest}");
        let group = "kustomize.toolkit.fluxcd.io";
        let reply = match rest.as_str() {
            "/apis" => body(
                json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{"name": group,
                    "versions": [{"groupVersion": format!("{group}/v1"), "version": "v1"}],
                    "preferredVersion": {"groupVersion": format!("{group}/v1"), "version": "v1"}}]})
                .to_string(),
            ),
            "/apis/kustomize.toolkit.fluxcd.io/v1" => body(
                json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{group}/v1"),
                    "resources": [{"name": "kustomizations", "singularName": "kustomization",
                        "namespaced": true, "kind": "Kustomization", "verbs": ["list", "watch"]}]})
                .to_string(),
            ),
            "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations" => {
                let watching = query.contains("watch=true");
                // The list attacks are made on paged lists: asked for a streaming list, these
                // servers refuse it as a Kubernetes before 1.27 does. The flood streams.
                if query.contains("sendInitialEvents=true") && mode != "flood" {
                    return Ok(hyper::Response::builder()
                        .status(422)
                        .header("content-type", "application/json")
                        .body(body(r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422}"#))
                        .unwrap());
                }
                match (mode, watching) {
                    // The same page again and again, with a continue token that never ends.
                    ("endless", _) => body(page(100, Some("more"))),
                    // One answer larger than anything a cluster sends.
                    ("huge", _) => streamed(
                        futures::stream::repeat(Bytes::from(vec![b' '; 1 << 20])).take(80),
                    ),
                    ("wordy", false) => body(page(100, None)),
                    ("flood", false) => body(page(0, None)),
                    // A new object every line, forever (as a streaming list's initial events, or
                    // a watch's changes).
                    ("flood", true) => streamed(futures::stream::iter(0..).map(|i| {
                        let event = json!({"type": "ADDED",
                            "object": kustomization(&format!("flood-{i}"), "x")});
                        Bytes::from(format!("{event}\n"))
                    })),
                    // A watch that stays open and quiet.
                    (_, true) => streamed(futures::stream::pending()),
                    _ => body("{}"),
                }
            }
            _ => {
                return Ok(hyper::Response::builder()
                    .status(404)
                    .body(body("{}"))
                    .unwrap());
            }
        };
        Ok(hyper::Response::builder()
            .header("content-type", "application/json")
            .body(reply)
            .unwrap())
    }

    /// Serves until the test ends; returns its address.
    pub async fn start() -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, hyper::service::service_fn(answer))
                        .await;
                });
            }
        });
        addr
    }
}

/// One hostile API server cannot exhaust memory for the fleet: an endless list, an oversized
/// answer and an endless stream of new objects are that cluster's errors, and the texts kept
/// from objects are bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_api_server_is_bounded_and_only_its_own_error() {
    use fluxfleet::config::Config;
    use fluxfleet::fleet::{FluxKind, Phase};
    use fluxfleet::session::Session;
    use std::time::Duration;

    let addr = hostile::start().await;
    let dir = tempfile::tempdir().unwrap();
    let modes = ["endless", "huge", "wordy", "flood"];
    let mut kubeconfig = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for m in modes {
        kubeconfig.push_str(&format!(
            "- name: {m}\n  cluster: {{server: \"http://{addr}/{m}\"}}\n"
        ));
    }
    kubeconfig.push_str("contexts:\n");
    for m in modes {
        kubeconfig.push_str(&format!("- name: {m}\n  context: {{cluster: {m}}}\n"));
    }
    let path = dir.path().join("hostile.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let mut config = Config::defaults();
    config.engine.kinds = vec![FluxKind::Kustomization];
    config.engine.max_objects = 1000;
    let inv = load(path, &config);
    let mut live = Session::kube(&inv, &config.engine);
    live.settle(Duration::from_secs(60)).await;
    let cluster = |name: &str| live.index.cluster_named(name).unwrap();
    let error = |name: &str| state(&live, name);
    let (phase, e) = error("endless");
    assert_eq!(phase, Phase::ServerError, "{e}");
    assert!(
        e.contains("more than 1000 objects of kind Kustomization"),
        "{e}"
    );
    assert!(cluster("endless").objects.is_empty());
    let (phase, e) = error("huge");
    assert_eq!(phase, Phase::ServerError, "{e}");
    assert!(e.contains("larger than 64 MiB"), "{e}");
    // Well-formed objects with 100 KB messages: seen, with the messages cut.
    let wordy = cluster("wordy");
    assert_eq!(wordy.connection.phase, Phase::Live);
    assert_eq!(wordy.objects.len(), 100);
    for s in wordy.objects.values() {
        assert!(s.message.as_deref().unwrap().chars().count() <= 2048);
    }
    // The flood arrives once its watch is open: applied as it comes, until it is refused.
    let flooded = |live: &Session| {
        live.index
            .cluster_named("flood")
            .unwrap()
            .connection
            .error
            .as_deref()
            .is_some_and(|e| e.contains("more than 1000 objects"))
    };
    for _ in 0..150 {
        if flooded(&live) {
            break;
        }
        live.pump(Duration::from_millis(200)).await;
    }
    assert!(
        flooded(&live),
        "{:?}",
        live.index.cluster_named("flood").unwrap().connection
    );
    live.shutdown().await;
}

/// The journal records the intent before anything is sent: with the journal unwritable nothing
/// is sent, and an interrupted reconcile leaves its intent behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_write_without_its_audit_record() {
    let sim =
        common::start_with(|c| c.reconcile_delay = std::time::Duration::from_secs(3600)).await;
    let fleet = sim.dir.path().join("kubeconfigs").display().to_string();
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    // A data directory that cannot be created, even by root: its parent is a file.
    let blocker = scratch.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let unwritable = blocker.join("fluxfleet");
    let before = mutating();
    let args = [
        "suspend",
        "kustomization",
        "--all",
        "--write",
        "--yes",
        "--kubeconfig-dir",
        &fleet,
    ];
    let out = fluxfleet(&args, &[("FLUXFLEET_DATA_DIR", &unwritable)]).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write the audit journal"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("not sent"));
    assert_eq!(mutating(), before, "nothing was sent");

    // A reconcile the controller will not handle for an hour, interrupted once it has sent.
    let data = scratch.path().join("data");
    let cluster = sim.handle.cluster_names()[0].clone();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env("FLUXFLEET_DATA_DIR", &data)
        .env("HOME", "/nonexistent-home")
        .env_remove("KUBECONFIG")
        .args([
            "reconcile",
            "gitrepository",
            "--write",
            "--yes",
            "--timeout",
            "10m",
        ])
        .args(["--cluster", &cluster, "--kubeconfig-dir", &fleet])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let sent = before;
    common::eventually("the reconcile request reaches the cluster", || {
        let now = mutating();
        async move { now > sent }
    })
    .await;
    child.kill().await.unwrap();
    let journal = std::fs::read_to_string(data.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "the intent alone: {journal}");
    assert_eq!(lines[0]["stage"], "intent");
    assert_eq!(lines[0]["action"], "reconcile");
    assert_eq!(lines[0]["targets"][0]["cluster"], cluster.as_str());
    assert_eq!(lines[0]["targets"][0]["outcome"], "intended");
    sim.handle.shutdown().await;
}

/// `demo` serves from a fresh private directory, never from one another local user prepared,
/// and writes its tokens without following a planted symlink.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_directory_is_fresh_private_and_never_follows_a_planted_symlink() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let tmp = tempfile::tempdir().unwrap();
    // What another user could prepare on main: the name the demo would pick, with a kubeconfig
    // inside.
    let planted = tmp
        .path()
        .join(format!("fluxfleet-demo-{}", std::process::id() + 1));
    std::fs::create_dir(&planted).unwrap();
    std::fs::write(planted.join("fleet.kubeconfig"), "planted").unwrap();
    let a = fluxfleet_sim::private_dir(tmp.path(), "fluxfleet-demo-").unwrap();
    let b = fluxfleet_sim::private_dir(tmp.path(), "fluxfleet-demo-").unwrap();
    assert_ne!(a.path(), b.path());
    for d in [&a, &b] {
        assert_ne!(d.path(), planted);
        let meta = std::fs::symlink_metadata(d.path()).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "empty, not reused"
        );
    }
    let gone = a.path().to_path_buf();
    drop(a);
    assert!(!gone.exists(), "removed when done");

    // A symlink where the simulator writes its tokens: replaced, not followed.
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "do not overwrite").unwrap();
    let out = b.path().to_path_buf();
    std::os::unix::fs::symlink(&victim, out.join("fleet.kubeconfig")).unwrap();
    std::fs::write(out.join("sim-token"), "old").unwrap();
    std::fs::set_permissions(
        out.join("sim-token"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let handle = fluxfleet_sim::start(fluxfleet_sim::Config {
        clusters: 2,
        workspaces: 1,
        objects: 3,
        out: out.clone(),
        ..fluxfleet_sim::Config::default()
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "do not overwrite"
    );
    for file in ["fleet.kubeconfig", "sim-token"] {
        let meta = std::fs::symlink_metadata(out.join(file)).unwrap();
        assert!(meta.is_file(), "{file} is a regular file");
        assert_eq!(meta.mode() & 0o777, 0o600, "{file}");
    }
    handle.shutdown().await;
}

/// Control sequences a server puts in a message (an OSC 52 clipboard write, a title change, a
/// C1 CSI, a bidi override) reach no terminal from a headless output; JSON still means the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_sequences_from_servers_never_reach_the_terminal() {
    let sim = common::start().await;
    let (cluster, client) = common::first_cluster(&sim).await;
    let truth = sim.handle.truth();
    let object = truth
        .iter()
        .find(|c| c.name == cluster)
        .unwrap()
        .objects
        .iter()
        .find(|o| o.kind == "Kustomization")
        .unwrap()
        .clone();
    let hostile =
        "pwned \u{1b}]52;c;ZXZpbA==\u{7} \u{1b}]0;title\u{7} \u{9b}31m \u{202e}txt.exe\u{7f}";
    let api = common::api(&client, &common::kustomizations(), Some(&object.namespace));
    api.patch_status(
        &object.name,
        &PatchParams::default(),
        &Patch::Merge(
            json!({"status": {"conditions": [{"type": "Ready", "status": "False",
            "reason": "Evil\u{1b}[2J", "message": hostile,
            "lastTransitionTime": "2026-11-21T10:00:00Z"}]}}),
        ),
    )
    .await
    .unwrap();
    let fleet = sim.dir.path().join("kubeconfigs").display().to_string();
    let raw = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let bad = text
            .chars()
            .find(|c| (c.is_control() && *c != '\n') || ('\u{202a}'..='\u{202e}').contains(c));
        (text, bad)
    };
    for format in ["table", "json", "ndjson"] {
        let out = fluxfleet(
            &[
                "get",
                "ks",
                &object.name,
                "-o",
                format,
                "--cluster",
                &cluster,
                "--kubeconfig-dir",
                &fleet,
            ],
            &[],
        )
        .await;
        let (stdout, bad) = raw(&out.stdout);
        assert_eq!(bad, None, "{format}: {stdout:?}");
        assert!(stdout.contains("pwned"), "{format}: {stdout}");
        let (stderr, bad) = raw(&out.stderr);
        assert_eq!(bad, None, "{format}: {stderr:?}");
        if format == "json" {
            // Escaped, not altered: a script reads the server's message exactly.
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(doc["objects"][0]["message"], hostile);
        }
        if format == "table" {
            assert!(stdout.contains("\\u{1b}]52;c;"), "{stdout}");
        }
    }
    sim.handle.shutdown().await;
}

/// The management cluster cannot move a cluster out of a deny rule or into write mode by
/// relabelling it; deny rules read kinds as Flux does (`ks`), in any case.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guardrails_of_discovered_clusters_follow_where_they_come_from() {
    let sim = common::start().await;
    let truth = sim.handle.truth();
    let target = truth.iter().find(|c| !c.management).unwrap();
    let (cluster, namespace) = (target.name.clone(), target.workspace.clone());
    let client = common::client(&sim.handle.files.management, "management").await;
    let clusters: Api<DynamicObject> = Api::namespaced_with(
        client,
        &namespace,
        &common::resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters"),
    );
    // The management cluster's admin relabels the Cluster into the "dev" workspace.
    clusters
        .patch(
            &cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "dev"}}})),
        )
        .await
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let management = sim.handle.files.management.display().to_string();
    let data = scratch.path().join("data");
    // `suspend ks` on the relabelled cluster with `config`; exit code, stdout, stderr.
    let attempt = async |config: &str, write: bool| {
        let path = scratch.path().join(format!("{}.toml", config.len()));
        std::fs::write(&path, config).unwrap();
        let path = path.display().to_string();
        let mut args = vec!["suspend", "ks", "--yes", "--cluster", &cluster];
        if write {
            args.push("--write");
        }
        args.extend(["--kubeconfig", &management, "--management", "management"]);
        args.extend(["--workspace-label", "team", "--config", &path]);
        let out = fluxfleet(&args, &[("FLUXFLEET_DATA_DIR", &data)]).await;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let before = mutating();
    // A deny rule for its namespace's workspace, kind written as a short name in lower case.
    let deny = format!(
        "[[actions.deny]]\nworkspace = {:?}\nkind = \"ks\"\n",
        namespace.to_uppercase()
    );
    let (_, stdout, _) = attempt(&deny, true).await;
    assert!(
        stdout.contains(" dev "),
        "shown in the label's workspace: {stdout}"
    );
    assert!(stdout.contains("denied by actions.deny[0]"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("done")), "{stdout}");
    assert_eq!(mutating(), before);
    // Each refuses before anything is sent (exit 2), saying why:
    let refusals = [
        // a write rule for the "dev" workspace does not reach a cluster a label put there;
        (
            "[[modes]]\nworkspace = \"dev\"\nmode = \"write\"\n",
            false,
            "read-only: nothing can suspend",
        ),
        // a deny rule naming no Flux kind refuses every write, even with --write;
        (
            "[[actions.deny]]\nkind = \"Kustomisation\"\n",
            true,
            "\"Kustomisation\" is not a Flux kind",
        ),
        // a mistyped key beside a deny rule: the rule is not lost, and nothing is written.
        (
            "[actions]\nconfirm_abve = 3\n[[actions.deny]]\nnamespace = \"nowhere\"\n",
            true,
            "line 2: actions.confirm_abve",
        ),
    ];
    for (config, write, why) in refusals {
        let (code, _, stderr) = attempt(config, write).await;
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(why), "{why} in {stderr}");
        assert_eq!(mutating(), before);
    }
    // Named by where it comes from, write mode does reach it.
    let origin = format!("[[modes]]\norigin = \"management/{namespace}\"\nmode = \"write\"\n");
    let (_, stdout, _) = attempt(&origin, false).await;
    assert!(stdout.lines().any(|l| l.starts_with("done")), "{stdout}");
    assert!(mutating() > before);
    sim.handle.shutdown().await;
}

/// A proxy that records what reaches it: the SOCKS5 request or the CONNECT head, then relays.
mod proxies {
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    pub type Seen = Arc<Mutex<Vec<String>>>;

    /// Listens on a free port and hands every connection, with the log, to `handle`.
    async fn serve<F, Fut>(handle: F) -> (String, Seen)
    where
        F: Fn(TcpStream, Seen) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Option<()>> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen: Seen = Arc::default();
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((c, _)) = listener.accept().await {
                tokio::spawn(handle(c, log.clone()));
            }
        });
        (addr, seen)
    }

    async fn string(c: &mut TcpStream) -> Option<String> {
        let mut n = [0u8; 1];
        c.read_exact(&mut n).await.ok()?;
        let mut v = vec![0u8; n[0] as usize];
        c.read_exact(&mut v).await.ok()?;
        Some(String::from_utf8_lossy(&v).into_owned())
    }

    /// SOCKS5 with user/password authentication (RFC 1928, 1929).
    pub async fn socks5() -> (String, Seen) {
        serve(|mut c, log| async move {
            let mut head = [0u8; 2];
            c.read_exact(&mut head).await.ok()?;
            let mut methods = vec![0u8; head[1] as usize];
            c.read_exact(&mut methods).await.ok()?;
            if !methods.contains(&2) {
                log.lock().unwrap().push("no user/password offered".into());
                c.write_all(&[5, 0xff]).await.ok()?;
                return None;
            }
            c.write_all(&[5, 2]).await.ok()?;
            let mut ver = [0u8; 1];
            c.read_exact(&mut ver).await.ok()?;
            let user = string(&mut c).await?;
            let pass = string(&mut c).await?;
            c.write_all(&[1, 0]).await.ok()?;
            let mut req = [0u8; 4];
            c.read_exact(&mut req).await.ok()?;
            let host = match req[3] {
                3 => string(&mut c).await?,
                1 => {
                    let mut ip = [0u8; 4];
                    c.read_exact(&mut ip).await.ok()?;
                    format!("ip:{}", std::net::Ipv4Addr::from(ip))
                }
                _ => return None,
            };
            let mut port = [0u8; 2];
            c.read_exact(&mut port).await.ok()?;
            let port = u16::from_be_bytes(port);
            log.lock()
                .unwrap()
                .push(format!("{user}:{pass}@{host}:{port}"));
            let target = format!("{}:{port}", host.trim_start_matches("ip:"));
            let mut up = TcpStream::connect(target).await.ok()?;
            c.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await.ok()?;
            let _ = tokio::io::copy_bidirectional(&mut c, &mut up).await;
            Some(())
        })
        .await
    }

    /// HTTP CONNECT, recording the Proxy-Authorization header.
    pub async fn connect() -> (String, Seen) {
        serve(|mut c, log| async move {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                c.read_exact(&mut byte).await.ok()?;
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let auth = head
                .lines()
                .find_map(|l| {
                    l.strip_prefix("proxy-authorization: ")
                        .or_else(|| l.strip_prefix("Proxy-Authorization: "))
                })
                .unwrap_or("none")
                .to_string();
            log.lock().unwrap().push(auth);
            let target = head.split_whitespace().nth(1)?.to_string();
            let mut up = TcpStream::connect(target).await.ok()?;
            c.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .ok()?;
            let _ = tokio::io::copy_bidirectional(&mut c, &mut up).await;
            Some(())
        })
        .await
    }

    /// Counts connections and never answers: whatever a client sends it in clear text is seen.
    pub async fn silent() -> (String, Seen) {
        serve(|mut c, log| async move {
            let mut buf = vec![0u8; 4096];
            let n = c.read(&mut buf).await.unwrap_or(0);
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            Some(())
        })
        .await
    }
}

/// Proxies as kubectl users write them: `socks5h://` is SOCKS5 with the name resolved by the
/// proxy, credentials in the URL reach the proxy, an `https://` proxy is refused rather than
/// spoken to in clear text; an `http://` server with a token is a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_get_what_the_url_says_and_nothing_in_clear_text() {
    use fluxfleet::config::Config;
    use fluxfleet::fleet::Phase;
    use fluxfleet::session::Session;
    use std::time::Duration;

    let (sim, server, ca, token) = one_cluster().await;
    // By name, so that a SOCKS5 proxy that resolves names is asked for the name.
    let server = server.replace("127.0.0.1", "localhost");
    let (socks, socks_seen) = proxies::socks5().await;
    let (connect, connect_seen) = proxies::connect().await;
    let (silent, silent_seen) = proxies::silent().await;
    let proxied = [
        ("socks", format!("socks5h://bob:p%40ss@{socks}")),
        ("connect", format!("http://alice:s3cret@{connect}")),
        ("tls-proxy", format!("https://carol:hunter2@{silent}")),
    ];
    let mut kubeconfig = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, proxy) in &proxied {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n    proxy-url: {proxy}\n"
        ));
    }
    kubeconfig.push_str(&format!(
        "users:\n- name: u\n  user:\n    token: {token}\ncontexts:\n"
    ));
    for (name, _) in &proxied {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  context: {{cluster: {name}, user: u}}\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proxied.kubeconfig");
    std::fs::write(&path, &kubeconfig).unwrap();
    let config = Config::defaults();
    let inv = load(path, &config);
    assert_eq!(inv.problems, []);
    let mut live = Session::kube(&inv, &config.engine);
    live.settle(Duration::from_secs(20)).await;
    let state = |name: &str| state(&live, name);
    assert_eq!(state("socks").0, Phase::Live, "{:?}", state("socks"));
    let seen = socks_seen.lock().unwrap().clone();
    assert!(
        !seen.is_empty() && seen.iter().all(|s| s.starts_with("bob:p@ss@localhost:")),
        "{seen:?}"
    );
    assert_eq!(state("connect").0, Phase::Live, "{:?}", state("connect"));
    let seen = connect_seen.lock().unwrap().clone();
    use base64::Engine as _;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("alice:s3cret")
    );
    assert!(
        !seen.is_empty() && seen.iter().all(|s| *s == basic),
        "{seen:?}"
    );
    let (phase, error) = state("tls-proxy");
    assert_eq!(phase, Phase::Invalid, "{error}");
    assert!(error.contains("https:// proxy is not supported"), "{error}");
    assert!(!error.contains("hunter2"));
    assert_eq!(
        *silent_seen.lock().unwrap(),
        Vec::<String>::new(),
        "nothing sent to it"
    );
    live.shutdown().await;

    // An http:// server with a token: used, with a warning on stderr (not an inventory problem).
    let plain = dir.path().join("plain.kubeconfig");
    std::fs::write(
        &plain,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:1\"}}\n\
                 users:\n- name: u\n  user: {{token: {token}}}\ncontexts:\n- name: plain\n  context: {{cluster: c, user: u}}\n"),
    )
    .unwrap();
    let out = fluxfleet(
        &["inventory", "--kubeconfig", &plain.display().to_string()],
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("is http://: its credentials are sent in clear text"),
        "{stderr}"
    );
    assert!(!stderr.contains(&token));
    sim.handle.shutdown().await;
}
