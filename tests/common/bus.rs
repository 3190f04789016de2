//! Collectors and readers of the bus as the tests run them: a collector on a simulated fleet, a
//! reader's view of the bus, the simulator's truth in the same shape, and waiting for the two to
//! agree.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use fluxfleet::bus::{self, collector, wire};
use fluxfleet::fleet::Health;
use fluxfleet::inventory::ClusterSpec;
use fluxfleet::session::Session;
use tokio_util::sync::CancellationToken;

use super::truth::seen;

/// What each cluster holds: its objects by kind, namespace, name and health.
pub type View = BTreeMap<String, BTreeSet<(String, String, String, Health)>>;

/// Short, for handovers within seconds; not shorter: on two busy cores a collector's renewal
/// can come a second or two late, and the others would take it for dead.
pub const TTL: Duration = Duration::from_secs(5);

pub struct Running {
    pub stop: CancellationToken,
    pub task: tokio::task::JoinHandle<Result<(), bus::BusError>>,
    /// What its probes answer (`/readyz`, `/healthz`).
    pub status: std::sync::Arc<collector::status::StatusBoard>,
}

pub fn start_collector(
    id: &str,
    options: &bus::Options,
    inventory: &fluxfleet::inventory::Inventory,
) -> Running {
    start_collector_with(id, options, inventory, 1)
}

/// A collector whose buckets keep `replicas` copies on a NATS cluster.
pub fn start_collector_with(
    id: &str,
    options: &bus::Options,
    inventory: &fluxfleet::inventory::Inventory,
    replicas: usize,
) -> Running {
    start_collector_of(id, options, inventory, replicas, super::engine_settings())
}

/// A collector whose engine runs with `settings`.
pub fn start_collector_of(
    id: &str,
    options: &bus::Options,
    inventory: &fluxfleet::inventory::Inventory,
    replicas: usize,
    settings: fluxfleet::config::EngineSection,
) -> Running {
    let stop = CancellationToken::new();
    let request = collector::Collecting {
        options: options.clone(),
        id: id.to_string(),
        retention: bus::Retention {
            history: Duration::from_secs(3600),
            history_max_bytes: 1 << 30,
            ttl: TTL,
            replicas,
        },
        clusters: by_name(inventory),
        reread: reread_of(inventory),
        settings,
        refresh: None,
        shutdown: Duration::from_secs(10),
        status: Default::default(),
        rings: None,
    };
    Running {
        status: request.status.clone(),
        task: tokio::spawn(collector::run(request, stop.clone())),
        stop,
    }
}

/// The tests that run a simulated fleet with collectors that take clusters over, or a NATS
/// cluster whose nodes are killed, take turns: on two cores, two of them at once starve each
/// other's collectors of the time to announce themselves, and a failover of the time to agree.
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    SERIAL.lock().await
}

/// The clusters as `fluxfleet collect` is given them: by name, the credentials of those from
/// kubeconfig files not read (each collector reads those of the clusters it takes).
pub fn by_name(inventory: &fluxfleet::inventory::Inventory) -> Vec<ClusterSpec> {
    inventory
        .clusters
        .iter()
        .map(|c| match c.discovered {
            None => c.clone().without_credentials(),
            Some(_) => c.clone(),
        })
        .collect()
}

/// Where a collector reads again the credentials of `inventory`'s clusters: their files.
pub fn reread_of(inventory: &fluxfleet::inventory::Inventory) -> fluxfleet::inventory::Reread {
    let files: BTreeSet<std::path::PathBuf> = inventory
        .clusters
        .iter()
        .map(|c| c.source.clone())
        .collect();
    fluxfleet::inventory::Reread {
        request: fluxfleet::inventory::Lookup {
            kubeconfigs: files.into_iter().collect(),
            ..Default::default()
        },
        config: fluxfleet::config::Config::defaults(),
    }
}

/// The simulator's truth, for the clusters of the inventory.
pub fn truth(sim: &super::Sim, names: &BTreeSet<String>) -> View {
    sim.handle
        .truth()
        .into_iter()
        .filter(|c| names.contains(&c.name))
        .map(|c| {
            let objects = c
                .objects
                .iter()
                .map(|o| {
                    (
                        o.kind.clone(),
                        o.namespace.clone(),
                        o.name.clone(),
                        seen(o.health),
                    )
                })
                .collect();
            (c.name, objects)
        })
        .collect()
}

/// What `index` shows, in the shape of the truth (retired clusters left out).
pub fn view_of(index: &fluxfleet::fleet::Index) -> View {
    index
        .clusters()
        .iter()
        .filter(|c| !c.retired)
        .map(|c| {
            let objects = c
                .objects
                .values()
                .map(|o| {
                    (
                        o.key.kind.as_str().to_string(),
                        o.key.namespace.to_string(),
                        o.key.name.to_string(),
                        o.health,
                    )
                })
                .collect();
            (c.info.name.clone(), objects)
        })
        .collect()
}

