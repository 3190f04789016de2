//! `fluxfleet mcp --listen` as a team reaches it: the SDK's own client over HTTPS with the bearer
//! token gets the same answers as over stdio, proposals included; a request without the token,
//! with a wrong one, from a foreign `Origin` or larger than allowed is refused with nothing of it
//! read; and a server that cannot start says why.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;

use common::fluxfleet;
use common::mcp::call;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

const TOKEN: &str = "team-token-4f1c9a7e2b8d6053";

/// `fluxfleet mcp --listen 127.0.0.1:0 ARGS` on the fleet of `dir`, over TLS from `tls`, and the
/// URL it says it serves on.
async fn listening(
    dir: &Path,
    tls: &Path,
    data: &Path,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    std::fs::write(tls.join("token"), format!("{TOKEN}\n")).unwrap();
    let mut cmd = fluxfleet();
    cmd.env("FLUXFLEET_DATA_DIR", data)
        .args(["mcp", "--listen", "127.0.0.1:0", "--token-file"])
        .arg(tls.join("token"))
        .arg("--tls-cert")
        .arg(tls.join("server.pem"))
        .arg("--tls-key")
        .arg(tls.join("server.key"))
        .args(extra)
        .arg("--kubeconfig-dir")
        .arg(dir.join("kubeconfigs"));
    common::mcp::serving(cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdks_client_over_https_with_the_token_gets_what_stdio_gets() {
    let sim = common::start().await;
    let dir = sim.dir.path();
    let tls = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ca = common::server_certificate(tls.path());
    let (_server, url) = listening(dir, tls.path(), data.path(), &["--propose"]).await;
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(TOKEN);
    let transport = StreamableHttpClientTransport::with_client(common::mcp::https(&ca), config);
    let client = ().serve(transport).await.expect("a session over HTTPS");
    let summary = call(&client, "fleet_summary", json!({})).await.unwrap();
    let stdio = common::mcp::connect(dir, &[]).await;
    let over_stdio = call(&stdio, "fleet_summary", json!({})).await.unwrap();
    assert_eq!(
        summary["fleet"]["clusters"],
        over_stdio["fleet"]["clusters"]
    );
    let args = json!({ "kind": "ks", "status": "failing" });
    let objects = call(&client, "get_objects", args.clone()).await.unwrap();
    let expected = call(&stdio, "get_objects", args).await.unwrap();
    assert_eq!(objects["objects"], expected["objects"]);
    stdio.cancel().await.unwrap();

    // Read-only but for proposals: a write tool proposes, nothing is sent.
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let before = mutating();
    let proposed = call(
        &client,
        "suspend",
        json!({ "kind": "ks", "name": "apps", "why": "flapping" }),
    )
    .await
    .unwrap();
    let id = proposed["proposal"].as_str().unwrap();
    let status = call(&client, "proposal_status", json!({ "id": id }))
        .await
        .unwrap();
    assert_eq!(status["status"], "pending");
    assert_eq!(mutating(), before);
    let kept = fluxfleet::proposals::Store::at(data.path().join("proposals"))
        .load(id)
        .unwrap();
    // Named by the client's handshake, though each request is served on its own.
    assert!(
        kept.proposed_by.starts_with("mcp:") && kept.proposed_by != "mcp:unnamed",
        "{}",
        kept.proposed_by
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_a_wrong_one_a_foreign_origin_or_too_much_is_refused_unread() {
    let sim = common::start().await;
    let tls = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ca = common::server_certificate(tls.path());
    let extra = [
        "--max-request-size",
        "64KiB",
        "--allow-origin",
        "https://console.example.com:443",
    ];
    let (_server, url) = listening(sim.dir.path(), tls.path(), data.path(), &extra).await;
    let http = common::mcp::https(&ca);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "curl", "version": "1"}}});
    let post = |token: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request
    };
    // With the token: served.
    let served = post(Some(TOKEN)).json(&initialize).send().await.unwrap();
    assert_eq!(served.status(), 200, "{:?}", served.text().await);

    // A body that never comes: refused at once, so nothing of it was waited for.
    let never = || {
        reqwest::Body::wrap_stream(futures::stream::pending::<Result<Vec<u8>, std::io::Error>>())
    };
    for token in [None, Some("team-token-4f1c9a7e2b8d6054"), Some("x")] {
        let refused = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            post(token)
                .header("Content-Length", "100")
                .body(never())
                .send(),
        )
        .await
        .expect("answered without reading the body")
        .unwrap();
        assert_eq!(refused.status(), 401, "{token:?}");
        assert_eq!(
            refused.headers()["www-authenticate"],
            "Bearer realm=\"fluxfleet\""
        );
    }
    // Larger than allowed, announced: refused before it is read.
    let too_large = post(Some(TOKEN))
        .header("Content-Length", (1 << 20).to_string())
        .body(never())
        .send()
        .await
        .unwrap();
    assert_eq!(too_large.status(), 413);
    // Larger than allowed, not announced (chunked): cut off as it streams.
    let big = format!("{{\"pad\": \"{}\"}}", "a".repeat(128 * 1024));
    let chunks = futures::stream::iter(
        big.into_bytes()
            .chunks(8192)
            .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
            .collect::<Vec<_>>(),
    );
    let streamed = post(Some(TOKEN))
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await;
    // Answered 413 — or cut off while still sending, the answer racing the rest of the body.
    if let Ok(answer) = streamed {
        assert_eq!(answer.status(), 413);
    }
    // A page of another site, with the token (stolen, say): refused by its Origin, its body
    // never waited for.
    let foreign = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        post(Some(TOKEN))
            .header("Origin", "https://evil.example.com")
            .header("Content-Length", "100")
            .body(never())
            .send(),
    )
    .await
    .expect("answered without reading the body")
    .unwrap();
    assert_eq!(foreign.status(), 403);
    let allowed = post(Some(TOKEN))
        .header("Origin", "https://console.example.com")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 200);
    // Nothing but /mcp is served there.
    let elsewhere = http
        .get(url.replace("/mcp", "/"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_says_why_and_never_writes() {
    let sim = common::start().await;
    let dir = sim.dir.path();
    let tls = tempfile::tempdir().unwrap();
    let run = |args: Vec<String>| async move {
        let out = fluxfleet()
            .args(&args)
            .arg("--kubeconfig-dir")
            .arg(dir.join("kubeconfigs"))
            .output()
            .await
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    // Over HTTP, writes are proposals only.
    let token = tls.path().join("token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let (code, err) = run(words(&format!(
        "mcp --listen 127.0.0.1:0 --write --token-file {}",
        token.display()
    )))
    .await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--write"), "{err}");
    // No token file, or one with no usable token: said, naming the file, never the token.
    let (code, err) = run(words("mcp --listen 127.0.0.1:0")).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--token-file"), "{err}");
    std::fs::write(&token, "short\n").unwrap();
    let (code, err) = run(words(&format!(
        "mcp --listen 127.0.0.1:0 --token-file {}",
        token.display()
    )))
    .await;
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("holds no usable token") && !err.contains("short"),
        "{err}"
    );
    // A certificate that is not one.
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    std::fs::write(tls.path().join("bad.pem"), "not a certificate").unwrap();
    let (code, err) = run(words(&format!(
        "mcp --listen 127.0.0.1:0 --token-file {} --tls-cert {} --tls-key {}",
        token.display(),
        tls.path().join("bad.pem").display(),
        tls.path().join("bad.pem").display()
    )))
    .await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("TLS") && err.contains("bad.pem"), "{err}");
    assert!(!err.contains(TOKEN));
}

