//! One opening of the fleet for every command that reads it: the TUI, `get`, `rollout`,
//! `inventory` and the actions. The global options decide where the fleet comes from: the bus
//! (`--nats` or `FLUXFLEET_NATS`), else kubeconfigs with their management clusters followed.

use std::path::PathBuf;

use crate::bus::reader::Bus;
use crate::config::{self, Config};
use crate::fleet::ClusterInfo;
use crate::inventory::Inventory;
use crate::k8s::management::Management;
use crate::source::Source;

use super::resolve::{Resolved, Sources, load_config, own_inventory, resolve};

/// What a user without a fleet is told, after where fluxfleet looked.
const NO_CLUSTERS: &str = "Try `fluxfleet demo` for a simulated fleet, pass --kubeconfig PATH or \
     --kubeconfig-dir DIR, or read collectors with --nats URL.";

/// The config and where the fleet comes from, with everything wrong about them.
pub struct Opened {
    pub config: Config,
    /// Where the config file is (its directory holds user themes), if there is one.
    pub config_path: Option<PathBuf>,
    /// Config warnings, then the problems of the inventory or of the bus, one line each (server
    /// text not yet escaped for a terminal).
    pub warnings: Vec<String>,
    /// Neither the config nor the fleet's source had a problem.
    pub clean: bool,
    pub fleet: Fleet,
}

/// Where the fleet's state comes from.
pub enum Fleet {
    /// Watched directly, each cluster through its kubeconfig; the management clusters are
    /// followed by the commands that keep running.
    Kubeconfigs {
        inventory: Inventory,
        managements: Vec<Management>,
    },
    /// Read from collectors through NATS. The user's own kubeconfigs reach the clusters they
    /// can, for events, YAML, plugins and actions: no socket to a cluster otherwise.
    Bus(Box<Bus>),
}

/// Opens the fleet the options name. Err: the bus named cannot be read (the variant says
/// whether to fix the options, start a collector, or try again).
pub async fn open(sources: &Sources) -> Result<Opened, crate::bus::BusError> {
    let Some(options) = &sources.nats else {
        let Resolved {
            config,
            config_path,
            inventory,
            managements,
            warnings,
            clean,
        } = resolve(sources).await;
        return Ok(Opened {
            config,
            config_path,
            warnings,
            clean,
            fleet: Fleet::Kubeconfigs {
                inventory,
                managements,
            },
        });
    };
    let bus = Bus::connect(options).await?;
    let (config, config_path, mut warnings) = load_config(sources);
    let clean = warnings.is_empty() && bus.problems.is_empty();
    warnings.extend(bus.problems.iter().map(|p| format!("NATS: {p}")));
    // The user's own kubeconfigs; their problems matter only when the user named them.
    let own = own_inventory(sources, &config);
    if !sources.kubeconfigs.is_empty() || !sources.dirs.is_empty() {
        warnings.extend(own.problems.iter().map(|p| p.to_string()));
    }
    let mut bus = bus.reaching(crate::k8s::direct::Direct::new(
        own.clusters,
        &config.engine,
    ));
    // The engine's decision: a fleet this large is shown by its collectors' counts, and only
    // the clusters opened have their objects read — where counts are what the command needs,
    // or the user asked for summaries.
    let reading = crate::config::Reading::Bus {
        counts_suffice: sources.counts_suffice,
    };
    if config.engine.summarizes(bus.states().count(), reading) {
        bus = bus.summarizing(config.engine.warm_clusters);
    }
    Ok(Opened {
        config,
        config_path,
        warnings,
        clean,
        fleet: Fleet::Bus(Box::new(bus)),
    })
}

impl Fleet {
    /// The clusters as the index will know them.
    pub fn clusters(&self) -> Vec<ClusterInfo> {
        match self {
            Fleet::Kubeconfigs { inventory, .. } => {
                inventory.clusters.iter().map(|c| c.info()).collect()
            }
            Fleet::Bus(bus) => bus.clusters(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Fleet::Kubeconfigs { inventory, .. } => inventory.clusters.is_empty(),
            Fleet::Bus(bus) => bus.states().next().is_none(),
        }
    }

    /// What to tell a user whose fleet is empty.
    pub fn empty_why(&self) -> String {
        match self {
            Fleet::Kubeconfigs { inventory, .. } => format!(
                "no clusters. Where fluxfleet looked for kubeconfigs, in order:\n  {}\n{NO_CLUSTERS}",
                inventory.looked.join("\n  ")
            ),
            Fleet::Bus(bus) => format!(
                "no clusters on the bus ({}): is a collector running (fluxfleet collect --nats)?",
                bus.bucket()
            ),
        }
    }

    /// The sources that feed a session: the kube engine with `settings` (following the
    /// management clusters when `follow`), or the bus (collectors decide what it holds).
    pub fn sources(self, settings: &config::EngineSection, follow: bool) -> Vec<Box<dyn Source>> {
        match self {
            Fleet::Kubeconfigs {
                inventory,
                managements,
            } => {
                let follow = if follow { &managements[..] } else { &[] };
                super::sources(&inventory, settings, follow)
            }
            Fleet::Bus(bus) => vec![bus],
        }
    }
}