/// What a new reader sees: the bus read whole, as `get --nats` reads it.
pub async fn read(options: &bus::Options) -> Result<View, bus::BusError> {
    let bus = bus::reader::Bus::connect(options).await?;
    let mut session = Session::start(vec![Box::new(bus)]);
    session.settle(Duration::from_secs(10)).await;
    let view = view_of(&session.index);
    session.shutdown().await;
    Ok(view)
}

/// Which collector each cluster's state names.
pub async fn collectors(options: &bus::Options) -> BTreeMap<String, wire::ClusterState> {
    let client = bus::connect(options, "test").await.unwrap();
    let stores = bus::open(client, options, None).await.unwrap();
    bus::last_values(&stores, "c.*")
        .await
        .unwrap()
        .into_iter()
        .map(|(_, v)| {
            let s: wire::ClusterState = wire::read(&v).unwrap();
            (s.name.clone(), s)
        })
        .collect()
}

/// Waits until `ok` says nothing is wrong, or fails with what it last said.
pub async fn until<F, Fut>(what: &str, within: Duration, mut ok: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<String>>,
{
    let deadline = Instant::now() + within;
    loop {
        let Some(wrong) = ok().await else {
            return;
        };
        assert!(Instant::now() < deadline, "{what}: {wrong}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Waits until a new reader's view equals the truth.
pub async fn until_truth(
    what: &str,
    options: &bus::Options,
    sim: &super::Sim,
    names: &BTreeSet<String>,
    within: Duration,
) {
    until(what, within, || async {
        match read(options).await {
            Ok(view) => difference(&view, &truth(sim, names)),
            Err(e) => Some(e.to_string()),
        }
    })
    .await;
}

/// Where a reader's view and the truth differ, briefly.
pub fn difference(view: &View, truth: &View) -> Option<String> {
    if view == truth {
        return None;
    }
    let missing: Vec<&String> = truth.keys().filter(|k| !view.contains_key(*k)).collect();
    let wrong: Vec<&String> = truth
        .iter()
        .filter(|(k, v)| view.get(*k).is_some_and(|w| w != *v))
        .map(|(k, _)| k)
        .collect();
    // The first differing cluster whole: what only the view has, what only the truth has.
    let first = wrong.first().map(|k| {
        let (seen, meant) = (&view[*k], &truth[*k]);
        format!(
            "; {k}: {} objects seen of {}, only seen {:?}, only true {:?}",
            seen.len(),
            meant.len(),
            seen.difference(meant).take(3).collect::<Vec<_>>(),
            meant.difference(seen).take(3).collect::<Vec<_>>()
        )
    });
    Some(format!(
        "{} clusters seen of {}; missing {:?}…; {} differing {:?}…{}",
        view.len(),
        truth.len(),
        missing.iter().take(3).collect::<Vec<_>>(),
        wrong.len(),
        wrong.iter().take(3).collect::<Vec<_>>(),
        first.unwrap_or_default()
    ))
}

/// The binary as a user of the bus runs it, with a kubeconfig of the whole fleet at hand (as a
/// user of both has) and bucket "fleet" — never the developer's own config, bus or kubeconfig.
pub fn command(kubeconfigs: &std::path::Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"));
    cmd.env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env("HOME", "/nonexistent-home")
        .env("FLUXFLEET_DATA_DIR", kubeconfigs.with_file_name("data"))
        .env_remove("FLUXFLEET_NATS")
        .env_remove("KUBECONFIG")
        .kill_on_drop(true)
        .arg("--kubeconfig-dir")
        .arg(kubeconfigs)
        .args(["--bucket", "fleet"]);
    cmd
}

/// A NATS server, the simulated fleet, and one collector publishing all of it to the bucket
/// `fleet`: ready once the bus holds the fleet.
pub struct Published {
    pub nats: super::nats::NatsServer,
    pub options: bus::Options,
    pub sim: super::Sim,
    pub inventory: fluxfleet::inventory::Inventory,
    pub collector: Running,
}

pub async fn published() -> Published {
    published_with(|_| {}).await
}

/// [`published`], of a simulator `configure`d.
pub async fn published_with(configure: impl FnOnce(&mut fluxfleet_sim::Config)) -> Published {
    let nats = super::nats::NatsServer::start();
    let options = bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        ..Default::default()
    };
    let sim = super::start_with(configure).await;
    let inventory = super::fleet_of(&sim);
    let names = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let collector = start_collector("only", &options, &inventory);
    let within = Duration::from_secs(30);
    until_truth("the bus holds the fleet", &options, &sim, &names, within).await;
    Published {
        nats,
        options,
        sim,
        inventory,
        collector,
    }
}
