//! `fluxfleet workloads`' options: the scope (a Kustomization or HelmRelease by name), where
//! to look, the output.

use std::time::Duration;

use clap::Args;

use super::fleet::{FleetArgs, WatchArg};
use super::usage::duration;
use super::usage::{Usage, workloads_output};
use crate::fleet::scope::Scope;
use crate::headless::Output;

pub const EXIT_CODES: &str = "Exit codes: 0 ok, 1 error, 2 usage, 3 inventory or config \
problems (or no clusters), 4 some clusters not read or not live.";

/// `fluxfleet workloads KIND NAME`.
#[derive(Debug, Args)]
pub struct WorkloadsArgs {
    #[command(flatten)]
    pub scope: Scope,
    /// Every cluster that has the object, not only those where it is not ready.
    #[arg(long)]
    pub all: bool,
    #[arg(short, long, value_enum, default_value = "table", value_parser = workloads_output)]
    pub output: Output,
    /// How long to wait for every cluster to answer (and for each cluster's reads, at most 10s).
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
}

impl WorkloadsArgs {
    pub fn request(&self) -> Result<crate::export::workloads::WorkloadsQuery, Usage> {
        Ok(crate::export::workloads::WorkloadsQuery {
            sources: self.fleet.sources(self.watch_mode),
            filter: self.scope.filter(None)?,
            all: self.all,
            output: self.output,
            timeout: self.timeout,
        })
    }
}
