//! `fluxfleet mcp`'s options: where the fleet comes from, how long a call waits, and whether
//! actions are offered.

use std::time::Duration;

use clap::Args;

use super::duration;
use super::fleet::{FleetArgs, WatchArg};

/// `fluxfleet mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// How long a tool call waits, at most, for every cluster's first answer (after that it
    /// answers with what is known, and says which clusters are not complete).
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
    /// Offer suspend, resume and reconcile as tools, each a dry run first whose token confirms
    /// it, where the guardrails allow.
    #[arg(long)]
    pub write: bool,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
}

impl McpArgs {
    pub fn request(&self) -> crate::mcp::Request {
        crate::mcp::Request {
            sources: self.fleet.sources(self.watch_mode),
            timeout: self.timeout,
            write: self.write,
        }
    }
}
