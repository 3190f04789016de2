//! The simulated fleet: a Kubernetes-API-compatible HTTPS server for Flux objects that serves
//! many virtual clusters from one process (DESIGN.md, "The simulated fleet"). A crate of its own:
//! it knows Flux from its own statement of the facts ([`facts`]), never from the client's tables.
//!
//! [`start`] builds the fleet, writes kubeconfigs and serves until [`Handle::shutdown`]. The same
//! entry point backs `fluxfleet sim`, the tests and `fluxfleet demo`.
//!
//! Module map, lowest floor first. A module imports only from its own floor or the floors below
//! it, and no two files import each other (fluxfleet's `tests/imports.rs` checks both; a
//! bullet's modules are those named before its dash).
//! - [`facts`], `rng`, `clock`, `body`, `status`, `merge` — leaves: the Flux facts served (kinds,
//!   versions, dependsOn), seeded randomness, the simulated clock, response bodies, the API's
//!   `Status` errors, JSON merge and strategic patches.
//! - `flux`, [`faults`], [`scenario`], `resources`, `selector`, `catalog` — Flux status blocks
//!   as the controllers write them, the faults a cluster can have, what the fleet holds and how
//!   it moves (uniform, or the demo's story), the API resources a cluster serves,
//!   label and field selectors, the catalog of sources, charts and apps a fleet is made of.
//! - `store`, `config` — one cluster's objects, each with what the simulator means it to be;
//!   what to simulate, checked, and the workspaces' names.
//! - `world`, `tls`, `kubeconfig`, `files` — the fleet and its clusters, the CA and the
//!   certificates it issues, the kubeconfigs and where they are written.
//! - `populate`, `revisions`, `operator`, `capi`, `request`, `rbac` — a cluster's contents (Flux
//!   objects and the revisions they are at, the Flux Operator's FluxInstance and FluxReport,
//!   Cluster API and Kommander objects on the management cluster), a request read into what
//!   it asks for, and who may ask it.
//! - `controller` — the simulated controllers: reconcile, suspend and resume, dependsOn, churn
//!   and rollouts.
//! - `state` — what every connection shares: the world, the controllers, the counters.
//! - `workloads`, `discovery`, `list`, `watch`, `write`, `observe` — the API's answers: the
//!   workloads behind the Flux objects (derived on every request, read-only), discovery, lists,
//!   watches with bookmarks and 410 Gone, patches and writes, `/sim/truth` and `/sim/stats`.
//! - `injected`, `hangup` — a cluster's faults on the way of every request: seats (429),
//!   delays, 503s; and on its connections: GOAWAY (`drain`, `handover`), silence.
//! - `api` — a request routed to its answer, with the faults applied.
//! - `server`, `handle` — connections served over TLS, HTTP/2 and HTTP/1.1; the running fleet.

mod api;
mod body;
mod capi;
mod catalog;
mod clock;
mod config;
mod controller;
mod discovery;
pub mod facts;
pub mod faults;
mod files;
mod flux;
mod handle;
mod hangup;
mod injected;
mod kubeconfig;
mod list;
mod merge;
mod observe;
mod operator;
mod populate;
mod rbac;
mod request;
mod resources;
mod revisions;
mod rng;
pub mod scenario;
mod selector;
mod server;
mod state;
mod status;
mod store;
mod tls;
mod watch;
mod workloads;
mod world;
mod write;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

pub use config::{Config, workspace_names};
use config::{ENVS, REGIONS};
pub use faults::Faults;
pub use files::{Files, private_dir};
pub use flux::outage::Outage;
pub use handle::Handle;
pub use observe::{TruthCluster, TruthObject, TruthStuck, TruthWorkload};
pub use scenario::Scenario;
pub use tls::{CertVersion, ClientIdentity};
pub use world::Role;
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
    config.check()?;
    std::fs::create_dir_all(&config.out).map_err(|source| Error::Io {
        path: config.out.clone(),
        source,
    })?;
    let probe = config.out.join(".fluxfleet-write-test");
    files::write_file(&probe, "")?;
    let _ = std::fs::remove_file(&probe);

    let mut tls = tls::generate(&[config.listen.ip().to_string()])?;
    if config.http1_only {
        let mut server = (*tls.server_config).clone();
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        tls.server_config = Arc::new(server);
    }
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

    let (world, workspaces) = build_world(&config);
    let clock = clock::Clock::new(config.epoch);
    let world = Arc::new(world.with_clock(clock.clone()));
    // Half the workspaces already run the newest revisions: a rollout is under way.
    let rings: Vec<usize> = (0..workspaces)
        .map(|w| if w < workspaces.div_ceil(2) { 2 } else { 1 })
        .collect();
    populate::populate_all(&world, config.seed, config.objects, &clock, &rings);
    for c in world.workloads() {
        operator::install(c, &clock, config.report_every);
    }

    let (base_url, urls, extra) = cluster_urls(&world, &config, addr).await?;
    let files = files::write_files(&config.out, &world, &urls, &tls.ca_pem)?;
    capi::populate_management(
        &world,
        config.seed,
        config.objects,
        &clock,
        &urls,
        &tls.ca_pem,
        config.kommander,
    );

    let listeners = Listeners {
        shared: listener,
        own: extra,
    };
    let (state, shutdown, tasks) = serve(&config, &world, clock, rings, &tls, listeners);
    Ok(Handle {
        addr,
        files,
        base_url,
        world,
        state,
        shutdown,
        tasks,
        tls,
        startup: started.elapsed(),
    })
}

