//! The command line: `fluxfleet [command]` (no command: the TUI). Each command offers only the
//! options it uses, declared once (`fleet.rs`: where the fleet comes from, how much is watched,
//! what may be changed) and flattened into the commands that use them. Options written before
//! the command are the command's, as if written after it; one the command does not take is a
//! usage error naming it. Each command's run lives beside its options; `dispatch` runs the one
//! asked for, and `main.rs` only calls it.

use clap::{Parser, Subcommand};

mod act;
mod alert;
mod collect;
pub mod dispatch;
pub mod edge;
pub mod fleet;
mod get;
mod mcp;
mod probes;
mod process;
pub use process::SHUTDOWN_TIMEOUT;
mod proposals;
pub mod scope;
mod sim;
mod trace;
mod tree;
mod tui;
pub mod usage;
mod workloads;

pub use act::{ActArgs, ReconcileArgs, SuspendArgs};
pub use alert::AlertArgs;
pub use collect::CollectArgs;
pub use get::{DriftArgs, GateArgs, GetArgs, InventoryArgs, RolloutArgs};
pub use mcp::McpArgs;
pub use proposals::{ApproveArgs, ProposalsArgs, RejectArgs};
pub use sim::SimArgs;
pub use trace::TraceArgs;
pub use tree::TreeArgs;
pub use tui::{DemoArgs, TuiArgs};
pub use workloads::WorkloadsArgs;

#[derive(Debug, Parser)]
#[command(
    name = "fluxfleet",
    version,
    about = "The Flux CD state of a whole fleet of Kubernetes clusters, in one terminal"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<CliCommand>,
    /// With no command: the TUI's options.
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl Cli {
    /// Parses the process's arguments (exiting with clap's message on a usage error), with
    /// `--version` naming the Flux API versions known.
    pub fn parse_args() -> Cli {
        Cli::parse_words(std::env::args_os()).unwrap_or_else(|e| e.exit())
    }

    /// Parses a command line: options before the command are moved after it, so that the
    /// command alone says which it takes.
    pub fn parse_words<I, T>(words: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        // Built once per process: clap keeps static text.
        static TEXT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
        let text = *TEXT.get_or_init(|| Box::leak(long_version().into_boxed_str()));
        let words: Vec<std::ffi::OsString> = words.into_iter().map(Into::into).collect();
        let command = || Cli::command().long_version(text);
        // A first, lenient look finds the command and the options written before it (a rule
        // of the command, such as `collect` needing --nats, may be met only once they move).
        let first = command().ignore_errors(true).try_get_matches_from(&words)?;
        let words = command_first(&words, &first).unwrap_or(words);
        let matches = command().try_get_matches_from(&words)?;
        Cli::from_arg_matches(&matches)
    }
}

