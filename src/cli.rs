//! The command line: `fluxfleet [command]` (no command: the TUI). Options that say where the
//! fleet comes from, which config applies and what may be changed are declared once, here on
//! [`Cli`], and are global: they mean the same before or after the command.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::config::Mode;
use crate::export::act;
use crate::export::request::{Output, Request};
use crate::export::{Filter, Status};
use crate::fleet::FluxKind;
use crate::fleet::actions::Verb;
use crate::session::resolve::Sources;

mod alert_args;
mod mcp_args;
mod sim_args;
pub mod usage;
mod workloads_args;

pub use alert_args::AlertArgs;
pub use mcp_args::McpArgs;
pub use sim_args::SimArgs;
use usage::{Usage, act_output, rollout_output};
pub use workloads_args::WorkloadsArgs;

#[derive(Debug, Parser)]
#[command(
    name = "fluxfleet",
    version,
    about = "The Flux CD state of a whole fleet of Kubernetes clusters, in one terminal"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub ui: UiArgs,
}

impl Cli {
    /// Parses the process's arguments, with `--version` naming the Flux API versions known.
    pub fn parse_args() -> Cli {
        use clap::{CommandFactory, FromArgMatches};
        // Built once per process: clap keeps static text.
        let text: &'static str = Box::leak(long_version().into_boxed_str());
        let matches = Cli::command().long_version(text).get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

/// `fluxfleet --version`: the build's version, then the Flux releases and API versions it reads.
pub fn long_version() -> String {
    use crate::fleet::{FluxKind, FluxRelease};
    let mut text = format!(
        "{}\nFlux {} to {}; API versions read, preferred first:",
        env!("CARGO_PKG_VERSION"),
        FluxRelease(0).name(),
        FluxRelease::LATEST.name()
    );
    for kind in FluxKind::ALL {
        let versions = kind.known_versions().join(" ");
        let name = kind.as_str();
        let group = kind.group();
        text.push_str(&format!("\n  {name:<22} {group:<35} {versions}"));
    }
    text
}

/// What may be changed and how the TUI looks. Global: before or after the command.
#[derive(Clone, Debug, Args)]
pub struct UiArgs {
    /// Theme: dark, light, high-contrast, colorblind, or THEME.toml in the config directory's
    /// `themes` folder.
    #[arg(long, value_name = "NAME", global = true)]
    pub theme: Option<String>,
    /// Nothing can change a cluster, whatever the config says (with --dry-run: show what would
    /// be sent).
    #[arg(long, conflicts_with = "write", global = true)]
    pub read_only: bool,
    /// Actions may change clusters (suspend, resume, reconcile) for this run, where the
    /// guardrails allow (needed unless the config says mode = "write").
    #[arg(long, global = true)]
    pub write: bool,
}

impl UiArgs {
    /// The mode the flags set for every cluster, if they set one.
    pub fn flag(&self) -> Option<Mode> {
        if self.read_only {
            Some(Mode::ReadOnly)
        } else if self.write {
            Some(Mode::Write)
        } else {
            None
        }
    }
}

/// `fluxfleet demo`: the TUI on a simulated fleet served in-process.
#[derive(Debug, Args)]
pub struct DemoArgs {
    #[arg(long, default_value_t = 500)]
    pub clusters: usize,
    #[arg(long, default_value_t = 8)]
    pub workspaces: usize,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List Flux objects across the fleet, like `flux get` with WORKSPACE and CLUSTER columns.
    #[command(after_help = EXIT_CODES)]
    Get(GetArgs),
    /// Which revision runs where: per Kustomization, HelmRelease and source, the newest revision,
    /// how far it has spread, who is behind and who is stuck; with a NAME, its clusters ring by
    /// ring.
    #[command(after_help = EXIT_CODES)]
    Rollout(RolloutArgs),
    /// What broke inside a Kustomization or HelmRelease: its workloads (Deployments, StatefulSets,
    /// DaemonSets, Jobs), their pods, Warning events and log tails, read from every cluster in
    /// the scope where it is not ready, and the same verdict on many clusters folded into one
    /// line.
    #[command(after_help = workloads_args::EXIT_CODES)]
    Workloads(WorkloadsArgs),
    /// Print the resolved fleet (cluster, workspace, server, labels, source) without connecting.
    #[command(after_help = EXIT_CODES)]
    Inventory(InventoryArgs),
    /// Suspend Flux objects across the fleet (spec.suspend, with who and why recorded on them).
    Suspend(ActArgs),
    /// Resume suspended Flux objects, and request a reconcile so they move at once.
    Resume(ActArgs),
    /// Request a reconcile of Flux objects and wait until their controllers have handled it.
    Reconcile(ActArgs),
    /// Send one alert per failing root cause across the fleet to Alertmanager (--alertmanager
    /// URL), with its suspect change and blast radius; resolved when the cause clears.
    Alert(AlertArgs),
    /// Serve the fleet to an assistant: a Model Context Protocol server on stdin and stdout,
    /// with tools for the summary, clusters, objects, root causes, rollouts and one object's
    /// events and YAML, every call naming its own scope. Read-only unless started with
    /// --write: then suspend, resume and reconcile, each a dry run first.
    Mcp(McpArgs),
    /// Serve a simulated fleet of Kubernetes API servers running Flux, and write kubeconfigs for it.
    Sim(SimArgs),
    /// Watch this collector's share of the fleet and publish it to NATS JetStream (--nats URL):
    /// the latest state of every object in a KV bucket, what changed in a stream. Run several:
    /// they share the fleet and take over each other's clusters.
    Collect(CollectArgs),
    /// The TUI on a simulated fleet (500 clusters with churn, rollouts and a few faults), served
    /// in-process; needs no kubeconfig.
    Demo(DemoArgs),
    /// Print a completion script for a shell (e.g. `fluxfleet completions bash >
    /// /etc/bash_completion.d/fluxfleet`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

const EXIT_CODES: &str = "Exit codes: 0 ok, 1 error, 2 usage, 3 inventory or config problems (or no \
clusters), 4 some clusters not live, 5 --fail-on matched.";

/// Where the fleet comes from and which config applies. Global: before or after the command.
#[derive(Clone, Debug, Args)]
pub struct FleetArgs {
    /// A kubeconfig file; every context in it is a cluster (repeatable). Default: KUBECONFIG
    /// (merged as kubectl merges it), the config file's sources, or ~/.kube/config.
    #[arg(long = "kubeconfig", value_name = "PATH", global = true)]
    pub kubeconfigs: Vec<PathBuf>,
    /// A directory of kubeconfigs, searched recursively; DIR/<workspace>/<file> puts the file's
    /// clusters in that workspace (repeatable).
    #[arg(long = "kubeconfig-dir", value_name = "DIR", global = true)]
    pub dirs: Vec<PathBuf>,
    /// Only the contexts matching this glob (repeatable).
    #[arg(long = "context", value_name = "GLOB", global = true)]
    pub contexts: Vec<String>,
    /// The config file (default: FLUXFLEET_CONFIG, else the platform config directory).
    #[arg(long, value_name = "PATH", global = true)]
    pub config: Option<PathBuf>,
    /// A management cluster (a context of the kubeconfigs): its Cluster API clusters join the
    /// fleet, read from their `<name>-kubeconfig` Secrets (repeatable).
    #[arg(long = "management", value_name = "CONTEXT", global = true)]
    pub managements: Vec<String>,
    /// With --management: the Cluster label that names the workspace (default: its namespace).
    #[arg(long, value_name = "LABEL", global = true)]
    pub workspace_label: Option<String>,
    /// With --management: follow management clusters found below, this many levels deep.
    #[arg(long, value_name = "N", default_value_t = 1, global = true)]
    pub management_depth: usize,
    /// Which clusters have every Flux object watched: all, summary (counted from their
    /// FluxReports; the clusters you open are watched), auto (engine.watch in the config).
    #[arg(long, value_name = "MODE", value_parser = watch_mode, global = true)]
    pub watch_mode: Option<crate::config::Watch>,
    /// Read the fleet from collectors through NATS JetStream (nats://HOST:4222, tls://…; a
    /// comma-separated list for a cluster's servers; user and password may be in the URL)
    /// instead of connecting to the clusters; with `collect`, where to publish.
    #[arg(long, value_name = "URL", env = "FLUXFLEET_NATS", global = true)]
    pub nats: Option<String>,
    /// A NATS credentials file (JWT and nkey seed).
    #[arg(long, value_name = "FILE", global = true)]
    pub nats_creds: Option<PathBuf>,
    /// A file holding an nkey seed, to authenticate to NATS with.
    #[arg(long, value_name = "FILE", global = true)]
    pub nats_nkey: Option<PathBuf>,
    /// A CA bundle to trust for the NATS server's TLS certificate (TLS is then required).
    #[arg(long, value_name = "FILE", global = true)]
    pub nats_ca: Option<PathBuf>,
    /// The KV bucket of the fleet's state on NATS (the collectors' bucket and the history
    /// stream are named after it).
    #[arg(long, value_name = "NAME", default_value = crate::bus::DEFAULT_BUCKET, global = true)]
    pub bucket: String,
}

fn watch_mode(text: &str) -> Result<crate::config::Watch, String> {
    crate::config::Watch::parse(text).ok_or_else(|| "one of all, summary, auto".to_string())
}

impl FleetArgs {
    pub fn sources(&self) -> Sources {
        Sources {
            kubeconfigs: self.kubeconfigs.clone(),
            dirs: self.dirs.clone(),
            contexts: self.contexts.clone(),
            config: self.config.clone(),
            managements: self.managements.clone(),
            workspace_label: self.workspace_label.clone(),
            management_depth: self.management_depth,
            watch: self.watch_mode,
            nats: self.nats_options(),
            counts_suffice: false,
        }
    }

    /// Where the bus is, when `--nats` names one.
    pub fn nats_options(&self) -> Option<crate::bus::Options> {
        Some(crate::bus::Options {
            url: self.nats.clone()?,
            creds: self.nats_creds.clone(),
            nkey: self.nats_nkey.clone(),
            ca: self.nats_ca.clone(),
            bucket: self.bucket.clone(),
        })
    }
}

/// `fluxfleet collect`: watch this collector's share of the fleet and publish it to NATS.
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// This collector's name among the others (default: host name and process id).
    #[arg(long)]
    pub id: Option<String>,
    /// A collector that has not renewed its announcement for this long is taken for dead, and
    /// its clusters move to the others.
    #[arg(long, default_value = "15s", value_parser = duration)]
    pub ttl: Duration,
    /// How long the history stream keeps a change.
    #[arg(long, default_value = "168h", value_parser = duration)]
    pub history: Duration,
    /// Copies a NATS cluster keeps of the buckets and the history when the first collector
    /// makes them: 3 on a cluster of three loses nothing when a node goes; 1 on a single
    /// server.
    #[arg(long, default_value_t = 1, value_parser = replicas)]
    pub replicas: usize,
    /// Serve Prometheus metrics at /metrics on this address (`:8080`, `127.0.0.1:8080`), as
    /// Flux's controllers do; off when not given.
    #[arg(long, value_name = "ADDR", value_parser = listen_address)]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Serve the probes /healthz and /readyz on this address (`:9440`); may be the metrics'
    /// address. Off when not given.
    #[arg(long, value_name = "ADDR", value_parser = listen_address)]
    pub health_addr: Option<std::net::SocketAddr>,
}

/// `:8080` (every interface), `127.0.0.1:8080`, `[::1]:8080`.
fn listen_address(text: &str) -> Result<std::net::SocketAddr, String> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_string(),
    };
    full.parse().map_err(|_| {
        format!("{text:?}: give a port (:8080) or an address and port (127.0.0.1:8080)")
    })
}