#[test]
fn the_mcp_manifest_is_a_team_server_over_https_acting_as_each_person() {
    let (docs, args) = common::manifest("mcp.yaml", "fluxfleet-mcp-0");
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let cli = fluxfleet::cli::Cli::parse_words(&args).unwrap();
    let Some(fluxfleet::cli::CliCommand::Mcp(mcp)) = cli.command else {
        panic!("{args:?} is not `mcp`");
    };
    // Each person's own token, and each cluster deciding for them: no shared token, and the
    // server writes only as the person asking.
    assert!(mcp.token_file.is_none(), "no shared token");
    assert!(
        mcp.oauth_issuer.is_some() && mcp.oauth_audience.is_some(),
        "an OAuth resource server"
    );
    assert!(mcp.impersonate, "acts as each person");
    assert!(mcp.write != mcp.propose, "writes as them, or proposes");
    assert!(mcp.tls_cert.is_some() && mcp.tls_key.is_some(), "HTTPS");
    assert!(mcp.fleet.bus.nats.is_some(), "the collectors' fleet");
    let port = |name: &str| {
        container["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["containerPort"].as_u64().unwrap() as u16)
    };
    assert_eq!(port("https-mcp"), mcp.listen.map(|a| a.port()));
    assert_eq!(port("healthz"), mcp.probes.health_addr.map(|a| a.port()));
    assert_eq!(
        port("http-metrics"),
        mcp.probes.metrics_addr.map(|a| a.port())
    );
    // The certificate and the kubeconfigs come from mounted Secrets.
    let mounts = container["volumeMounts"].as_array().unwrap();
    let kubeconfigs = mcp.fleet.dirs.first().cloned();
    for file in [
        mcp.tls_cert.unwrap(),
        kubeconfigs.expect("kubeconfigs to act with"),
    ] {
        assert!(
            mounts
                .iter()
                .any(|m| file.starts_with(m["mountPath"].as_str().unwrap())),
            "{file:?} is mounted"
        );
    }
    let service = docs.iter().find(|d| d["kind"] == "Service").unwrap();
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "https-mcp");
}
