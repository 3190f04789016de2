//! The probes and metrics a long-running command serves (`collect`, `mcp --listen`): where, and
//! starting them.

use std::net::SocketAddr;
use std::sync::Arc;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::edge::Terminal;
use super::usage::Usage;
use crate::endpoints::Endpoints;
use crate::headless::{Edge, Said};

/// `--metrics-addr`, `--health-addr`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Serve Prometheus metrics at /metrics on this address (`:8080`, `127.0.0.1:8080`), as
    /// Flux's controllers do; off when not given.
    #[arg(long, value_name = "ADDR", value_parser = listen_address)]
    pub metrics_addr: Option<SocketAddr>,
    /// Serve the probes /healthz and /readyz on this address (`:9440`); may be the metrics'
    /// address. Off when not given.
    #[arg(long, value_name = "ADDR", value_parser = listen_address)]
    pub health_addr: Option<SocketAddr>,
}

/// `:8080` (every interface), `127.0.0.1:8080`, `[::1]:8080`.
pub(super) fn listen_address(text: &str) -> Result<SocketAddr, Usage> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_string(),
    };
    full.parse().map_err(|_| Usage::Address(text.to_string()))
}

impl ProbeArgs {
    /// The metrics and probes of `command`, on their addresses (one listener when they are the
    /// same): a port already taken is an error before anything starts.
    pub async fn serve<E: Endpoints>(
        &self,
        command: &str,
        endpoints: Arc<E>,
        stop: &CancellationToken,
    ) -> Result<(), crate::endpoints::BindError> {
        let addresses = (self.metrics_addr, self.health_addr);
        for served in crate::endpoints::start(addresses, endpoints, stop).await? {
            Terminal.said(Said::Note(format!("fluxfleet {command}: {served}")));
        }
        Ok(())
    }
}
