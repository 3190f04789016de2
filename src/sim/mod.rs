//! The simulated fleet: a Kubernetes-API-compatible HTTPS server for Flux objects that serves
//! many virtual clusters from one process (DESIGN.md, "The simulated fleet").
//!
//! [`start`] builds the fleet, writes kubeconfigs and serves until [`Handle::shutdown`]. The same
//! entry point backs `fluxfleet sim`, the tests and `fluxfleet demo`.

mod api;
mod capi;
mod catalog;
mod clock;
mod controller;
mod discovery;
pub mod faults;
mod flux;
mod kubeconfig;
mod merge;
mod observe;
mod populate;
mod request;
mod resources;
mod rng;
mod selector;
mod server;
mod status;
mod store;
mod tls;
mod watch;
mod world;
mod write;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

pub use faults::Faults;
pub use observe::{TruthCluster, TruthObject};
use world::{Cluster, World, random_token};

/// Name of the management cluster's context (never a workload cluster's name).
pub const MANAGEMENT: &str = "management";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid simulation settings: {0}")]
    Config(String),
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot set up TLS: {0}")]
    Tls(String),
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Config {
    pub clusters: usize,
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
}

impl Default for Config {
    fn default() -> Config {
        Config {
            clusters: 20,
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
        }
    }
}

/// The files written for clients.
#[derive(Clone, Debug)]
pub struct Files {
    pub dir: PathBuf,
    /// Every workload cluster as a context, admin credentials.
    pub fleet: PathBuf,
    /// The same with read-only tokens.
    pub viewer: PathBuf,
    pub management: PathBuf,
    /// `kubeconfigs/<workspace>/<cluster>.yaml`, in cluster order.
    pub clusters: Vec<PathBuf>,
    /// The bearer token for `/sim/truth` and `/sim/stats`.
    pub sim_token: PathBuf,
}

/// A running simulation.
pub struct Handle {
    pub addr: SocketAddr,
    pub files: Files,
    /// `https://host:port` of the shared listener.
    pub base_url: String,
    world: Arc<World>,
    state: Arc<server::State>,
    shutdown: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    pub startup: Duration,
}

impl Handle {
    pub fn sim_token(&self) -> &str {
        &self.world.sim_token
    }

    /// What every cluster holds, as `/sim/truth` reports it.
    pub fn truth(&self) -> Vec<TruthCluster> {
        observe::truth(&self.world, None)
    }

    /// `/sim/stats` as JSON.
    pub fn stats(&self) -> serde_json::Value {
        observe::stats(&self.state)
    }

    /// Changes a cluster's faults while running (tests: expire its tokens, make it slow …).
    pub fn set_faults(&self, cluster: &str, faults: Faults) -> bool {
        let Some(c) = self.world.cluster(cluster) else {
            return false;
        };
        c.tokens_valid.store(
            faults.expired_token.is_none_or(|d| !d.is_zero()),
            std::sync::atomic::Ordering::Relaxed,
        );
        *c.faults.lock().unwrap_or_else(|p| p.into_inner()) = faults;
        true
    }

    /// Forgets a cluster's change history now: every watch gets 410 Gone and must relist.
    pub fn compact(&self, cluster: &str) -> bool {
        let Some(c) = self.world.cluster(cluster) else {
            return false;
        };
        let rv = {
            let mut s = c.store();
            s.compact();
            s.resource_version()
        };
        c.changed.send_modify(|v| *v = rv);
        true
    }

    pub fn cluster_names(&self) -> Vec<String> {
        self.world.workloads().map(|c| c.name.clone()).collect()
    }

    /// Stops serving and waits for the server tasks to end.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        for t in self.tasks {
            let _ = t.await;
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
const ENVS: &[&str] = &["prod", "prod", "staging", "dev"];
const REGIONS: &[&str] = &[
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

fn check(config: &Config) -> Result<(), Error> {
    let bad = |m: String| Err(Error::Config(m));
    if config.clusters == 0 {
        return bad("--clusters must be at least 1".into());
    }
    if config.workspaces == 0 || config.workspaces > config.clusters {
        return bad(format!(
            "--workspaces must be between 1 and the number of clusters ({})",
            config.clusters
        ));
    }
    if config.objects > 500 {
        return bad("--objects must be at most 500 per cluster".into());
    }
    if !(0.0..=100_000.0).contains(&config.churn) || config.churn.is_nan() {
        return bad("--churn must be between 0 and 100000 events per second".into());
    }
    Ok(())
}

fn write_file(path: &Path, contents: &str) -> Result<(), Error> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    // Kubeconfigs hold bearer tokens: owner-only, like kubectl writes them.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    f.write_all(contents.as_bytes()).map_err(io)
}

/// A port nothing listens on, for clusters that must be unreachable.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(1)
}

