//! One resolution of the config and the fleet for every command: the config file (`--config`,
//! else `FLUXFLEET_CONFIG`, else the platform config directory), then the inventory from the
//! command line or the config's sources, extended with the clusters of management clusters.

use std::path::PathBuf;

use crate::config::{self, Config};
use crate::inventory::{self, Inventory};
use crate::k8s::management::{self, Management};

/// Where the fleet comes from (the options every command shares).
#[derive(Clone, Debug, Default)]
pub struct Sources {
    pub kubeconfigs: Vec<PathBuf>,
    pub dirs: Vec<PathBuf>,
    pub contexts: Vec<String>,
    pub config: Option<PathBuf>,
    /// `--management` contexts.
    pub managements: Vec<String>,
    pub workspace_label: Option<String>,
    pub management_depth: usize,
    /// `--watch-mode`, over `engine.watch`.
    pub watch: Option<config::WatchMode>,
    /// `--nats`: the fleet comes from collectors, not from kubeconfigs.
    pub nats: Option<crate::bus::Options>,
    /// The command needs the clusters' counts, not every object (the TUI, which reads the
    /// clusters opened; `get --summary`): a reader of the bus may then summarize a fleet past
    /// `engine.summary_above`. Commands that list objects, root causes or rollouts read every
    /// object the collectors hold unless `--watch-mode summary` says otherwise.
    pub counts_suffice: bool,
    /// The fleet is the command line's alone (the demo's simulator): the config's `[[sources]]`
    /// add neither kubeconfigs nor management clusters.
    pub command_line_only: bool,
    /// The kubeconfigs' clusters by name, their credentials not kept ([`inventory::list`]): a
    /// collector reads those of the clusters it takes ([`reread`]). Management clusters, and
    /// the clusters found on them, come with theirs.
    pub names_first: bool,
}

/// The config and the fleet, with everything wrong about them.
pub struct Resolved {
    pub config: Config,
    /// Where the config file is (its directory holds user themes), if there is one.
    pub config_path: Option<PathBuf>,
    pub inventory: Inventory,
    /// The management clusters read, to follow while running.
    pub managements: Vec<Management>,
    /// Config warnings, then inventory problems and warnings, one line each (server text not
    /// yet escaped for a terminal).
    pub warnings: Vec<String>,
    /// Neither the config nor an inventory source had a problem (warnings of the inventory,
    /// such as an http:// server with credentials, do not count).
    pub clean: bool,
}

/// Loads the config and the inventory, and reads the management clusters named.
pub async fn resolve(sources: &Sources) -> Resolved {
    let (config, config_path, config_warnings) = load_config(sources);
    let mut inventory = own_inventory(sources, &config);
    let managements = managements(sources, &config);
    if sources.names_first && !managements.is_empty() {
        read_managements(&mut inventory, &managements, &reread(sources));
    }
    management::extend(&mut inventory, &config.engine, &managements).await;
    let clean = config_warnings.is_empty() && inventory.problems.is_empty();
    let mut warnings = config_warnings;
    warnings.extend(
        inventory
            .problems
            .iter()
            .chain(&inventory.warnings)
            .map(|p| p.to_string()),
    );
    Resolved {
        config,
        config_path,
        inventory,
        managements,
        warnings,
        clean,
    }
}

/// What the fleet `resolve` would read is made of, as it is now: the config file and every
/// kubeconfig file, each with its size and modification time. None when the fleet also comes
/// from management clusters (what they hold changes without a file changing): then only a
/// new resolution says.
pub fn stamp(sources: &Sources) -> Option<Vec<inventory::FileStamp>> {
    let (config, config_path, _) = load_config(sources);
    if !managements(sources, &config).is_empty() {
        return None;
    }
    let mut stamps = inventory::stamp(&request(sources), &config);
    stamps.extend(config_path.as_deref().map(inventory::stamp_of));
    Some(stamps)
}

/// The config the options name (`--config`, else `FLUXFLEET_CONFIG`, else the platform's config
/// directory), `--watch-mode` over its `engine.watch`, with where it is and what is wrong with it
/// (one line each).
pub fn load_config(sources: &Sources) -> (Config, Option<PathBuf>, Vec<String>) {
    let config_path = sources.config.clone().or_else(config::default_path);
    let (mut config, warnings) = Config::load(config_path.as_deref(), sources.config.is_some());
    if let Some(watch) = sources.watch {
        config.engine.watch = watch;
    }
    let warnings = warnings.iter().map(|w| format!("config {w}")).collect();
    (config, config_path, warnings)
}

/// The clusters of the kubeconfigs the options (or `KUBECONFIG`, or the config's sources) name.
pub(super) fn own_inventory(sources: &Sources, config: &Config) -> Inventory {
    match sources.names_first {
        true => inventory::list(&request(sources), config),
        false => inventory::load(&request(sources), config),
    }
}

/// Where the credentials of a fleet resolved `names_first` are read again.
pub fn reread(sources: &Sources) -> inventory::Reread {
    inventory::Reread {
        request: request(sources),
        config: load_config(sources).0,
    }
}

/// The management clusters' credentials, read: they are read from at once.
fn read_managements(
    inventory: &mut Inventory,
    managements: &[Management],
    reread: &inventory::Reread,
) {
    let is_top = |c: &&inventory::ClusterSpec| {
        managements
            .iter()
            .any(|m| c.context == m.context || c.name == m.context)
    };
    let tops = inventory.clusters.iter().filter(is_top).cloned().collect();
    let (read, problems) = reread.credentials(tops);
    inventory.problems.extend(problems);
    for spec in read {
        if let Some(slot) = inventory.clusters.iter_mut().find(|c| c.name == spec.name) {
            *slot = spec;
        }
    }
}

fn request(sources: &Sources) -> inventory::Lookup {
    inventory::Lookup::from_env(
        sources.kubeconfigs.clone(),
        sources.dirs.clone(),
        sources.contexts.clone(),
    )
}

/// The management clusters to read: `--management`, then the config's `[[sources]]`.
fn managements(sources: &Sources, config: &Config) -> Vec<Management> {
    let mut out: Vec<Management> = sources
        .managements
        .iter()
        .map(|context| Management {
            context: context.clone(),
            workspace_label: sources.workspace_label.clone(),
            depth: sources.management_depth,
        })
        .collect();
    if sources.command_line_only {
        return out;
    }
    out.extend(config.sources.iter().filter_map(|s| {
        Some(Management {
            context: s.management.clone()?,
            workspace_label: s.workspace_label.clone(),
            depth: s.depth.unwrap_or(1),
        })
    }));
    out
}
