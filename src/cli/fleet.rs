//! The options that say where the fleet comes from (kubeconfigs, management clusters, the bus),
//! which config applies, how much is watched and what may be changed: declared once here, and
//! flattened into each command that uses them — and only those.

use std::path::PathBuf;

use clap::Args;

use crate::config::{Mode, WatchMode};
use crate::session::resolve::Sources;

/// Where the fleet comes from and which config applies.
#[derive(Clone, Debug, Default, Args)]
pub struct FleetArgs {
    /// A kubeconfig file; every context in it is a cluster (repeatable). Default: KUBECONFIG
    /// (merged as kubectl merges it), the config file's sources, or ~/.kube/config.
    #[arg(long = "kubeconfig", value_name = "PATH")]
    pub kubeconfigs: Vec<PathBuf>,
    /// A directory of kubeconfigs, searched recursively; DIR/<workspace>/<file> puts the file's
    /// clusters in that workspace (repeatable).
    #[arg(long = "kubeconfig-dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Only the contexts matching this glob (repeatable).
    #[arg(long = "context", value_name = "GLOB")]
    pub contexts: Vec<String>,
    #[command(flatten)]
    pub config: ConfigArg,
    /// A management cluster (a context of the kubeconfigs): its Cluster API clusters join the
    /// fleet, read from their `<name>-kubeconfig` Secrets (repeatable).
    #[arg(long = "management", value_name = "CONTEXT")]
    pub managements: Vec<String>,
    /// With --management: the Cluster label that names the workspace (default: its namespace).
    #[arg(long, value_name = "LABEL", requires = "managements")]
    pub workspace_label: Option<String>,
    /// With --management: follow management clusters found below, this many levels deep.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "managements")]
    pub management_depth: usize,
    #[command(flatten)]
    pub bus: BusArgs,
}

/// The config file.
#[derive(Clone, Debug, Default, Args)]
pub struct ConfigArg {
    /// The config file (default: FLUXFLEET_CONFIG, else the platform config directory).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// Where the bus is, for the commands that read collectors (or, `collect`, publish to them).
#[derive(Clone, Debug, Default, Args)]
pub struct BusArgs {
    /// Read the fleet from collectors through NATS JetStream (nats://HOST:4222, tls://…; a
    /// comma-separated list for a cluster's servers; user and password may be in the URL)
    /// instead of connecting to the clusters; with `collect`, where to publish.
    #[arg(long, value_name = "URL", env = "FLUXFLEET_NATS")]
    pub nats: Option<String>,
    /// A NATS credentials file (JWT and nkey seed).
    #[arg(
        long,
        value_name = "FILE",
        requires = "nats",
        conflicts_with = "nats_nkey"
    )]
    pub nats_creds: Option<PathBuf>,
    /// A file holding an nkey seed, to authenticate to NATS with.
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_nkey: Option<PathBuf>,
    /// A CA bundle to trust for the NATS server's TLS certificate (TLS is then required).
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_ca: Option<PathBuf>,
    /// The KV bucket of the fleet's state on NATS (the collectors' bucket and the history
    /// stream are named after it).
    #[arg(long, value_name = "NAME", default_value = crate::bus::DEFAULT_BUCKET)]
    pub bucket: String,
}

/// How much of each cluster is watched: for the commands that read objects.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct WatchArg {
    /// Which clusters have every Flux object watched: all, summary (counted from their
    /// FluxReports; the clusters you open are watched), auto (engine.watch in the config).
    #[arg(long, value_name = "MODE", value_parser = watch_mode)]
    pub watch_mode: Option<WatchMode>,
}

fn watch_mode(text: &str) -> Result<WatchMode, super::usage::Usage> {
    WatchMode::parse(text).ok_or(super::usage::Usage::WatchMode)
}

/// What may be changed: for the commands that can change a cluster.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct ModeArgs {
    /// Nothing can change a cluster, whatever the config says (with --dry-run: show what would
    /// be sent).
    #[arg(long, conflicts_with = "write")]
    pub read_only: bool,
    /// Actions may change clusters (suspend, resume, reconcile) for this run, where the
    /// guardrails allow (needed unless the config says mode = "write").
    #[arg(long)]
    pub write: bool,
}

impl ModeArgs {
    /// The mode the flags set for every cluster, if they set one.
    pub fn mode(&self) -> Option<Mode> {
        if self.read_only {
            Some(Mode::ReadOnly)
        } else if self.write {
            Some(Mode::Write)
        } else {
            None
        }
    }
}

impl FleetArgs {
    /// Where the fleet comes from, with `watch` over the config's `engine.watch`.
    pub fn sources(&self, watch: WatchArg) -> Sources {
        Sources {
            kubeconfigs: self.kubeconfigs.clone(),
            dirs: self.dirs.clone(),
            contexts: self.contexts.clone(),
            config: self.config.config.clone(),
            managements: self.managements.clone(),
            workspace_label: self.workspace_label.clone(),
            management_depth: self.management_depth,
            watch: watch.watch_mode,
            nats: self.bus.options(),
            counts_suffice: false,
            command_line_only: false,
            names_first: false,
        }
    }
}

impl BusArgs {
    /// Where the bus is, when `--nats` names one.
    pub fn options(&self) -> Option<crate::bus::Options> {
        Some(crate::bus::Options {
            url: self.nats.clone()?,
            creds: self.nats_creds.clone(),
            nkey: self.nats_nkey.clone(),
            ca: self.nats_ca.clone(),
            bucket: self.bucket.clone(),
        })
    }
}
