//! `fluxfleet mcp --listen --oauth-issuer …` as a team's server: an OAuth 2.1 resource server
//! (the MCP specification's authorization) against a real OpenID provider (panva's
//! `oidc-provider`, `tests/common/oidc.rs`). A client without a token is told where to get one
//! (401, `WWW-Authenticate: Bearer resource_metadata=…`, RFC 9728 metadata); each person's own
//! token is taken, and proposals name them; a token expired, for another audience, from another
//! issuer, badly signed or without the scope is refused (401 / 403) with nothing done; keys the
//! provider rotates in are picked up. Limits count each person, not the address they share.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::fluxfleet;
use common::mcp::call;
use common::oidc::Provider;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// The server's URL as its tokens name it (the resource a client asks the provider for).
const AUDIENCE: &str = "https://fluxfleet.test/mcp";

/// `fluxfleet mcp --listen` over TLS, taking tokens of `issuer` for [`AUDIENCE`], and the URL
/// it serves on.
async fn listening(
    fleet: &Path,
    tls: &Path,
    data: &Path,
    issuer: &str,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    let mut cmd = fluxfleet();
    cmd.env("FLUXFLEET_DATA_DIR", data)
        .args(["mcp", "--listen", "127.0.0.1:0", "--oauth-issuer", issuer])
        .args(["--oauth-audience", AUDIENCE])
        .arg("--tls-cert")
        .arg(tls.join("server.pem"))
        .arg("--tls-key")
        .arg(tls.join("server.key"))
        .args(extra)
        .arg("--kubeconfig-dir")
        .arg(fleet.join("kubeconfigs"));
    common::mcp::serving(cmd).await
}

/// A team's server on `sim`, taking the tokens of a provider of its own, started with `extra`.
struct Team {
    provider: Provider,
    url: String,
    /// The server's CA, for the clients.
    ca: String,
    data: tempfile::TempDir,
    _tls: tempfile::TempDir,
    _server: tokio::process::Child,
}

async fn team(sim: &common::Sim, extra: &[&str]) -> Team {
    let provider = Provider::start(AUDIENCE).await;
    let tls = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ca = common::server_certificate(tls.path());
    let (server, url) = listening(
        sim.dir.path(),
        tls.path(),
        data.path(),
        &provider.issuer,
        extra,
    )
    .await;
    Team {
        provider,
        url,
        ca,
        data,
        _tls: tls,
        _server: server,
    }
}

/// The SDK's client with `token`.
async fn client(
    url: &str,
    ca: &str,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token);
    let transport = StreamableHttpClientTransport::with_client(common::mcp::https(ca), config);
    ().serve(transport).await.expect("a session with the token")
}

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
    let session = client(&url, &ca, &alice).await;
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
    let session = client(&url, &ca, &bob).await;
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
            let session = client(&url, &ca, token).await;
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

/// With `--impersonate`, a team's server acts as each person asking: every Kubernetes request of
/// a call carries their name and groups, and each cluster's RBAC decides for them. Alice may
/// change dev but not prod; Bob may change nothing; the journal and the Events name each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_server_acts_as_each_person_and_each_cluster_decides_for_them() {
    use fluxfleet_sim::{Faults, Role};
    let sim = common::start_with(|c| c.clusters = 3).await;
    let names = sim.workload_clusters();
    let (dev, prod) = (names[0].clone(), names[1].clone());
    let people = |alice: Role| Faults {
        people: vec![
            ("oidc:alice".into(), alice),
            ("group:oidc:viewers".into(), Role::Viewer),
        ],
        ..Faults::default()
    };
    sim.handle.set_faults(&dev, people(Role::Admin));
    sim.handle.set_faults(&prod, people(Role::Viewer));
    let impersonating = ["--write", "--impersonate", "--impersonate-prefix", "oidc:"];
    let Team {
        provider,
        url,
        ca,
        data,
        ..
    } = &team(&sim, &impersonating).await;
    let args = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system",
                       "clusters": [dev, prod], "reason": "freeze" });
    // A dry run, then the call that acts with its token: the outcome per cluster.
    let act = |token: String| {
        let (url, ca, args) = (url.clone(), ca.clone(), args.clone());
        async move {
            let session = client(&url, &ca, &token).await;
            let dry = call(&session, "suspend", args.clone()).await.unwrap();
            let mut confirmed = args;
            confirmed["token"] = dry["token"].clone();
            confirmed["count"] = dry["count"].clone();
            let done = call(&session, "suspend", confirmed).await.unwrap();
            session.cancel().await.unwrap();
            done
        }
    };
    let alice = provider
        .token("alice", "fluxfleet:read fluxfleet:write", None)
        .await;
    let done = act(alice.clone()).await;
    let outcome = |done: &Value, cluster: &str| {
        done["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["cluster"] == cluster)
            .cloned()
            .unwrap_or_else(|| panic!("{cluster}: {done}"))
    };
    assert_eq!(outcome(&done, &dev)["outcome"], "done", "{done}");
    assert_eq!(outcome(&done, &dev)["seenAs"], "oidc:alice", "{done}");
    let refused = outcome(&done, &prod);
    assert_eq!(refused["outcome"], "forbidden", "{done}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("User \"oidc:alice\" cannot patch"),
        "{refused}"
    );
    // Bob, a viewer everywhere: refused on both, in his name.
    let bob = provider
        .token("bob", "fluxfleet:read fluxfleet:write", None)
        .await;
    let done = act(bob.clone()).await;
    for cluster in [&dev, &prod] {
        let refused = outcome(&done, cluster);
        assert_eq!(refused["outcome"], "forbidden", "{done}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("User \"oidc:bob\" cannot patch"),
            "{refused}"
        );
    }
    // The journal names each person; the Event on dev the identity it ran as.
    let attempts: Vec<String> = common::mcp::journal(data.path())
        .iter()
        .filter(|l| l["stage"] == "outcome")
        .map(|l| l["user"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(attempts, ["alice", "bob"]);
    let client = common::client(&sim.handle.files.fleet, &dev).await;
    let events =
        kube::Api::<k8s_openapi::api::core::v1::Event>::namespaced(client, "flux-system")
            .list(&kube::api::ListParams::default().fields(
                "involvedObject.kind=Kustomization,involvedObject.name=apps,reason=Suspended",
            ))
            .await
            .unwrap();
    let annotations = events.items[0].metadata.annotations.clone().unwrap();
    assert_eq!(
        annotations["event.toolkit.fluxcd.io/username"],
        "oidc:alice"
    );
    assert_eq!(
        annotations["event.toolkit.fluxcd.io/groups"],
        "oidc:dev-team, system:authenticated"
    );
    // A token that may read only does not reach the write tools.
    let reader = provider.token("alice", "fluxfleet:read", None).await;
    let http = common::mcp::https(ca);
    let suspend = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "suspend", "arguments": args}});
    let answer = common::mcp::post(&http, url, &reader, &suspend)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403);
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
