//! A real OpenID provider (panva's `oidc-provider`, run by Node from `tests/oidc/provider.mjs`)
//! for the tests of `fluxfleet mcp --listen` as an OAuth resource server. It listens on a free
//! port on loopback with plain http, signs JWT access tokens (RS256, `typ: at+jwt`) by the
//! client_credentials grant, and is killed when dropped.
//!
//! Its clients are `alice` (groups `["dev-team"]`), `bob` (`["viewers"]`) and `assistant-1` …
//! `assistant-20` (`["assistants"]`); the scopes it grants are `fluxfleet:read`,
//! `fluxfleet:propose` and `fluxfleet:write`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oidc");

/// How long the provider may take to print `ready` (Node starts in half a second on an idle
/// machine; a loaded one running the other tests is slower).
const READY_WITHIN: Duration = Duration::from_secs(30);

pub struct Provider {
    /// `http://127.0.0.1:<port>`, as the tokens' `iss` says.
    pub issuer: String,
    /// From the discovery document (`<issuer>/jwks`).
    pub jwks_uri: String,
    token_endpoint: String,
    resource: String,
    ttl_seconds: u64,
    port: u16,
    child: Child,
    http: reqwest::Client,
    /// The signing keys (`keys.json`) and the provider's stderr (`stderr.log`).
    dir: tempfile::TempDir,
}

impl Provider {
    /// One whose tokens are for `resource` unless a client asks for another, living 600 s.
    pub async fn start(resource: &str) -> Provider {
        Provider::start_with_ttl(resource, 600).await
    }

    /// One whose tokens live `ttl_seconds` (1 for a test that waits for one to expire).
    pub async fn start_with_ttl(resource: &str, ttl_seconds: u64) -> Provider {
        assert!(
            Path::new(DIR).join("node_modules/oidc-provider").is_dir(),
            "the OpenID provider for the tests is not installed: run .ci/test (npm ci --prefix tests/oidc)"
        );
        let dir = tempfile::tempdir().unwrap();
        // Port 0: the provider takes a free one and names it in its `ready` line.
        let (child, issuer) = spawn(dir.path(), resource, ttl_seconds, 0).await;
        let port: u16 = issuer.rsplit(':').next().unwrap().parse().unwrap();
        let http = client();
        let discovery: serde_json::Value = http
            .get(format!("{issuer}/.well-known/openid-configuration"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let token_endpoint = discovery["token_endpoint"].as_str().unwrap().to_string();
        let jwks_uri = discovery["jwks_uri"].as_str().unwrap().to_string();
        Provider {
            issuer,
            jwks_uri,
            token_endpoint,
            resource: resource.to_string(),
            ttl_seconds,
            port,
            child,
            http,
            dir,
        }
    }

    /// An access token for `client` (client_credentials grant), with `scope` (space-separated;
    /// "" asks for none) and for `resource` (`None`: the provider's default). Fails the test
    /// with the provider's answer when it refuses.
    pub async fn token(&self, client: &str, scope: &str, resource: Option<&str>) -> String {
        let mut form = vec![("grant_type", "client_credentials")];
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        if let Some(resource) = resource {
            form.push(("resource", resource));
        }
        let answer = self
            .http
            .post(&self.token_endpoint)
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(urlencoded(&form))
            .send()
            .await
            .unwrap();
        let status = answer.status();
        let body = answer.text().await.unwrap();
        let token = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|answer| answer["access_token"].as_str().map(str::to_string));
        match token {
            Some(token) if status.is_success() => token,
            _ => panic!("the OpenID provider gave {client} no token ({status}): {body}"),
        }
    }

    /// Replaces the signing key with a new one (a new `kid`; the old key is no longer
    /// published): the provider restarts on the same port with a fresh key, so the issuer
    /// and the endpoints stay the same.
    pub async fn rotate(&mut self) {
        self.child.kill().await.unwrap();
        std::fs::remove_file(self.dir.path().join("keys.json")).unwrap();
        let (child, issuer) =
            spawn(self.dir.path(), &self.resource, self.ttl_seconds, self.port).await;
        assert_eq!(
            issuer, self.issuer,
            "the provider came back with another issuer"
        );
        self.child = child;
    }

    /// The JWKS the provider publishes, as a resource server fetches it.
    pub async fn jwks(&self) -> serde_json::Value {
        self.http
            .get(&self.jwks_uri)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}

/// Starts `provider.mjs` with its keys in `dir` (made there when absent) and waits for its
/// `ready <issuer>` line; returns the process and the issuer.
async fn spawn(dir: &Path, resource: &str, ttl_seconds: u64, port: u16) -> (Child, String) {
    let stderr_path = dir.join("stderr.log");
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&stderr_path)
        .unwrap();
    let mut child = Command::new("node")
        .arg(PathBuf::from(DIR).join("provider.mjs"))
        .env("PORT", port.to_string())
        .env("KEYS", dir.join("keys.json"))
        .env("RESOURCE", resource)
        .env("TTL_SECONDS", ttl_seconds.to_string())
        .env_remove("ISSUER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("the tests' OpenID provider needs `node` (Node.js 20 or later) on PATH: {e}")
        });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(READY_WITHIN, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(issuer) = line.strip_prefix("ready ") {
                return Some(issuer.to_string());
            }
        }
        None
    })
    .await;
    let Ok(Some(issuer)) = ready else {
        let _ = child.kill().await;
        let why = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        panic!("the tests' OpenID provider did not get ready within {READY_WITHIN:?}: {why}");
    };
    // Nothing more comes on stdout; read it to the end anyway so that a stray line never
    // meets a closed pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, issuer)
}

/// A client for plain http on loopback. reqwest wants a TLS configuration all the same, and
/// this build leaves rustls without a default crypto provider: one with no roots at all.
fn client() -> reqwest::Client {
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    // A connection per request: none is left open to a provider that `rotate` stopped.
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

/// `application/x-www-form-urlencoded` (reqwest's `form` feature is not in this build).
fn urlencoded(pairs: &[(&str, &str)]) -> String {
    let encode = |s: &str| -> String {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    pairs.join("&")
}

// A team's server (`fluxfleet mcp --listen --oauth-issuer …`) taking this provider's tokens.

/// The server's URL as its tokens name it (the resource a client asks the provider for).
pub const AUDIENCE: &str = "https://fluxfleet.test/mcp";

/// `fluxfleet mcp --listen` over TLS, taking tokens of `issuer` for [`AUDIENCE`], and the URL
/// it serves on.
pub async fn listening(
    fleet: &Path,
    tls: &Path,
    data: &Path,
    issuer: &str,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    let mut cmd = super::fluxfleet();
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
    super::mcp::serving(cmd).await
}

/// A team's server on `sim`, taking the tokens of a provider of its own, started with `extra`.
pub struct Team {
    pub provider: Provider,
    pub url: String,
    /// The server's CA, for the clients.
    pub ca: String,
    pub data: tempfile::TempDir,
    _tls: tempfile::TempDir,
    _server: tokio::process::Child,
}

pub async fn team(sim: &super::Sim, extra: &[&str]) -> Team {
    let provider = Provider::start(AUDIENCE).await;
    let tls = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ca = super::server_certificate(tls.path());
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

/// A session of the SDK's client, with `token`.
pub async fn session(
    url: &str,
    ca: &str,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token);
    let transport = StreamableHttpClientTransport::with_client(super::mcp::https(ca), config);
    ().serve(transport).await.expect("a session with the token")
}