#[derive(Debug, Args)]
pub struct InventoryArgs {
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: Output,
}

/// Which objects and clusters: what `get`, `rollout` and the actions select by.
#[derive(Debug, Args)]
pub struct Scope {
    /// The kind: ks, hr, gitrepo, ocirepo, helmrepo, hc, bucket … (kind, plural or short name),
    /// or `all`.
    pub kind: Option<String>,
    /// Only objects with this name.
    pub name: Option<String>,
    /// Only clusters of this workspace.
    #[arg(long)]
    pub workspace: Option<String>,
    /// Only clusters matching this glob (repeatable).
    #[arg(long = "cluster", value_name = "GLOB")]
    pub clusters: Vec<String>,
    /// Only objects in this namespace.
    #[arg(short, long)]
    pub namespace: Option<String>,
}

impl Scope {
    fn filter(&self, status: Option<Status>) -> Result<Filter, Usage> {
        let kind = match self.kind.as_deref() {
            None | Some("all") => None,
            Some(text) => {
                Some(FluxKind::parse(text).ok_or_else(|| Usage::NotAKind(text.to_string()))?)
            }
        };
        Ok(Filter {
            kind,
            name: self.name.clone(),
            workspace: self.workspace.clone(),
            clusters: self.clusters.clone(),
            namespace: self.namespace.clone(),
            status,
        })
    }
}

