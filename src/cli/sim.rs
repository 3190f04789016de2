//! `fluxfleet sim`: its options, and serving the simulated fleet until stopped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::edge::SimFailed;
use super::usage::duration;
use fluxfleet_sim as sim;

fn fault_spec(s: &str) -> Result<sim::faults::Spec, super::usage::Usage> {
    sim::faults::Spec::parse(s).map_err(super::usage::Usage::Faults)
}

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Number of workload clusters.
    #[arg(long, default_value_t = 20)]
    pub clusters: usize,
    /// Number of workspaces the clusters are spread over.
    #[arg(long, default_value_t = 4)]
    pub workspaces: usize,
    /// The place of the first cluster in the numbering: several simulators side by side (past
    /// one process's file descriptors) each serve their own part of one fleet, e.g.
    /// `--clusters 10000` and `--clusters 10000 --first-cluster 10000`.
    #[arg(long, default_value_t = 0)]
    pub first_cluster: usize,
    /// Flux objects per cluster.
    #[arg(long, default_value_t = 30)]
    pub objects: usize,
    /// Seed of the fleet's contents: the same seed gives the same fleet.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Directory for the kubeconfigs (created if missing).
    #[arg(long, default_value = "fluxfleet-sim")]
    pub out: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Give every cluster its own port instead of a `/clusters/<name>` path prefix.
    #[arg(long)]
    pub port_per_cluster: bool,
    /// What the fleet holds and how it moves: `story` (most clusters ready, a bad revision
    /// going out ring by ring, a flaky region, a few long-standing misconfigurations — what
    /// `fluxfleet demo` shows) or `uniform` (failures spread evenly, for load tests).
    #[arg(long, value_parser = sim::Scenario::parse, default_value = "story")]
    pub scenario: sim::Scenario,
    /// Faults per share of clusters, e.g. `unreachable=2%,slow=5%:800ms,flap=3%:20s,gone=1%,error5xx=1%,expired-token=1%,no-flux=1%,old-flux=5%,forbidden=1%:HelmRelease,old-kube=5%`.
    #[arg(long, value_parser = fault_spec, default_value = "")]
    pub faults: sim::faults::Spec,
    /// Failures and recoveries per second across the fleet; also starts rollouts. 0: a still fleet.
    #[arg(long, default_value_t = 0.0)]
    pub churn: f64,
    /// How long the simulated controllers take to handle a reconcile request.
    #[arg(long, value_parser = duration, default_value = "2s")]
    pub reconcile_delay: Duration,
    /// How often a new revision starts rolling out (with --churn).
    #[arg(long, value_parser = duration, default_value = "2m")]
    pub rollout_interval: Duration,
    /// Delay between workspaces during a rollout.
    #[arg(long, value_parser = duration, default_value = "15s")]
    pub rollout_step: Duration,
    /// Changes kept per cluster for watches to resume from; older resourceVersions get 410 Gone.
    #[arg(long, default_value_t = 512)]
    pub history: usize,
    /// How long changes are kept for watches to resume from, at most.
    #[arg(long, value_parser = duration, default_value = "90s")]
    pub history_age: Duration,
    /// Offer only HTTP/1.1 (ALPN), like API servers behind an HTTP/1.1-only proxy.
    #[arg(long)]
    pub http1_only: bool,
    /// The management cluster is a Kommander one (Workspace and KommanderCluster objects).
    #[arg(long)]
    pub kommander: bool,
    /// Share of clusters (0 to 1) running the Flux Operator, with a FluxInstance and a
    /// FluxReport.
    #[arg(long, default_value_t = 0.5)]
    pub operator: f64,
    /// How often the Flux Operator writes each cluster's FluxReport.
    #[arg(long, value_parser = duration, default_value = "10m")]
    pub report_every: Duration,
    #[command(flatten)]
    pub stop: super::process::StopArgs,
}

impl SimArgs {
    pub fn config(&self) -> sim::Config {
        sim::Config {
            clusters: self.clusters,
            first_cluster: self.first_cluster,
            workspaces: self.workspaces,
            objects: self.objects,
            seed: self.seed,
            out: self.out.clone(),
            listen: self.listen,
            port_per_cluster: self.port_per_cluster,
            faults: self.faults.clone(),
            churn: self.churn,
            reconcile_delay: self.reconcile_delay,
            rollout_interval: self.rollout_interval,
            rollout_step: self.rollout_step,
            history: self.history,
            history_age: self.history_age,
            http1_only: self.http1_only,
            kommander: self.kommander,
            operator: self.operator,
            report_every: self.report_every,
            scenario: self.scenario,
            ..sim::Config::default()
        }
    }
}

/// `fluxfleet sim`: serves until SIGINT or SIGTERM, then stops within `--shutdown-timeout`.
pub async fn run(args: SimArgs) -> Result<(), SimFailed> {
    // Signals are listened for before it says it is up: a supervisor may stop it right after
    // the line.
    let deadline = args.stop.shutdown_timeout;
    super::process::until_stopped("fluxfleet sim", deadline, |stop| serve(args, stop))
        .await
        .map_err(SimFailed::Signals)?
}

/// Serves the simulated fleet until `stop` is cancelled.
async fn serve(args: SimArgs, stop: CancellationToken) -> Result<(), SimFailed> {
    let config = args.config();
    let handle = sim::start(config.clone()).await.map_err(SimFailed::Start)?;
    println!(
        "fluxfleet sim: {} clusters in {} workspaces ({} objects each, the {} scenario) serving on {} — kubeconfigs in {} (fleet.kubeconfig, viewer.kubeconfig, management.kubeconfig), ready in {:.2?}",
        config.clusters,
        config.workspaces,
        config.objects,
        config.scenario.name(),
        handle.base_url,
        handle.files.dir.display(),
        handle.startup,
    );
    stop.cancelled().await;
    handle.shutdown().await;
    Ok(())
}
