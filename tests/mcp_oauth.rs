//! `fluxfleet mcp --listen --oauth-issuer …` as a team's server: an OAuth 2.1 resource server
//! (the MCP specification's authorization) against a real OpenID provider (panva's
//! `oidc-provider`, `tests/common/oidc.rs`). A client without a token is told where to get one
//! (401, `WWW-Authenticate: Bearer resource_metadata=…`, RFC 9728 metadata); each person's own
//! token is taken, and proposals name them; a token expired, for another audience, from another
//! issuer, badly signed or without the scope is refused (401 / 403) with nothing done; keys the
//! provider rotates in are picked up. Limits count each person, not the address they share; the
//! MCP Python SDK finds its way to a token. Acting as each person: `tests/mcp_impersonate.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::fluxfleet;
use common::mcp::call;
use common::oidc::{AUDIENCE, Provider, Team, listening, session, team};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_persons_token_is_taken_and_every_other_token_is_refused() {
    let sim = common::start().await;
    let mut provider = Provider::start(AUDIENCE).await;
    // Tokens that live a second, for the expired one: minted first, refused after.
    let short = Provider::start_with_ttl(AUDIENCE, 1).await;
    let tls = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ca = common::server_certificate(tls.path());
    let (_server, url) = listening(
        sim.dir.path(),
        tls.path(),
        data.path(),
        &provider.issuer,
        &["--propose", "--max-pending-proposals", "1"],
    )
    .await;
    let http = common::mcp::https(&ca);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "curl", "version": "1"}}});
    let post = |token: &str, body: &Value| common::mcp::post(&http, &url, token, body).send();

    // Without a token: 401, and where to learn how to get one.
    let refused = http
        .post(&url)
        .header("Content-Type", "application/json")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let metadata = "https://fluxfleet.test/.well-known/oauth-protected-resource/mcp";
    assert_eq!(
        refused.headers()["www-authenticate"],
        format!("Bearer resource_metadata=\"{metadata}\", scope=\"fluxfleet:read\"").as_str()
    );
    let served = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    let document: Value = http
        .get(&served)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(document["resource"], AUDIENCE);
    assert_eq!(document["authorization_servers"], json!([provider.issuer]));
    assert_eq!(
        document["scopes_supported"],
        json!(["fluxfleet:read", "fluxfleet:propose", "fluxfleet:write"])
    );

    // Alice's own token: her calls are served, and her proposal names her.
    let alice = provider
        .token("alice", "fluxfleet:read fluxfleet:propose", None)
        .await;
    let session = session(&url, &ca, &alice).await;
    let summary = call(&session, "fleet_summary", json!({})).await.unwrap();
    assert!(
        summary["fleet"]["clusters"].as_u64().unwrap() > 0,
        "{summary}"
    );
    let proposed = call(
        &session,
        "suspend",
        json!({ "kind": "ks", "name": "apps", "why": "flapping" }),
    )
    .await
    .unwrap();
    let id = proposed["proposal"].as_str().unwrap();
    let kept = fluxfleet::proposals::Store::at(data.path().join("proposals"))
        .load(id)
        .unwrap();
    assert_eq!(kept.user, "alice");
    // One pending proposal a person here: Alice's second waits for a decision, Bob's own goes.
    let refused = call(&session, "suspend", json!({ "kind": "ks", "name": "apps" }))
        .await
        .unwrap_err();
    assert!(
        refused.contains("alice has 1 proposals pending")
            && refused.contains("nothing was proposed"),
        "{refused}"
    );
    session.cancel().await.unwrap();
    let bob = provider
        .token("bob", "fluxfleet:read fluxfleet:propose", None)
        .await;
    let session = common::oidc::session(&url, &ca, &bob).await;
    let proposed = call(&session, "suspend", json!({ "kind": "ks", "name": "apps" }))
        .await
        .unwrap();
    assert!(proposed["proposal"].is_string(), "{proposed}");
    session.cancel().await.unwrap();

    // Each refused with what is wrong, and nothing of it done.
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let before = mutating();
    let expect = |answer: reqwest::Response, status: u16, error: &str, said: &str| {
        assert_eq!(answer.status(), status, "{said}");
        let challenge = answer.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            challenge.starts_with(&format!("Bearer resource_metadata=\"{metadata}\""))
                && challenge.contains(&format!("error=\"{error}\""))
                && challenge.contains(said),
            "{challenge}"
        );
    };
    let elsewhere = provider
        .token("bob", "fluxfleet:read", Some("https://other.test/mcp"))
        .await;
    expect(
        post(&elsewhere, &initialize).await.unwrap(),
        401,
        "invalid_token",
        "for another resource",
    );
    // One character of the signature changed (not its last, whose spare bits base64 ignores).
    let mut forged = alice.clone().into_bytes();
    let at = forged.len() - 10;
    forged[at] = if forged[at] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    expect(
        post(&forged, &initialize).await.unwrap(),
        401,
        "invalid_token",
        "signature does not verify",
    );
    let unscoped = provider.token("bob", "", None).await;
    let answer = post(&unscoped, &initialize).await.unwrap();
    assert!(
        answer.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("scope=\"fluxfleet:read\""),
        "{:?}",
        answer.headers()
    );
    expect(answer, 403, "insufficient_scope", "lacks fluxfleet:read");
    // Reading is not proposing: the tool that proposes needs its scope.
    let reader = provider.token("bob", "fluxfleet:read", None).await;
    let suspend = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "suspend", "arguments": {"kind": "ks", "name": "apps"}}});
    expect(
        post(&reader, &suspend).await.unwrap(),
        403,
        "insufficient_scope",
        "lacks fluxfleet:propose",
    );
    let served = post(&reader, &initialize).await.unwrap();
    assert_eq!(served.status(), 200);
    // A page of another site with a good token (stolen, say): refused by its Origin, its body
    // never waited for.
    let never =
        reqwest::Body::wrap_stream(futures::stream::pending::<Result<Vec<u8>, std::io::Error>>());
    let foreign = tokio::time::timeout(
        Duration::from_secs(20),
        http.post(&url)
            .bearer_auth(&reader)
            .header("Origin", "https://evil.example.com")
            .header("Content-Length", "100")
            .body(never)
            .send(),
    )
    .await
    .expect("answered without reading the body")
    .unwrap();
    assert_eq!(foreign.status(), 403);

    // Keys rotated at the provider: a token signed with the new key is taken (the set fetched
    // again), one signed with the key no longer published is not.
    let old_kid = provider.jwks().await["keys"][0]["kid"].clone();
    provider.rotate().await;
    assert_ne!(provider.jwks().await["keys"][0]["kid"], old_kid);
    let fresh = provider.token("alice", "fluxfleet:read", None).await;
    assert_eq!(post(&fresh, &initialize).await.unwrap().status(), 200);
    expect(
        post(&alice, &initialize).await.unwrap(),
        401,
        "invalid_token",
        "names a key the issuer does not publish",
    );

    // Another issuer's token, for this very audience: its key is not this issuer's.
    let stranger = Provider::start(AUDIENCE).await;
    let foreign = stranger.token("alice", "fluxfleet:read", None).await;
    expect(
        post(&foreign, &initialize).await.unwrap(),
        401,
        "invalid_token",
        "names a key the issuer does not publish",
    );

    // Expired: a token that lived a second, refused once its second and the 5 s leeway are
    // over (its own issuer's server, so that only its age is wrong).
    let (_short_server, short_url) =
        listening(sim.dir.path(), tls.path(), data.path(), &short.issuer, &[]).await;
    let minted = Instant::now();
    let brief = short.token("alice", "fluxfleet:read", None).await;
    tokio::time::sleep(Duration::from_secs(7).saturating_sub(minted.elapsed())).await;
    let answer = http
        .post(&short_url)
        .header("Content-Type", "application/json")
        .bearer_auth(&brief)
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 401);
    assert!(
        answer.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("the token has expired"),
        "{:?}",
        answer.headers()
    );
    assert_eq!(mutating(), before, "nothing done for a refused token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_assistants_behind_one_address_are_each_counted_as_themselves() {
    let sim = common::start().await;
    // A minute's limit of 12: a session's two requests of its own and nine calls are within it
    // (the default is 600), a thirteenth is not.
    let Team {
        provider, url, ca, ..
    } = &team(&sim, &["--max-calls-per-minute", "12"]).await;
    let mut tokens = Vec::new();
    for i in 1..=20 {
        let name = format!("assistant-{i}");
        tokens.push(provider.token(&name, "fluxfleet:read", None).await);
    }
    // Twenty assistants at once, from one address, nine root_causes calls each: counted by
    // address, as before, 20 clients at once were answered 429 past 8 in flight.
    let runs = tokens.iter().map(|token| {
        let (url, ca) = (url.clone(), ca.clone());
        async move {
            let session = session(&url, &ca, token).await;
            let mut refused = 0;
            for _ in 0..9 {
                if call(&session, "root_causes", json!({})).await.is_err() {
                    refused += 1;
                }
            }
            session.cancel().await.unwrap();
            refused
        }
    });
    let refused: Vec<usize> = futures::future::join_all(runs).await;
    assert!(refused.iter().all(|r| *r == 0), "{refused:?}");

    // One past its minute: 429, naming it and when to come back; the others go on.
    let http = common::mcp::https(ca);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let post = |token: &str| common::mcp::post(&http, url, token, &ping).send();
    let mut answer = post(&tokens[0]).await.unwrap();
    while answer.status() == 200 {
        answer = post(&tokens[0]).await.unwrap();
    }
    assert_eq!(answer.status(), 429);
    assert!(answer.headers().contains_key("retry-after"));
    let said = answer.text().await.unwrap();
    assert!(
        said.contains("\"assistant-1\"") && said.contains("12 a minute"),
        "{said}"
    );
    assert_eq!(post(&tokens[1]).await.unwrap().status(), 200);
}

