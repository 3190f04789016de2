//! `fluxfleet mcp`'s own options (the fleet's and `--write` are global).

use std::time::Duration;

use clap::Args;

use super::{FleetArgs, UiArgs, duration};

/// `fluxfleet mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// How long a tool call waits, at most, for every cluster's first answer (after that it
    /// answers with what is known, and says which clusters are not complete).
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
}

impl McpArgs {
    pub fn request(&self, fleet: &FleetArgs, ui: &UiArgs) -> crate::mcp::Request {
        crate::mcp::Request {
            sources: fleet.sources(),
            timeout: self.timeout,
            write: ui.write,
        }
    }
}
