//! What a headless command was asked, how it answers (table, JSON, NDJSON) and its exit codes.

use std::io;
use std::time::Duration;

use super::{Filter, Status};
use crate::session::resolve::Sources;

/// Exit codes, documented in the README and docs/commands.md.
pub mod exit {
    pub const OK: u8 = 0;
    /// fluxfleet itself failed (cannot write output, cannot start).
    pub const ERROR: u8 = 1;
    /// The command line is wrong (clap uses 2 as well).
    pub const USAGE: u8 = 2;
    /// An inventory source or the config has problems, or no cluster was found.
    pub const INVENTORY: u8 = 3;
    /// Some clusters could not be seen completely (not live when the output was made).
    pub const UNREACHABLE: u8 = 4;
    /// `--fail-on` found matching objects.
    pub const FAIL_ON: u8 = 5;
    /// `gate`: the gate is closed (not yet).
    pub const CLOSED: u8 = 6;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Table,
    Json,
    Ndjson,
}

/// What `get` was asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub sources: Sources,
    pub filter: Filter,
    pub output: Output,
    pub summary: bool,
    /// The selected not-ready objects by their root causes (`--root-causes`).
    pub root_causes: bool,
    pub timeout: Duration,
    pub watch: bool,
    pub fail_on: Option<Status>,
    /// With `--nats`: the history of this last while instead of the objects.
    pub since: Option<Duration>,
}

/// A closed pipe (`| head`) ends the output quietly; other write errors are errors.
pub fn finish(result: io::Result<()>) -> Result<(), u8> {
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(exit::OK),
        Err(e) => {
            eprintln!("error: cannot write the output: {e}");
            Err(exit::ERROR)
        }
    }
}
