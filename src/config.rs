//! Settings: the embedded `config/default.toml`, the user's file merged over it, then the command
//! line (applied by the caller). A bad file never stops fluxfleet: it is reported as a warning
//! naming the file and the key, and the defaults stand in for what could not be read — except
//! for guardrails, which fail closed: while they cannot be read exactly, writes are refused.

use std::path::{Path, PathBuf};

use serde::Deserialize;

mod engine;
mod modes;
pub mod plugins;
mod read;
mod sections;
pub mod theme;

use engine::RawEngine;
pub use engine::{EngineSection, Reading, WatchMode};
pub use modes::{
    Actions, DenyRule, FluxVerbs, FluxVerbsRule, Mode, ModeRule, Permissions, WriteGrant,
};
use sections::RawRollout;
pub use sections::{InventorySection, LabelRule, RolloutSection, SourceEntry, Ui, WorkspaceRule};

use crate::units::parse_duration;

/// The defaults, commented, as shipped.
pub const DEFAULT: &str = include_str!("../config/default.toml");

/// Everything fluxfleet can be configured with (so far: the engine and the inventory).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub engine: EngineSection,
    pub inventory: InventorySection,
    pub sources: Vec<SourceEntry>,
    pub workspaces: Vec<WorkspaceRule>,
    pub labels: Vec<LabelRule>,
    /// Read-only or write per workspace / cluster, over `[ui] mode`.
    pub modes: Vec<ModeRule>,
    pub ui: Ui,
    pub actions: Actions,
    /// Rings and the stuck rules of the rollout view.
    pub rollout: RolloutSection,
    /// `[[plugins]]`: the shipped ones with the user's merged in by name.
    pub plugins: Vec<plugins::PluginEntry>,
    /// `[keymap.<view>]` tables as written: the app reads them into its typed keymap and reports
    /// what it cannot use.
    pub keymap: toml::Table,
    /// Why the guardrails (`[actions]`, `[[modes]]`) cannot be trusted as read: a deny rule naming
    /// no Flux kind, or a file that could not be read whole. While there is one, nothing may be
    /// written anywhere (guardrails fail closed; a colour may fall back, a deny rule never).
    pub guardrail_problems: Vec<String>,
}

/// Something wrong with a config file: fluxfleet goes on without that part.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    pub file: PathBuf,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

/// The file as written: strings where the typed config has durations and kinds, so that one bad
/// value can be reported and replaced by its default instead of failing the whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    engine: RawEngine,
    inventory: InventorySection,
    #[serde(default)]
    sources: Vec<SourceEntry>,
    #[serde(default)]
    workspaces: Vec<WorkspaceRule>,
    #[serde(default)]
    labels: Vec<LabelRule>,
    #[serde(default)]
    modes: Vec<ModeRule>,
    ui: Ui,
    actions: Actions,
    rollout: RawRollout,
    #[serde(default)]
    plugins: Vec<plugins::PluginEntry>,
    #[serde(default)]
    keymap: toml::Table,
}

/// Where the user's file is: `FLUXFLEET_CONFIG`, else the platform config directory.
pub fn default_path() -> Option<PathBuf> {
    crate::places::config_file()
}

impl Config {
    /// The shipped defaults alone.
    pub fn defaults() -> Config {
        // The embedded file is tested to parse cleanly; a broken build would show it at once.
        Config::parse(None, Path::new("<default>")).0
    }

