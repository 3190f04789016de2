//! `fluxfleet mcp`'s options: where the fleet comes from, how long a call waits, whether
//! actions are offered (as proposals, or acting), and whether it serves one client on stdio or
//! many over HTTP (`--listen`, until SIGINT or SIGTERM).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::edge::{McpFailed, mcp_said};
use super::fleet::{FleetArgs, WatchArg};
use super::probes::{ProbeArgs, listen_address};
use super::process::{StopArgs, until_stopped};
use super::usage::Usage;
use super::usage::duration;

/// `fluxfleet mcp`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("auth").args(["token_file", "oauth_issuer"])))]
pub struct McpArgs {
    /// How long a tool call waits, at most, for every cluster's first answer (after that it
    /// answers with what is known, and says which clusters are not complete).
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
    /// Only read (the default, said explicitly, as the TUI and every other command take it):
    /// no tool can change or propose anything.
    #[arg(long, conflicts_with_all = ["write", "propose"])]
    pub read_only: bool,
    /// Automation, acting without a person: offer suspend, resume and reconcile as tools that
    /// change clusters, each a dry run first whose token confirms it, where the guardrails allow.
    #[arg(long, conflicts_with = "propose")]
    pub write: bool,
    /// Offer suspend, resume and reconcile as tools that propose: each keeps the targets and
    /// exact patches for a person to approve (`fluxfleet approve`, the TUI's `:proposals`) or
    /// reject; the server itself changes nothing.
    #[arg(long)]
    pub propose: bool,
    /// How long a proposal may be approved.
    #[arg(long, default_value = "1h", value_parser = duration, requires = "propose")]
    pub proposal_expiry: Duration,
    /// Proposals one person may have pending at once (their token's subject; without tokens,
    /// everyone together): more are refused, saying so, until a person decides.
    #[arg(long, default_value_t = 20, value_name = "N", requires = "propose")]
    pub max_pending_proposals: usize,
    /// Serve many clients over the protocol's Streamable HTTP transport at /mcp on this address
    /// (`:8443`, `127.0.0.1:8443`), instead of one on stdin and stdout. Read-only unless
    /// --propose; every request needs the bearer token of --token-file, or an access token of
    /// the --oauth-issuer.
    #[arg(long, value_name = "ADDR", value_parser = listen_address, requires = "auth")]
    pub listen: Option<SocketAddr>,
    /// The file holding the bearer token clients send (`Authorization: Bearer …`): one line of
    /// at least 16 characters (never the token itself on the command line). One person on one
    /// machine; a team uses --oauth-issuer.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub token_file: Option<PathBuf>,
    /// A team's server: each person's access token (a JWT) from this OpenID provider, checked
    /// against the keys it publishes (`https://login.example.com/realms/platform`, exactly as
    /// its tokens' `iss`). Clients are told where to get one (RFC 9728 metadata).
    #[arg(long, value_name = "URL", requires_all = ["listen", "oauth_audience"])]
    pub oauth_issuer: Option<String>,
    /// This server's URL, as the tokens for it name it (`aud`, the resource a client asks the
    /// provider for: `https://fluxfleet.example.com/mcp`).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,
    /// A CA (PEM) for the provider, where the system's roots do not cover it.
    #[arg(long, value_name = "FILE", requires = "oauth_issuer")]
    pub oauth_ca: Option<PathBuf>,
    /// The token claim naming the person (the journal, Events).
    #[arg(long, default_value = "sub", value_name = "CLAIM")]
    pub oauth_username_claim: String,
    /// The token claim listing the person's groups.
    #[arg(long, default_value = "groups", value_name = "CLAIM")]
    pub oauth_groups_claim: String,
    /// Act as the person asking: every Kubernetes request a call makes carries
    /// `Impersonate-User` and `Impersonate-Group` from their token, so each cluster's RBAC
    /// decides for them (the server's own credentials need only `impersonate`). With it, a team's
    /// server may also --write.
    #[arg(long, requires = "oauth_issuer")]
    pub impersonate: bool,
    /// Put before the person's name and each group when impersonating (`oidc:`), as the API
    /// servers' own OIDC settings name them.
    #[arg(
        long,
        default_value = "",
        value_name = "PREFIX",
        requires = "impersonate"
    )]
    pub impersonate_prefix: String,
    /// HTTPS: the server's certificate chain, PEM (with --tls-key).
    #[arg(long, value_name = "FILE", requires_all = ["listen", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// HTTPS: the certificate's private key, PEM.
    #[arg(long, value_name = "FILE", requires_all = ["listen", "tls_cert"])]
    pub tls_key: Option<PathBuf>,
    /// A browser origin allowed to call (`https://console.example.com:443`), repeatable: a
    /// request carrying any other `Origin` is refused (assistants and scripts send none).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    pub allow_origins: Vec<String>,
    /// A request's body, at most.
    #[arg(long, default_value = "1MiB", value_name = "SIZE", value_parser = request_size)]
    pub max_request_size: usize,
    /// Requests in flight from one person (their token's subject; without OAuth, one client
    /// address), at most: more are answered 429.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_calls_per_client: usize,
    /// Requests one person (without OAuth, one client address) may make in a minute: more are
    /// answered 429, saying when to come back.
    #[arg(long, default_value_t = 600, value_name = "N")]
    pub max_calls_per_minute: usize,
    #[command(flatten)]
    pub probes: ProbeArgs,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
    #[command(flatten)]
    pub stop: StopArgs,
}