/// Builds the fleet, writes the files, and starts serving.
pub async fn start(config: Config) -> Result<Handle, Error> {
    let started = Instant::now();
    check(&config)?;
    std::fs::create_dir_all(&config.out).map_err(|source| Error::Io {
        path: config.out.clone(),
        source,
    })?;
    let probe = config.out.join(".fluxfleet-write-test");
    write_file(&probe, "")?;
    let _ = std::fs::remove_file(&probe);

    let tls = tls::generate(&[config.listen.ip().to_string()])?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Bind {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| Error::Bind {
        addr: config.listen,
        source,
    })?;
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let base_url = if addr.is_ipv6() {
        format!("https://[{host}]:{}", addr.port())
    } else {
        format!("https://{host}:{}", addr.port())
    };

    let workspaces = workspace_names(config.workspaces);
    let faults = config.faults.assign(config.clusters, config.seed);
    let limits = store::Limits {
        history: config.history,
        history_age: config.history_age,
        events: config.events_per_cluster,
    };
    let mut clusters = Vec::with_capacity(config.clusters + 1);
    for (i, f) in faults.into_iter().enumerate() {
        let ws = &workspaces[i % workspaces.len()];
        let env = ENVS[(i / workspaces.len()) % ENVS.len()];
        let region = REGIONS[(i / (workspaces.len() * ENVS.len())) % REGIONS.len()];
        let name = format!("{ws}-{env}-{:03}", i / workspaces.len() + 1);
        let labels = BTreeMap::from([
            ("env".to_string(), env.to_string()),
            ("region".to_string(), region.to_string()),
        ]);
        clusters.push(Arc::new(Cluster::new(
            i,
            name,
            ws.clone(),
            labels,
            false,
            (random_token(), random_token()),
            f,
            limits,
        )));
    }
    let mgmt_index = clusters.len();
    clusters.push(Arc::new(Cluster::new(
        mgmt_index,
        MANAGEMENT.into(),
        "management".into(),
        BTreeMap::new(),
        true,
        (random_token(), random_token()),
        Faults::default(),
        limits,
    )));
    let world = Arc::new(World::new(clusters, workspaces.clone()));
    let clock = clock::Clock::new(config.epoch);

    // Half the workspaces already run the newest revisions: a rollout is under way.
    let rings: Vec<usize> = (0..workspaces.len())
        .map(|w| {
            if w < workspaces.len().div_ceil(2) {
                2
            } else {
                1
            }
        })
        .collect();
    populate_all(&world, &config, &clock, &rings);

    // Per-cluster listeners, when asked for.
    let mut extra = Vec::new();
    let mut urls = Vec::with_capacity(world.clusters.len());
    for c in world.clusters.iter() {
        let url = if c.faults().unreachable {
            format!("https://127.0.0.1:{}/clusters/{}", closed_port(), c.name)
        } else if config.port_per_cluster {
            let l = TcpListener::bind((addr.ip(), 0))
                .await
                .map_err(|source| Error::Bind {
                    addr: SocketAddr::new(addr.ip(), 0),
                    source,
                })?;
            let port = l
                .local_addr()
                .map_err(|source| Error::Bind { addr, source })?
                .port();
            extra.push((l, c.index));
            format!("https://{host}:{port}")
        } else {
            format!("{base_url}/clusters/{}", c.name)
        };
        urls.push(url);
    }
    let files = write_files(&config, &world, &urls, &tls.ca_pem)?;
    populate_management(&world, &config, &clock, &urls, &tls.ca_pem);

    let shutdown = CancellationToken::new();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let state = Arc::new(server::State {
        world: world.clone(),
        stats: Arc::new(server::Stats::default()),
        timing: server::Timing {
            bookmark_interval: config.bookmark_interval,
            default_watch_timeout: Duration::from_secs(1800),
        },
        controller: tx,
        shutdown: shutdown.clone(),
    });
    let acceptor = TlsAcceptor::from(tls.server_config.clone());
    let mut tasks = vec![tokio::spawn(server::serve(
        listener,
        acceptor.clone(),
        state.clone(),
        None,
    ))];
    for (l, index) in extra {
        tasks.push(tokio::spawn(server::serve(
            l,
            acceptor.clone(),
            state.clone(),
            Some(index),
        )));
    }
    let settings = controller::Settings {
        seed: config.seed,
        churn: config.churn,
        reconcile_delay: config.reconcile_delay,
        rollout_interval: config.rollout_interval,
        rollout_step: config.rollout_step,
    };
    tasks.push(tokio::spawn(controller::run(
        world.clone(),
        clock,
        settings,
        rings,
        rx,
        shutdown.clone(),
    )));
    Ok(Handle {
        addr,
        files,
        base_url,
        world,
        state,
        shutdown,
        tasks,
        startup: started.elapsed(),
    })
}