/// The MCP specification's own client — the official Python SDK (`tests/oidc/mcp_client.py`,
/// installed by `.ci/test`) — is told where to get a token by the server's 401 and metadata,
/// gets one from the provider (client credentials, with the resource indicator) and calls a
/// tool; a wrong secret gets it no token and nothing is called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_python_sdk_finds_the_provider_gets_a_token_and_calls_a_tool() {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc/.venv/bin/python");
    assert!(
        venv.is_file(),
        "the MCP Python SDK for the tests is not installed: run .ci/test (a venv in tests/oidc/.venv with tests/oidc/requirements.txt)"
    );
    let sim = common::start_with(|c| c.clusters = 3).await;
    // The SDK wants the metadata's resource to be the very URL it connects to: a port chosen
    // first, so that the audience can name it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let provider = Provider::start(&url).await;
    let data = tempfile::tempdir().unwrap();
    let mut cmd = fluxfleet();
    cmd.env("FLUXFLEET_DATA_DIR", data.path())
        .args(["mcp", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--oauth-issuer", &provider.issuer, "--oauth-audience", &url])
        .arg("--kubeconfig-dir")
        .arg(sim.dir.path().join("kubeconfigs"));
    let (_server, served) = common::mcp::serving(cmd).await;
    assert_eq!(served, url);
    let client = |secret: &str| {
        let mut cmd = tokio::process::Command::new(&venv);
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc/mcp_client.py"))
            .args([
                "--url",
                &url,
                "--client-id",
                "alice",
                "--client-secret",
                secret,
            ])
            .args(["--issuer", &provider.issuer, "--tool", "fleet_summary"]);
        cmd
    };
    let out = client("alice-secret").output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["fleet"]["clusters"], 3,
        "{result}"
    );
    let out = client("wrong-secret").output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("invalid_client"), "{stderr}");
}
