//! API servers that attack: a small hostile server whose endless lists, oversized answers and
//! floods stay its own bounded errors, and control sequences in a server's messages that never
//! reach the terminal.

use crate::common;

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use super::{fluxfleet, load, state};

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