    /// Loads `path` (or the default location, if it exists) merged over the defaults.
    /// `explicit` is true when the user named the file: then a missing file is a warning too.
    pub fn load(path: Option<&Path>, explicit: bool) -> (Config, Vec<Warning>) {
        let Some(path) = path else {
            return (Config::defaults(), Vec::new());
        };
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(Some(&text), path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
                (Config::defaults(), Vec::new())
            }
            // Its guardrails are unknown: the defaults stand in, and writes are refused.
            Err(e) => (
                Config {
                    guardrail_problems: vec![format!("{} cannot be read", path.display())],
                    ..Config::defaults()
                },
                vec![Warning {
                    file: path.to_path_buf(),
                    message: format!("cannot read the config file: {e}; using the defaults"),
                }],
            ),
        }
    }

    /// Parses the user's text (if any) merged over the defaults.
    pub fn parse(user: Option<&str>, file: &Path) -> (Config, Vec<Warning>) {
        let mut warnings = Vec::new();
        let mut guardrail_problems = Vec::new();
        let mut warn = |message: String| {
            warnings.push(Warning {
                file: file.to_path_buf(),
                message,
            })
        };
        let mut merged: toml::Table = match DEFAULT.parse() {
            Ok(t) => t,
            Err(e) => {
                warn(format!("the built-in defaults do not parse: {e}"));
                toml::Table::new()
            }
        };
        if let Some(text) = user {
            match text.parse::<toml::Table>() {
                Ok(user) => {
                    // Key by key: what cannot be used is dropped alone.
                    let checked = read::check(user, &merged, text);
                    for w in checked.warnings {
                        warn(w);
                    }
                    guardrail_problems.extend(checked.guardrail_problems);
                    let mut table = checked.table;
                    // Plugins merge by name, so that a user's file keeps the shipped ones.
                    if let Some(user_plugins) = table.remove("plugins") {
                        let shipped = merged.remove("plugins");
                        merged.insert("plugins".into(), plugins::merged(shipped, user_plugins));
                    }
                    merge(&mut merged, table);
                }
                Err(e) => {
                    guardrail_problems.push(format!("{} is not valid TOML", file.display()));
                    warn(format!("invalid TOML, using the defaults: {e}"));
                }
            }
        }
        let raw = match Raw::deserialize(toml::Value::Table(merged.clone())) {
            Ok(raw) => raw,
            Err(e) => {
                if user.is_some() {
                    guardrail_problems.push(format!("{} could not be read whole", file.display()));
                }
                warn(format!("{e}; using the defaults"));
                let defaults: toml::Table = DEFAULT.parse().unwrap_or_default();
                match Raw::deserialize(toml::Value::Table(defaults)) {
                    Ok(raw) => raw,
                    Err(_) => return (Config::fallback(), warnings),
                }
            }
        };
        let engine = raw.engine.read(&Config::fallback().engine, &mut warn);
        let fallback_rules = Config::fallback().rollout.rules;
        let mut duration =
            |name: &str, text: &str, default: jiff::SignedDuration| match parse_duration(text)
                .map_err(|e| e.to_string())
                .and_then(|d| jiff::SignedDuration::try_from(d).map_err(|e| e.to_string()))
            {
                Ok(d) => d,
                Err(e) => {
                    warn(format!("rollout.{name}: {e}; using the default"));
                    default
                }
            };
        let stuck_after = duration(
            "stuck_after",
            &raw.rollout.stuck_after,
            fallback_rules.stuck_after,
        );
        let suspect_window = duration(
            "suspect_window",
            &raw.rollout.suspect_window,
            fallback_rules.suspect_window,
        );
        let rollout = RolloutSection {
            rings: crate::fleet::rollouts::Rings {
                patterns: raw.rollout.rings,
                label: Some(raw.rollout.ring_label).filter(|l| !l.is_empty()),
            },
            rules: crate::fleet::rollouts::StuckRules {
                stuck_after,
                max_behind: raw.rollout.max_behind,
                suspect_window,
            },
        };
        for problem in raw.actions.problems() {
            warn(format!("{problem}; writes are refused until it is fixed"));
            guardrail_problems.push(problem);
        }
        let config = Config {
            engine,
            inventory: raw.inventory,
            sources: raw.sources,
            workspaces: raw.workspaces,
            labels: raw.labels,
            modes: raw.modes,
            ui: raw.ui,
            actions: raw.actions,
            rollout,
            plugins: raw.plugins.into_iter().filter(|p| p.enabled).collect(),
            keymap: raw.keymap,
            guardrail_problems,
        };
        (config, warnings)
    }

    /// Used only if the embedded defaults themselves were unreadable.
    fn fallback() -> Config {
        Config {
            engine: EngineSection::fallback(),
            inventory: InventorySection {
                default_workspace: "default".into(),
            },
            sources: Vec::new(),
            workspaces: Vec::new(),
            labels: Vec::new(),
            modes: Vec::new(),
            ui: Ui {
                theme: "dark".into(),
                mode: Mode::ReadOnly,
            },
            actions: Actions {
                concurrency: 20,
                confirm_above: 10,
                max_targets: 500,
                deny: Vec::new(),
                events: true,
                flux_verbs: FluxVerbs::Off,
                flux_verbs_rules: Vec::new(),
            },
            rollout: RolloutSection {
                rings: Default::default(),
                rules: Default::default(),
            },
            plugins: Vec::new(),
            keymap: toml::Table::new(),
            guardrail_problems: Vec::new(),
        }
    }
}

impl Config {
    /// Which clusters actions may change ([`Permissions`]), and the grant to change them when at
    /// least one of `clusters` is writable.
    pub fn writable<'a>(
        &self,
        flag: Option<Mode>,
        clusters: impl IntoIterator<Item = &'a crate::fleet::ClusterInfo>,
    ) -> (Option<WriteGrant>, Permissions) {
        modes::writable(
            (flag, self.ui.mode),
            self.modes.clone(),
            !self.guardrail_problems.is_empty(),
            clusters,
        )
    }

    /// Why writes are refused whatever the mode, if they are: one line for the user.
    pub fn writes_refused(&self) -> Option<String> {
        (!self.guardrail_problems.is_empty()).then(|| {
            format!(
                "writes are refused until the guardrails in the config can be read exactly: {}",
                self.guardrail_problems.join("; ")
            )
        })
    }
}

/// Merges `over` into `base`: tables key by key, everything else replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests;
