//! The team's MCP server container, as `config/deploy/mcp.yaml` runs it.

use super::*;

/// The team's server as mcp.yaml runs it: the fleet read from the bus, each call's token from a
/// real OpenID provider, and what a person does sent to the cluster as that person, journaled
/// on the manifest's volume; without a token, refused and told where to get one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_team_mcp_container_acts_as_the_person_whose_token_it_is() {
    use fluxfleet_sim::{Faults, Role};
    let _turn = common::bus::one_at_a_time().await;
    image().await;
    let published = common::bus::published().await;
    let cluster = published.sim.workload_clusters()[0].clone();
    published.sim.handle.set_faults(
        &cluster,
        Faults {
            people: vec![("oidc:alice".into(), Role::Admin)],
            ..Faults::default()
        },
    );
    let (listen, health, metrics) = (free_port(), free_port(), free_port());
    let url = format!("https://127.0.0.1:{listen}/mcp");
    // The provider's tokens are for this server's URL, as the manifest's --oauth-audience says.
    let provider = common::oidc::Provider::start(&url).await;
    // The certificate as its Secret holds it (`tls.crt`, `tls.key`); the kubeconfigs as theirs.
    let made = tempfile::tempdir().unwrap();
    let ca = common::server_certificate(made.path());
    let tls = tempfile::tempdir().unwrap();
    std::fs::copy(made.path().join("server.pem"), tls.path().join("tls.crt")).unwrap();
    std::fs::copy(made.path().join("server.key"), tls.path().join("tls.key")).unwrap();
    let tls = readable_copy(tls.path());
    let kubeconfigs = readable_copy(&published.sim.dir.path().join("kubeconfigs"));

    let args = args_of(
        "mcp.yaml",
        "fluxfleet-mcp-0",
        &[
            ("--nats", published.nats.url.clone()),
            ("--bucket", "fleet".into()),
            ("--listen", format!("127.0.0.1:{listen}")),
            ("--health-addr", format!("127.0.0.1:{health}")),
            ("--metrics-addr", format!("127.0.0.1:{metrics}")),
            ("--oauth-issuer", provider.issuer.clone()),
            ("--oauth-audience", url.clone()),
        ],
    );
    let server = Container::run_as(
        "mcp",
        &[(tls.path(), "/tls"), (kubeconfigs.path(), "/fleet")],
        &Deployed::of("mcp.yaml"),
        &args,
    );
    common::bus::until("the MCP server is ready", NEVER, || async {
        match get(health, "/readyz").await {
            Some((200, _)) => None,
            other => Some(format!("/readyz: {other:?}\n{}", server.logs())),
        }
    })
    .await;

    let alice = provider
        .token("alice", "fluxfleet:read fluxfleet:write", None)
        .await;
    let session = common::oidc::session(&url, &ca, &alice).await;
    let summary = common::mcp::call(&session, "fleet_summary", json!({}))
        .await
        .unwrap();
    let clusters = published.inventory.clusters.len();
    assert_eq!(summary["fleet"]["clusters"], clusters, "{summary}");
    // Alice suspends on the cluster that lets her: a dry run, then the call that acts.
    let args = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system",
                       "clusters": [cluster], "reason": "image test" });
    let dry = common::mcp::call(&session, "suspend", args.clone())
        .await
        .unwrap();
    let mut confirmed = args;
    confirmed["token"] = dry["token"].clone();
    confirmed["count"] = dry["count"].clone();
    let done = common::mcp::call(&session, "suspend", confirmed)
        .await
        .unwrap();
    session.cancel().await.unwrap();
    let result = &done["results"][0];
    assert_eq!(result["outcome"], "done", "{done}\n{}", server.logs());
    assert_eq!(result["seenAs"], "oidc:alice", "{done}");
    // Journaled on the manifest's volume, in her name.
    let journal = common::mcp::journal(server.volume("/var/lib/fluxfleet"));
    let users: Vec<&str> = journal
        .iter()
        .filter(|l| l["stage"] == "outcome")
        .filter_map(|l| l["user"].as_str())
        .collect();
    assert_eq!(users, ["alice"], "{journal:?}");

    // Without a token: refused, unread, and told where to get one.
    let refused = common::mcp::https(&ca)
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("resource_metadata=\"https://127.0.0.1:"),
        "{challenge}"
    );
    // Told to stop, it stops, having written nothing but its journal.
    podman(&["stop", "-t", "30", &server.name]);
    assert_eq!(
        server.inspect("{{.State.ExitCode}}"),
        "0",
        "{}",
        server.logs()
    );
    assert_eq!(server.written(), Vec::<PathBuf>::new());
    let logs = server.logs();
    assert!(!logs.contains(&alice), "a token is never logged");
}