/// Populates the workload clusters on all cores.
fn populate_all(world: &Arc<World>, config: &Config, clock: &clock::Clock, rings: &[usize]) {
    let workloads: Vec<&Arc<Cluster>> = world.workloads().collect();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(workloads.len().max(1));
    let chunk = workloads.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for part in workloads.chunks(chunk) {
            s.spawn(move || {
                for c in part {
                    let ring = world
                        .workspaces
                        .iter()
                        .position(|w| *w == c.workspace)
                        .map_or(0, |i| rings[i]);
                    populate::populate(c, config.seed, clock, config.objects, ring);
                }
            });
        }
    });
    for c in workloads {
        let rv = c.store().resource_version();
        c.notify(rv);
    }
}

fn write_files(config: &Config, world: &World, urls: &[String], ca: &str) -> Result<Files, Error> {
    use kubeconfig::{Entry, render};
    let dir = config.out.clone();
    let mut per_cluster = Vec::new();
    let (mut admin, mut viewer) = (Vec::new(), Vec::new());
    for c in world.workloads() {
        let url = &urls[c.index];
        let entry = Entry {
            name: &c.name,
            server: url,
            token: &c.admin_token,
            role: "admin",
        };
        let path = dir
            .join("kubeconfigs")
            .join(&c.workspace)
            .join(format!("{}.yaml", c.name));
        write_file(&path, &render(std::slice::from_ref(&entry), ca))?;
        per_cluster.push(path);
        admin.push(entry);
        viewer.push(Entry {
            name: &c.name,
            server: url,
            token: &c.viewer_token,
            role: "viewer",
        });
    }
    let fleet = dir.join("fleet.kubeconfig");
    write_file(&fleet, &render(&admin, ca))?;
    let viewer_path = dir.join("viewer.kubeconfig");
    write_file(&viewer_path, &render(&viewer, ca))?;
    let management = dir.join("management.kubeconfig");
    if let Some(m) = world.management() {
        let entry = Entry {
            name: &m.name,
            server: &urls[m.index],
            token: &m.admin_token,
            role: "admin",
        };
        write_file(&management, &render(&[entry], ca))?;
    }
    let sim_token = dir.join("sim-token");
    write_file(&sim_token, &world.sim_token)?;
    Ok(Files {
        dir,
        fleet,
        viewer: viewer_path,
        management,
        clusters: per_cluster,
        sim_token,
    })
}

/// The management cluster: a namespace per workspace, a CAPI Cluster and kubeconfig Secret per
/// workload cluster, and its own small Flux setup.
fn populate_management(
    world: &World,
    config: &Config,
    clock: &clock::Clock,
    urls: &[String],
    ca: &str,
) {
    let Some(m) = world.management() else { return };
    populate::populate(m, config.seed, clock, config.objects.min(8), 2);
    let mut rng = rng::Rng::fork(config.seed, "management");
    let mut store = m.store();
    populate::add_namespaces(
        &mut store,
        clock,
        world.workspaces.iter().map(String::as_str),
    );
    for c in world.workloads() {
        let labels = json!(c.labels.iter().collect::<BTreeMap<_, _>>());
        let cluster = capi::cluster(
            &mut rng,
            clock,
            &c.name,
            &c.workspace,
            &labels,
            !c.faults().unreachable,
        );
        store.put(resources::Res::CapiCluster, cluster, None);
        let entry = kubeconfig::Entry {
            name: &c.name,
            server: &urls[c.index],
            token: &c.admin_token,
            role: "admin",
        };
        let secret = capi::kubeconfig_secret(
            &mut rng,
            clock,
            &c.name,
            &c.workspace,
            &kubeconfig::render(&[entry], ca),
        );
        store.put(resources::Res::Secret, secret, None);
    }
    let rv = store.resource_version();
    drop(store);
    m.notify(rv);
}
