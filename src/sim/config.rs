//! What to simulate: the simulator's settings, checked, and the workspaces' names.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::Error;
use crate::faults;
use crate::scenario::Scenario;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Config {
    pub clusters: usize,
    /// The place of the first cluster in the numbering (several simulators, one fleet).
    pub first_cluster: usize,
    pub workspaces: usize,
    /// Flux objects per workload cluster.
    pub objects: usize,
    pub seed: u64,
    /// Where kubeconfigs are written.
    pub out: PathBuf,
    pub listen: SocketAddr,
    /// Give every cluster its own port instead of a path prefix.
    pub port_per_cluster: bool,
    pub faults: faults::Spec,
    /// Failures and recoveries per second across the fleet (0: a still fleet, no rollouts).
    pub churn: f64,
    pub reconcile_delay: Duration,
    pub rollout_interval: Duration,
    pub rollout_step: Duration,
    pub bookmark_interval: Duration,
    /// Changes kept per cluster for watches to resume from; older ones get 410 Gone …
    pub history: usize,
    /// … and for at most this long.
    pub history_age: Duration,
    pub events_per_cluster: usize,
    /// Unix seconds to use as "now" at start (None: the wall clock). Pinned in tests.
    pub epoch: Option<i64>,
    /// Offer only `http/1.1` in ALPN, like API servers behind an HTTP/1.1-only proxy.
    pub http1_only: bool,
    /// The management cluster is a Kommander one: a `Workspace` per workspace namespace (with a
    /// display name) and a joined `KommanderCluster` per cluster.
    pub kommander: bool,
    /// Two levels of management: `management` holds half the workload clusters and a second
    /// management cluster, `management-eu`, which holds the other half — and, as a trap for
    /// discovery, a Cluster pointing back at `management`.
    pub nested: bool,
    /// The share of workload clusters (0 to 1) running the Flux Operator, with a FluxInstance
    /// and a FluxReport.
    pub operator: f64,
    /// How often the operator writes its report (`fluxcd.controlplane.io/reconcileEvery`).
    pub report_every: Duration,
    /// What the fleet holds and how it moves: evenly spread failures (the default, for load
    /// tests), or the demo's story.
    pub scenario: Scenario,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            clusters: 20,
            first_cluster: 0,
            workspaces: 4,
            objects: 30,
            seed: 1,
            out: PathBuf::from("fluxfleet-sim"),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            port_per_cluster: false,
            faults: faults::Spec::default(),
            churn: 0.0,
            reconcile_delay: Duration::from_secs(2),
            rollout_interval: Duration::from_secs(120),
            rollout_step: Duration::from_secs(15),
            bookmark_interval: Duration::from_secs(60),
            history: 512,
            history_age: Duration::from_secs(90),
            events_per_cluster: 40,
            epoch: None,
            http1_only: false,
            kommander: false,
            nested: false,
            operator: 0.5,
            report_every: Duration::from_secs(600),
            scenario: Scenario::Uniform,
        }
    }
}

const WORKSPACES: &[&str] = &[
    "platform",
    "payments",
    "retail",
    "data",
    "identity",
    "search",
    "media",
    "logistics",
    "security",
    "ml",
    "edge",
    "core",
];
pub(crate) const ENVS: &[&str] = &["prod", "prod", "staging", "dev"];
pub(crate) const REGIONS: &[&str] = &[
    "eu-west-1",
    "eu-central-1",
    "us-east-1",
    "us-west-2",
    "ap-southeast-1",
];

pub fn workspace_names(n: usize) -> Vec<String> {
    (0..n)
        .map(
            |i| match (WORKSPACES.get(i % WORKSPACES.len()), i / WORKSPACES.len()) {
                (Some(w), 0) => w.to_string(),
                (Some(w), round) => format!("{w}-{}", round + 1),
                (None, _) => format!("ws-{i}"),
            },
        )
        .collect()
}

impl Config {
    /// Settings that make no fleet, refused with what is wrong.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::Config(m));
        if self.clusters == 0 {
            return bad("--clusters must be at least 1".into());
        }
        if self.workspaces == 0 || self.workspaces > self.clusters {
            return bad(format!(
                "--workspaces must be between 1 and the number of clusters ({})",
                self.clusters
            ));
        }
        if self.objects > 500 {
            return bad("--objects must be at most 500 per cluster".into());
        }
        if !(0.0..=100_000.0).contains(&self.churn) || self.churn.is_nan() {
            return bad("--churn must be between 0 and 100000 events per second".into());
        }
        if !(0.0..=1.0).contains(&self.operator) || self.operator.is_nan() {
            return bad("--operator must be a share between 0 and 1".into());
        }
        if self.report_every.is_zero() {
            return bad("--report-every must be longer than zero".into());
        }
        Ok(())
    }
}
