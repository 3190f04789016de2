//! `fluxfleet get`, `rollout` and `inventory`: their options, and the requests they make of
//! the headless commands in `export`.

use std::time::Duration;

use clap::Args;

use super::fleet::{FleetArgs, WatchArg};
use super::scope::Selectors;
use super::usage::duration;
use super::usage::{Usage, rollout_output};
use crate::export::StatusFilter;
use crate::export::query::Query;
use crate::fleet::scope::Scope;
use crate::headless::Output;

/// `fluxfleet get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    #[command(flatten)]
    pub select: Selectors,
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: Output,
    /// Print the rollups per workspace and per cluster instead of the objects.
    #[arg(long, conflicts_with = "root_causes")]
    pub summary: bool,
    /// Print the root causes of the selected not-ready objects (the first not-ready objects up
    /// their dependsOn, source and chart chains), grouped across the fleet with what each holds
    /// back: `get --status failing --root-causes`. Table or JSON.
    #[arg(long, conflicts_with = "watch")]
    pub root_causes: bool,
    /// Wait at most this long for every cluster to answer.
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
    /// After the first output, stream every change as NDJSON until interrupted.
    #[arg(long)]
    pub watch: bool,
    /// Exit with code 5 when an object with this status is found (e.g. failing).
    #[arg(long, value_parser = StatusFilter::parse, value_name = "STATUS")]
    pub fail_on: Option<StatusFilter>,
    /// With --nats: what changed in the scope during this last while (2h, 30m), from the
    /// collectors' history, instead of the objects.
    #[arg(long, value_parser = duration, requires = "nats", conflicts_with_all = ["watch", "summary", "root_causes"])]
    pub since: Option<Duration>,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
    #[command(flatten)]
    pub stop: super::process::StopArgs,
}

impl GetArgs {
    pub fn request(&self) -> Result<Query, Usage> {
        if self.root_causes && self.output == Output::Ndjson {
            return Err(Usage::RootCausesStream);
        }
        Ok(Query {
            sources: self.fleet.sources(self.watch_mode),
            filter: self.select.filter()?,
            every_kind: self.select.scope.names_every_kind(),
            output: self.output,
            summary: self.summary,
            root_causes: self.root_causes,
            timeout: self.timeout,
            watch: self.watch,
            fail_on: self.fail_on,
            since: self.since,
        })
    }
}

/// How `rollout` and `gate` read the fleet once and say what they found: table or JSON.
#[derive(Debug, Args)]
pub struct ReadOnceArgs {
    #[arg(short, long, value_enum, default_value = "table", value_parser = rollout_output)]
    pub output: Output,
    /// How long to wait for every cluster to answer.
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
}

impl ReadOnceArgs {
    fn sources(&self) -> crate::session::resolve::Sources {
        self.fleet.sources(self.watch_mode)
    }
}

/// `fluxfleet rollout`: the scope; a KIND and NAME open one object's matrix.
#[derive(Debug, Args)]
pub struct RolloutArgs {
    #[command(flatten)]
    pub scope: Scope,
    /// How each ring delivered, per Kustomization and HelmRelease: lead time to 50 %, 90 % and
    /// 100 % of the ring, change failure rate, time to restore — from the collectors' history
    /// (needs --nats).
    #[arg(long)]
    pub metrics: bool,
    /// With --metrics: how far back the history is read (7d).
    #[arg(long, value_parser = duration, requires = "metrics")]
    pub since: Option<Duration>,
    #[command(flatten)]
    pub reading: ReadOnceArgs,
}

impl RolloutArgs {
    pub fn request(&self) -> Result<crate::export::rollout::RolloutQuery, Usage> {
        Ok(crate::export::rollout::RolloutQuery {
            sources: self.reading.sources(),
            filter: self.scope.filter(None)?,
            output: self.reading.output,
            timeout: self.reading.timeout,
            metrics: self
                .metrics
                .then(|| self.since.unwrap_or(Duration::from_secs(7 * 86_400))),
        })
    }
}

/// `fluxfleet gate RING REVISION [KIND] [NAME]`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// The ring: a workspace, or a ring of the config's `[rollout]` rings.
    pub ring: String,
    /// The revision: `main@sha1:…` (a digest may be cut to its first characters), a chart
    /// version.
    pub revision: String,
    #[command(flatten)]
    pub scope: Scope,
    /// How long every copy must have run it, ready.
    #[arg(long, default_value = "30m", value_parser = duration)]
    pub soak: Duration,
    #[command(flatten)]
    pub reading: ReadOnceArgs,
}

impl GateArgs {
    pub fn request(&self) -> Result<crate::export::gate::GateQuery, Usage> {
        Ok(crate::export::gate::GateQuery {
            sources: self.reading.sources(),
            ring: self.ring.clone(),
            revision: self.revision.clone(),
            filter: self.scope.filter(None)?,
            soak: self.soak,
            output: self.reading.output,
            timeout: self.reading.timeout,
        })
    }
}

/// `fluxfleet drift [KIND] [NAME]`.
#[derive(Debug, Args)]
pub struct DriftArgs {
    #[command(flatten)]
    pub scope: Scope,
    #[command(flatten)]
    pub reading: ReadOnceArgs,
}

impl DriftArgs {
    pub fn request(&self) -> Result<crate::export::drift::DriftQuery, Usage> {
        Ok(crate::export::drift::DriftQuery {
            sources: self.reading.sources(),
            filter: self.scope.filter(None)?,
            output: self.reading.output,
            timeout: self.reading.timeout,
        })
    }
}

/// `fluxfleet inventory`: the resolved fleet, without watching it.
#[derive(Debug, Args)]
pub struct InventoryArgs {
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: Output,
    #[command(flatten)]
    pub fleet: FleetArgs,
}
