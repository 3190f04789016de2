//! `fluxfleet mcp` driven by the MCP SDK's own client over stdio, as an assistant drives it.

use std::path::Path;
use std::sync::Arc;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::fluxfleet;

/// `fluxfleet mcp` on the fleet's kubeconfigs, with the SDK's client connected.
pub async fn connect(dir: &Path, extra: &[&str]) -> RunningService<RoleClient, ()> {
    let cmd = fluxfleet().configure(|cmd| {
        cmd.arg("mcp")
            .args(extra)
            .arg("--kubeconfig-dir")
            .arg(dir.join("kubeconfigs"));
    });
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("the MCP session starts")
}

/// `fluxfleet ARGS -o json` on the same fleet.
pub async fn json_of(dir: &Path, args: &[&str]) -> Value {
    let out = fluxfleet()
        .args(args)
        .args(["-o", "json", "--timeout", "30s", "--kubeconfig-dir"])
        .arg(dir.join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// One call's structured answer; Err with the error's text.
pub async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    args: Value,
) -> Result<Value, String> {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    match client.call_tool(params).await {
        Ok(result) if result.is_error != Some(true) => {
            Ok(result.structured_content.expect("a structured answer"))
        }
        Ok(result) => Err(format!("{:?}", result.content)),
        Err(e) => Err(e.to_string()),
    }
}

/// Every page of `list` from `tool`, following the cursors, with the first page's other fields.
pub async fn all_pages(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    args: Value,
    list: &str,
) -> (Vec<Value>, Value) {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut first = None;
    let mut pages = 0;
    loop {
        let mut args = args.clone();
        args["limit"] = json!(3);
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let answer = call(client, tool, args).await.unwrap();
        let page = &answer["page"];
        assert_eq!(
            page["returned"].as_u64().unwrap() as usize,
            answer[list].as_array().unwrap().len()
        );
        assert!(page["returned"].as_u64().unwrap() <= 3, "{page}");
        items.extend(answer[list].as_array().unwrap().iter().cloned());
        pages += 1;
        cursor = page["nextCursor"].as_str().map(String::from);
        if first.is_none() {
            first = Some(answer.clone());
        }
        if cursor.is_none() {
            assert_eq!(page["total"].as_u64().unwrap() as usize, items.len());
            break;
        }
        assert!(pages < 1000, "the cursor never ends");
    }
    (items, first.unwrap())
}

/// The journal's lines in the data directory `data`.
pub fn journal(data: &Path) -> Vec<Value> {
    std::fs::read_to_string(data.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every line of an attempt that carried out proposal `id`: journaled with it, what proposed it
/// (`mcp:<client>`) and who approved it.
pub fn assert_proposal_journaled(lines: &[Value], id: &str) {
    for line in lines {
        assert_eq!(line["proposal"]["id"], id, "{line}");
        let by = line["proposal"]["proposedBy"].as_str().unwrap();
        assert!(by.starts_with("mcp:"), "{line}");
        assert!(line["proposal"]["approvedBy"].is_string(), "{line}");
        assert_eq!(line["automation"], Value::Null, "a person approved: {line}");
    }
}

/// A reqwest client trusting only the test CA.
pub fn https(ca: &str) -> reqwest::Client {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    // A connection per request: one the server closed after refusing a request unread is never
    // taken for the next.
    reqwest::Client::builder()
        .use_preconfigured_tls(config)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

/// `cmd` (a `fluxfleet mcp --listen …`) started, and the URL it says it serves on; its stderr
/// is read on, so that it never blocks on a full pipe.
pub async fn serving(mut cmd: tokio::process::Command) -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the server says where it serves");
        if let Some((_, rest)) = line.split_once("serving MCP on ") {
            break rest.split(' ').next().unwrap().to_string();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// A JSON-RPC `body` posted to `url` with `token`, as a client of Streamable HTTP posts it.
pub fn post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    body: &Value,
) -> reqwest::RequestBuilder {
    http.post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .bearer_auth(token)
        .json(body)
}
