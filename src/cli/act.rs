//! `fluxfleet suspend | resume | reconcile`: what the three share, what each adds (a reason
//! for suspend; the source first, a forced or reset release for reconcile), and the run.

use std::time::Duration;

use clap::Args;

use super::fleet::{FleetArgs, ModeArgs, WatchArg};
use super::scope::Selectors;
use super::usage::duration;
use super::usage::{Usage, act_output};
use crate::acting::act;
use crate::fleet::verbs::Verb;
use crate::headless::Output;

/// What every action takes: the targets, how to confirm, how long to wait, the output.
#[derive(Debug, Args)]
pub struct ActArgs {
    #[command(flatten)]
    pub select: Selectors,
    /// Every object the other selectors pick across the whole fleet: needed when they name no
    /// workspace, cluster, namespace or name.
    #[arg(long)]
    pub all: bool,
    /// Print the targets and the patches; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Act on more than one object without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Wait at most this long for the fleet to answer, and for each reconcile to be handled.
    #[arg(long, default_value = "2m", value_parser = duration)]
    pub timeout: Duration,
    /// `table`: every target's outcome at the end (with a live progress line on a terminal);
    /// `ndjson`: each target's outcome as a JSON line as it ends.
    #[arg(short, long, value_enum, default_value = "table", value_parser = act_output)]
    pub output: Output,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
    #[command(flatten)]
    pub mode: ModeArgs,
}

/// `fluxfleet suspend`.
#[derive(Debug, Args)]
pub struct SuspendArgs {
    /// Why, recorded on the object (fluxfleet.dev/suspend-reason).
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub act: ActArgs,
}

/// `fluxfleet reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// The source first (and a HelmRelease's generated HelmChart), then the object.
    #[arg(long)]
    pub with_source: bool,
    /// A HelmRelease: a one-off install or upgrade even without changes.
    #[arg(long, conflicts_with_all = ["reset", "with_source"])]
    pub force: bool,
    /// A HelmRelease: reset its failure counters so remediation retries start again.
    #[arg(long, conflicts_with = "with_source")]
    pub reset: bool,
    #[command(flatten)]
    pub act: ActArgs,
}

impl ReconcileArgs {
    /// Which reconcile the flags ask for.
    pub fn verb(&self) -> Verb {
        if self.force {
            Verb::Force
        } else if self.reset {
            Verb::Reset
        } else if self.with_source {
            Verb::ReconcileWithSource
        } else {
            Verb::Reconcile
        }
    }
}

impl ActArgs {
    /// The action asked; a selection naming no place without `--all` is refused here, before
    /// any cluster is asked anything.
    pub fn request(&self, verb: Verb, reason: Option<String>) -> Result<act::Order, Usage> {
        let action = crate::actions::Request {
            verb,
            filter: self.select.filter()?,
            all: self.all,
            reason,
        };
        action.scoped().map_err(Usage::Refused)?;
        Ok(act::Order {
            sources: self.fleet.sources(self.watch_mode),
            action,
            mode: self.mode.mode(),
            dry_run: self.dry_run,
            yes: self.yes,
            timeout: self.timeout,
            output: self.output,
        })
    }
}