/// Where the fleet is served: the shared address, and the clusters with a port of their own.
struct Listeners {
    shared: TcpListener,
    own: Vec<(TcpListener, usize)>,
}

/// Starts serving the fleet and running its controllers: the state every connection shares,
/// the token that stops them, and their tasks.
fn serve(
    config: &Config,
    world: &Arc<World>,
    clock: clock::Clock,
    rings: Vec<usize>,
    tls: &tls::Tls,
    listeners: Listeners,
) -> (
    Arc<state::State>,
    CancellationToken,
    Vec<tokio::task::JoinHandle<()>>,
) {
    let shutdown = CancellationToken::new();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let state = Arc::new(state::State {
        world: world.clone(),
        stats: Arc::new(state::Stats::default()),
        timing: state::Timing {
            bookmark_interval: config.bookmark_interval,
            default_watch_timeout: Duration::from_secs(1800),
        },
        controller: tx,
        shutdown: shutdown.clone(),
        clients: tls.clients.clone(),
    });
    let acceptor = TlsAcceptor::from(tls.server_config.clone());
    let mut tasks = vec![tokio::spawn(server::serve(
        listeners.shared,
        acceptor.clone(),
        state.clone(),
        None,
    ))];
    for (l, index) in listeners.own {
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
        report_every: config.report_every,
    };
    tasks.push(tokio::spawn(controller::run(
        world.clone(),
        clock,
        settings,
        rings,
        rx,
        shutdown.clone(),
    )));
    (state, shutdown, tasks)
}

/// The fleet's clusters, empty: workload clusters named `<workspace>-<env>-<NNN>` with their
/// faults, then the management clusters, the top one last. Also the number of workspaces.
pub(crate) fn build_world(config: &Config) -> (World, usize) {
    let workspaces = workspace_names(config.workspaces);
    let limits = store::Limits {
        history: config.history,
        history_age: config.history_age,
        events: config.events_per_cluster,
    };
    // Name, workspace, environment and region of each workload cluster.
    let first = config.first_cluster;
    let places: Vec<(String, &String, &str, &str)> = (first..first + config.clusters)
        .map(|i| {
            let ws = &workspaces[i % workspaces.len()];
            let env = ENVS[(i / workspaces.len()) % ENVS.len()];
            let region = REGIONS[(i / (workspaces.len() * ENVS.len())) % REGIONS.len()];
            let name = format!("{ws}-{env}-{:03}", i / workspaces.len() + 1);
            (name, ws, env, region)
        })
        .collect();
    let cast = (config.scenario == Scenario::Story).then(|| {
        let extras: Vec<scenario::Extra> = places
            .iter()
            .enumerate()
            .map(|(index, (name, _, env, region))| scenario::Extra {
                index,
                name,
                env,
                region,
            })
            .collect();
        scenario::Cast::pick(config.seed, &extras)
    });
    let faults = config.faults.assign(config.clusters, config.seed);
    let mut clusters = Vec::with_capacity(config.clusters + 1);
    for (i, (f, (name, ws, env, region))) in faults.into_iter().zip(places).enumerate() {
        let f = match &cast {
            Some(cast) => cast.faults(i, f),
            None => f,
        };
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
            operator::runs_on(i, config.operator),
        )));
    }
    let mut managements = vec![MANAGEMENT.to_string()];
    if config.nested {
        managements.insert(0, format!("{MANAGEMENT}-eu"));
    }
    for name in managements {
        let index = clusters.len();
        clusters.push(Arc::new(Cluster::new(
            index,
            name,
            "management".into(),
            BTreeMap::new(),
            true,
            (random_token(), random_token()),
            Faults::default(),
            limits,
            false,
        )));
    }
    let count = workspaces.len();
    let world = World::new(clusters, workspaces);
    match cast {
        Some(cast) => (world.with_story(cast), count),
        None => (world, count),
    }
}

/// Where each cluster is served: a path under the shared address, a port of its own (with
/// `port_per_cluster`; the listeners returned with the cluster's index), or a closed port for
/// an unreachable one. Also the shared address's URL.
async fn cluster_urls(
    world: &World,
    config: &Config,
    addr: SocketAddr,
) -> Result<(String, Vec<String>, Vec<(TcpListener, usize)>), Error> {
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
    Ok((base_url, urls, extra))
}
