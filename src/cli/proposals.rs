//! `fluxfleet proposals [ID]`, `fluxfleet approve ID`, `fluxfleet reject ID`: a person's side of
//! what an assistant proposed through `fluxfleet mcp --propose`.

use std::time::Duration;

use clap::Args;

use super::fleet::{BusArgs, FleetArgs, ModeArgs, WatchArg};
use super::usage::duration;
use super::usage::{act_output, proposals_output};
use crate::acting::approve::Approve;
use crate::headless::Output;

/// `fluxfleet proposals`.
#[derive(Debug, Args)]
pub struct ProposalsArgs {
    /// One proposal: who asked and why, its targets and exact patches, the decision, each
    /// target's outcome.
    pub id: Option<String>,
    /// `table`, `json` or `ndjson` (one proposal a line).
    #[arg(short, long, default_value = "table", value_parser = proposals_output)]
    pub output: Output,
    /// With --nats: the proposals on the bus the fleet is read from, else those beside the
    /// journal.
    #[command(flatten)]
    pub bus: BusArgs,
}

/// `fluxfleet approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The proposal, as `fluxfleet proposals` lists it.
    pub id: String,
    /// Approve without being asked (on a terminal, approving asks even for one target).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Wait at most this long for the fleet to answer, and for each reconcile to be handled.
    #[arg(long, default_value = "2m", value_parser = duration)]
    pub timeout: Duration,
    /// `table`: every target's outcome at the end; `ndjson`: each as a JSON line as it ends.
    #[arg(short, long, value_enum, default_value = "table", value_parser = act_output)]
    pub output: Output,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
    #[command(flatten)]
    pub mode: ModeArgs,
}

impl ApproveArgs {
    pub fn request(&self) -> Approve {
        Approve {
            id: self.id.clone(),
            sources: self.fleet.sources(self.watch_mode),
            mode: self.mode.mode(),
            yes: self.yes,
            timeout: self.timeout,
            output: self.output,
        }
    }
}

/// `fluxfleet reject`.
#[derive(Debug, Args)]
pub struct RejectArgs {
    /// The proposal, as `fluxfleet proposals` lists it.
    pub id: String,
    /// Why: the assistant that proposed it reads this.
    #[arg(long)]
    pub reason: String,
    #[command(flatten)]
    pub bus: BusArgs,
}
