//! `fluxfleet trace`'s options: the object (any kind the clusters serve), the clusters to look
//! on, the output.

use std::time::Duration;

use clap::Args;

use super::fleet::{FleetArgs, WatchArg};
use super::usage::{Usage, duration, trace_output};
use crate::export::Filter;
use crate::fleet::trace::{Asked, resource::Resource};
use crate::headless::Output;

pub const EXIT_CODES: &str = "Exit codes: 0 every copy found has one chain, 1 error (or no \
cluster read has it), 2 usage, 3 \
inventory or config problems (or no clusters), 4 some clusters not read or not live, 9 the \
copies do not share one chain.";

/// `fluxfleet trace KIND NAME`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// The kind, as kubectl takes it: Deployment (deploy), StatefulSet, Service, ConfigMap, Pod,
    /// a Flux kind, or any other as KIND.GROUP (rollouts.argoproj.io).
    pub kind: String,
    pub name: String,
    /// Its namespace (none for a cluster-scoped kind).
    #[arg(short, long, default_value = "")]
    pub namespace: String,
    /// Only clusters of this workspace.
    #[arg(long)]
    pub workspace: Option<String>,
    /// Only clusters matching this glob (repeatable).
    #[arg(long = "cluster", value_name = "GLOB")]
    pub clusters: Vec<String>,
    #[arg(short, long, value_enum, default_value = "table", value_parser = trace_output)]
    pub output: Output,
    /// How long to wait for every cluster to answer (and for each cluster's reads, at most 10s).
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
}

impl TraceArgs {
    pub fn request(&self) -> Result<crate::export::trace::TraceQuery, Usage> {
        Ok(crate::export::trace::TraceQuery {
            sources: self.fleet.sources(self.watch_mode),
            clusters: Filter {
                workspace: self.workspace.clone(),
                clusters: self.clusters.clone(),
                ..Filter::default()
            },
            asked: Asked {
                kind: self.kind.clone(),
                resource: Resource::named(&self.kind)?,
                namespace: self.namespace.clone(),
                name: self.name.clone(),
            },
            output: self.output,
            timeout: self.timeout,
        })
    }
}
