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
            propose: self.propose.then_some(self.proposal_expiry),
        }
    }
}