/// The selectors `get` and the actions share: the scope and a status.
#[derive(Debug, Args)]
pub struct Selectors {
    #[command(flatten)]
    pub scope: Scope,
    /// failing, stalled, suspended, progressing, ready, not-ready (or any other health).
    #[arg(long, value_parser = Status::parse)]
    pub status: Option<Status>,
}

impl Selectors {
    pub fn filter(&self) -> Result<Filter, Usage> {
        self.scope.filter(self.status)
    }
}

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
    #[arg(long, value_parser = Status::parse, value_name = "STATUS")]
    pub fail_on: Option<Status>,
    /// With --nats: what changed in the scope during this last while (2h, 30m), from the
    /// collectors' history, instead of the objects.
    #[arg(long, value_parser = duration, requires = "nats", conflicts_with_all = ["watch", "summary", "root_causes"])]
    pub since: Option<Duration>,
}

impl GetArgs {
    pub fn request(&self, fleet: &FleetArgs) -> Result<Request, String> {
        if self.root_causes && self.output == Output::Ndjson {
            return Err("--root-causes prints a table or JSON (-o table, -o json)".into());
        }
        Ok(Request {
            sources: fleet.sources(),
            filter: self.select.filter().map_err(|e| e.to_string())?,
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

/// `fluxfleet rollout`: the scope; a KIND and NAME open one object's matrix.
#[derive(Debug, Args)]
pub struct RolloutArgs {
    #[command(flatten)]
    pub scope: Scope,
    #[arg(short, long, value_enum, default_value = "table", value_parser = rollout_output)]
    pub output: Output,
    /// How long to wait for every cluster to answer.
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
}

impl RolloutArgs {
    pub fn request(&self, fleet: &FleetArgs) -> Result<crate::export::rollout::Request, Usage> {
        Ok(crate::export::rollout::Request {
            sources: fleet.sources(),
            filter: self.scope.filter(None)?,
            output: self.output,
            timeout: self.timeout,
        })
    }
}

/// `fluxfleet suspend | resume | reconcile`.
#[derive(Debug, Args)]
pub struct ActArgs {
    #[command(flatten)]
    pub select: Selectors,
    /// Suspend: why, recorded on the object (fluxfleet.dev/suspend-reason).
    #[arg(long)]
    pub reason: Option<String>,
    /// Reconcile: the source first (and a HelmRelease's generated HelmChart), then the object.
    #[arg(long)]
    pub with_source: bool,
    /// Reconcile a HelmRelease: a one-off install or upgrade even without changes.
    #[arg(long, conflicts_with_all = ["reset", "with_source"])]
    pub force: bool,
    /// Reconcile a HelmRelease: reset its failure counters so remediation retries start again.
    #[arg(long, conflicts_with = "with_source")]
    pub reset: bool,
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
}

impl ActArgs {
    pub fn request(
        &self,
        verb: Verb,
        fleet: &FleetArgs,
        ui: &UiArgs,
    ) -> Result<act::Request, String> {
        let verb = match verb {
            Verb::Reconcile if self.force => Verb::Force,
            Verb::Reconcile if self.reset => Verb::Reset,
            Verb::Reconcile if self.with_source => Verb::ReconcileWithSource,
            Verb::Reconcile => Verb::Reconcile,
            other if self.force || self.reset || self.with_source => {
                return Err(format!(
                    "--force, --reset and --with-source go with reconcile, not {other}"
                ));
            }
            other => other,
        };
        if self.reason.is_some() && verb != Verb::Suspend {
            return Err("--reason goes with suspend".into());
        }
        Ok(act::Request {
            sources: fleet.sources(),
            filter: self.select.filter().map_err(|e| e.to_string())?,
            verb,
            reason: self.reason.clone(),
            mode: ui.flag(),
            dry_run: self.dry_run,
            yes: self.yes,
            timeout: self.timeout,
            output: self.output,
        })
    }
}

/// JetStream keeps 1 to 5 copies of a stream.
fn replicas(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n @ 1..=5) => Ok(n),
        _ => Err(format!(
            "{s:?}: 1 to 5 (NATS keeps at most five copies of a stream)"
        )),
    }
}

fn duration(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s)
}