/// `words` with the options written before the command moved after it, when there are any.
/// The command is the first word after the last one clap gave to an option of its own.
fn command_first(
    words: &[std::ffi::OsString],
    matches: &clap::ArgMatches,
) -> Option<Vec<std::ffi::OsString>> {
    let (name, _) = matches.subcommand()?;
    let last_own = matches
        .ids()
        .filter(|id| {
            matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
        })
        .filter_map(|id| matches.indices_of(id.as_str()))
        .flatten()
        .max()?;
    let at = (last_own + 1..words.len()).find(|&i| words[i] == name)?;
    let mut moved = vec![words[0].clone()];
    moved.extend_from_slice(&words[at..]);
    moved.extend_from_slice(&words[1..at]);
    Some(moved)
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

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// List Flux objects across the fleet, like `flux get` with WORKSPACE and CLUSTER columns.
    #[command(after_help = EXIT_CODES)]
    Get(GetArgs),
    /// Which revision runs where: per Kustomization, HelmRelease and source, the newest revision,
    /// how far it has spread, who is behind and who is stuck; with a NAME, its clusters ring by
    /// ring.
    #[command(after_help = EXIT_CODES)]
    Rollout(RolloutArgs),
    /// A check for a promotion pipeline: exit 0 only when REVISION runs on every cluster of
    /// RING (its Kustomizations and HelmReleases that carry it), ready, for at least --soak, with
    /// no failing root cause suspecting it; exit 6 and every reason otherwise.
    #[command(after_help = GATE_EXIT_CODES)]
    Gate(GateArgs),
    /// Same revision, different result: per Kustomization and HelmRelease, the copies on one
    /// revision that applied something other than most of them (the digest of the manifests in
    /// `status.history`, a release's config digest), with their clusters; and the HelmReleases
    /// whose live objects drifted (Drifted=True). Exit 8 when any is found.
    #[command(after_help = DRIFT_EXIT_CODES)]
    Drift(DriftArgs),
    /// What broke inside a Kustomization or HelmRelease: its workloads (Deployments, StatefulSets,
    /// DaemonSets, Jobs), their pods, Warning events and log tails, read from every cluster in
    /// the scope where it is not ready, and the same verdict on many clusters folded into one
    /// line.
    #[command(after_help = workloads::EXIT_CODES)]
    Workloads(WorkloadsArgs),
    /// Where an object comes from, on every cluster: its owners up to what Flux applied, the
    /// Kustomization or HelmRelease that applied it (and the one above), their sources and
    /// revisions, as `flux trace` says it — the copies grouped by chain, the majority first,
    /// every other chain named with its clusters. Exit 9 when the copies differ.
    #[command(after_help = trace::EXIT_CODES)]
    Trace(TraceArgs),
    /// What a Kustomization or HelmRelease put on every cluster, as `flux tree` draws it: its
    /// inventory, the Kustomizations and HelmReleases in it followed down — one tree for the
    /// fleet, each node on how many clusters and ready on how many, the nodes some clusters lack
    /// named with them. Exit 9 when the clusters' trees differ.
    #[command(after_help = tree::EXIT_CODES)]
    Tree(TreeArgs),
    /// Print the resolved fleet (cluster, workspace, server, labels, source) without watching it.
    #[command(after_help = EXIT_CODES)]
    Inventory(InventoryArgs),
    /// Suspend Flux objects across the fleet (spec.suspend, with who and why recorded on them).
    Suspend(SuspendArgs),
    /// Resume suspended Flux objects, and request a reconcile so they move at once.
    Resume(ActArgs),
    /// Request a reconcile of Flux objects and wait until their controllers have handled it.
    Reconcile(ReconcileArgs),
    /// Send one alert per failing root cause across the fleet to Alertmanager (--alertmanager
    /// URL), with its suspect change and blast radius; resolved when the cause clears.
    Alert(AlertArgs),
    /// Serve the fleet to an assistant: a Model Context Protocol server on stdin and stdout,
    /// with tools for the summary, clusters, objects, root causes, rollouts and one object's
    /// events and YAML, every call naming its own scope. Read-only unless started with
    /// --propose (suspend, resume and reconcile make proposals a person approves) or --write
    /// (automation: they act, each a dry run first).
    Mcp(McpArgs),
    /// The proposals assistants made through `fluxfleet mcp --propose`, newest first: status,
    /// action, targets, who proposed and why; with an ID, its targets and exact patches.
    Proposals(ProposalsArgs),
    /// Approve a pending proposal: planned again on the fleet as it is now, it acts only if
    /// that is exactly what was proposed (else it is refused, saying what changed), through the
    /// guardrails and the journal, which names the proposer and the approver.
    Approve(ApproveArgs),
    /// Reject a pending proposal, with a reason the assistant reads.
    Reject(RejectArgs),
    /// Serve a simulated fleet of Kubernetes API servers running Flux, and write kubeconfigs for it.
    Sim(SimArgs),
    /// Watch this collector's share of the fleet and publish it to NATS JetStream (--nats URL):
    /// the latest state of every object in a KV bucket, what changed in a stream. Run several:
    /// they share the fleet and take over each other's clusters.
    #[command(mut_arg("nats", |a| a.required(true)))]
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

const DRIFT_EXIT_CODES: &str = "Exit codes: 0 every copy on a revision agrees, 1 error, 2 usage, 3 \
inventory or config problems (or no clusters), 4 some clusters not live, 8 drift found.";

const GATE_EXIT_CODES: &str = "Exit codes: 0 open, 1 error, 2 usage, 3 inventory or config \
problems (or no clusters), 6 closed (not yet: the reasons are printed).";