/// `1MiB`, `64KiB`: at least 4 KiB (a request smaller than a tool call's envelope is none).
fn request_size(text: &str) -> Result<usize, Usage> {
    match crate::units::parse_size(text) {
        Ok(n) if n >= 4096 => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Ok(_) => Err(Usage::TooSmall(text.to_string())),
        Err(e) => Err(Usage::Size(e)),
    }
}

impl McpArgs {
    pub fn request(&self, stop: CancellationToken) -> crate::mcp::Serve {
        let auth = match (&self.token_file, &self.oauth_issuer, &self.oauth_audience) {
            (Some(file), _, _) => Some(crate::mcp::http::Auth::TokenFile(file.clone())),
            (None, Some(issuer), Some(audience)) => Some(crate::mcp::http::Auth::OAuth(
                crate::mcp::oauth::OAuthSettings {
                    issuer: issuer.clone(),
                    audience: audience.clone(),
                    ca: self.oauth_ca.clone(),
                    username_claim: self.oauth_username_claim.clone(),
                    groups_claim: self.oauth_groups_claim.clone(),
                    impersonate: self.impersonate.then(|| self.impersonate_prefix.clone()),
                },
            )),
            _ => None,
        };
        let listen = match (self.listen, auth) {
            (Some(addr), Some(auth)) => Some(crate::mcp::Listening {
                http: crate::mcp::http::Listen {
                    addr,
                    auth,
                    tls: self.tls_cert.clone().zip(self.tls_key.clone()),
                    allowed_origins: self.allow_origins.clone(),
                    max_request: self.max_request_size,
                    per_client: self.max_calls_per_client,
                    per_minute: self.max_calls_per_minute,
                    proposes: self.propose,
                    writes: self.write,
                },
                metrics_addr: self.probes.metrics_addr,
                health_addr: self.probes.health_addr,
                stop,
            }),
            _ => None,
        };
        crate::mcp::Serve {
            sources: self.fleet.sources(self.watch_mode),
            timeout: self.timeout,
            write: self.write,
            propose: self.propose.then_some(self.proposal_expiry),
            max_pending: self.max_pending_proposals,
            listen,
        }
    }
}

/// Flags `fluxfleet mcp` cannot serve together (clap checks each alone): the command is to be
/// fixed.
#[derive(Debug, thiserror::Error)]
pub enum McpUsage {
    #[error("--metrics-addr and --health-addr go with --listen")]
    ProbesWithoutListen,
    /// A team's server changes clusters only as each person asking, never as itself.
    #[error(
        "--write with --listen acts for a team, each person as themselves: give \
         --oauth-issuer and --impersonate (a shared token's server only reads, or proposes)"
    )]
    TeamWritesAsItself,
}

impl McpArgs {
    /// The flags, checked together.
    pub fn checked(self) -> Result<McpArgs, McpUsage> {
        if self.listen.is_none()
            && (self.probes.metrics_addr, self.probes.health_addr) != (None, None)
        {
            return Err(McpUsage::ProbesWithoutListen);
        }
        if self.listen.is_some() && self.write && !self.impersonate {
            return Err(McpUsage::TeamWritesAsItself);
        }
        Ok(self)
    }
}

/// `fluxfleet mcp`: on stdio until the client closes it; with `--listen`, until SIGINT or
/// SIGTERM. What it says on the way and how it ended are the edge's to tell.
pub async fn run(args: McpArgs) -> Result<(), McpFailed> {
    let served = match args.listen.is_some() {
        // Over HTTP, until a signal, then within --shutdown-timeout.
        true => {
            let deadline = args.stop.shutdown_timeout;
            let serving = |stop| crate::mcp::mcp(args.request(stop), mcp_said);
            until_stopped("fluxfleet mcp", deadline, serving)
                .await
                .map_err(McpFailed::Signals)?
        }
        // On stdio, until the client closes it.
        false => crate::mcp::mcp(args.request(CancellationToken::new()), mcp_said).await,
    };
    Ok(served?)
}
