//! `fluxfleet tree`'s options: the Kustomization or HelmRelease (as `flux tree ks` names it),
//! the clusters to look on, the output.

use std::time::Duration;

use clap::{Args, ValueEnum};

use super::fleet::{FleetArgs, WatchArg};
use super::usage::{Usage, duration, trace_output};
use crate::export::Filter;
use crate::fleet::{FluxKind, ObjectKey};
use crate::headless::Output;

pub const EXIT_CODES: &str = "Exit codes: 0 every cluster that has it has the same tree, 1 error \
(or no cluster read has it), 2 usage, 3 inventory or config problems (or no clusters), 4 some clusters not read or not live, 9 \
some clusters' trees differ.";

/// What a tree starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Root {
    #[value(name = "kustomization", alias = "ks")]
    Kustomization,
    #[value(name = "helmrelease", alias = "hr")]
    HelmRelease,
}

/// `fluxfleet tree ks|hr NAME`.
#[derive(Debug, Args)]
pub struct TreeArgs {
    /// ks (kustomization) or hr (helmrelease).
    pub kind: Root,
    pub name: String,
    /// Its namespace.
    #[arg(short, long, default_value = "flux-system")]
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

impl TreeArgs {
    pub fn request(&self) -> Result<crate::export::tree::TreeQuery, Usage> {
        let kind = match self.kind {
            Root::Kustomization => FluxKind::Kustomization,
            Root::HelmRelease => FluxKind::HelmRelease,
        };
        Ok(crate::export::tree::TreeQuery {
            sources: self.fleet.sources(self.watch_mode),
            clusters: Filter {
                workspace: self.workspace.clone(),
                clusters: self.clusters.clone(),
                ..Filter::default()
            },
            root: ObjectKey {
                kind,
                namespace: self.namespace.as_str().into(),
                name: self.name.as_str().into(),
            },
            output: self.output,
            timeout: self.timeout,
        })
    }
}
