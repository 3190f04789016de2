//! Settings: the embedded `config/default.toml`, the user's file merged over it, then the command
//! line (applied by the caller). A bad file never stops fluxfleet: it is reported as a warning
//! naming the file and the key, and the defaults stand in for what could not be read — except
//! for guardrails, which fail closed: while they cannot be read exactly, writes are refused.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

mod modes;
mod read;
pub mod theme;

pub use modes::{Actions, DenyRule, Mode, ModeRule, Permissions, WriteGrant};

use crate::fleet::FluxKind;
use crate::units::parse_duration;

/// The defaults, commented, as shipped.
pub const DEFAULT: &str = include_str!("../../config/default.toml");

/// Everything fluxfleet can be configured with (so far: the engine and the inventory).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub engine: Engine,
    pub inventory: Inventory,
    pub sources: Vec<Source>,
    pub workspaces: Vec<WorkspaceRule>,
    pub labels: Vec<LabelRule>,
    /// Read-only or write per workspace / cluster, over `[ui] mode`.
    pub modes: Vec<ModeRule>,
    pub ui: Ui,
    pub actions: Actions,
    /// Rings and the stuck rules of the rollout view.
    pub rollout: Rollout,
    /// `[keymap.<view>]` tables as written: the app reads them into its typed keymap and reports
    /// what it cannot use.
    pub keymap: toml::Table,
    /// Why the guardrails (`[actions]`, `[[modes]]`) cannot be trusted as read: a deny rule naming
    /// no Flux kind, or a file that could not be read whole. While there is one, nothing may be
    /// written anywhere (guardrails fail closed; a colour may fall back, a deny rule never).
    pub guardrail_problems: Vec<String>,
}

/// The terminal UI's settings.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ui {
    /// A built-in theme (dark, light, high-contrast, colorblind) or a file in the themes
    /// directory of the config directory, without `.toml`.
    pub theme: String,
    /// Whether actions may change clusters.
    pub mode: Mode,
}

/// `[rollout]`: how clusters group into rings, and when a cluster counts as stuck.
#[derive(Clone, Debug, PartialEq)]
pub struct Rollout {
    pub rings: crate::fleet::rollouts::Rings,
    pub rules: crate::fleet::rollouts::Rules,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Engine {
    /// Objects per list page (kubectl's `--chunk-size`).
    pub chunk_size: usize,
    pub connect_concurrency: usize,
    pub connect_timeout: Duration,
    pub exec_concurrency: usize,
    pub exec_timeout: Duration,
    pub kinds: Vec<FluxKind>,
    pub max_backoff: Duration,
    /// The most objects of one kind one cluster may hold.
    pub max_objects: usize,
    /// How often management clusters are read again.
    pub discovery_interval: Duration,
    /// How often each cluster's FluxReport is read, where the Flux Operator runs.
    pub report_interval: Duration,
    /// Which clusters have every object watched.
    pub watch: Watch,
    /// With `watch = "auto"`: more clusters than this are summarized.
    pub summary_above: usize,
    /// Summarized clusters whose objects stay watched after they were opened.
    pub warm_clusters: usize,
}

/// Which clusters have every Flux object watched (`engine.watch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watch {
    /// Every cluster, over one connection each.
    All,
    /// Every cluster counted from its FluxReport, read every interval over a connection that is
    /// not kept; the objects of the clusters opened are watched.
    Summary,
    /// `All` up to `summary_above` clusters, `Summary` above.
    Auto,
}

impl Watch {
    pub fn parse(text: &str) -> Option<Watch> {
        match text {
            "all" => Some(Watch::All),
            "summary" => Some(Watch::Summary),
            "auto" => Some(Watch::Auto),
            _ => None,
        }
    }

    /// Whether a fleet of `clusters` is summarized.
    pub fn summarizes(self, clusters: usize, above: usize) -> bool {
        match self {
            Watch::All => false,
            Watch::Summary => true,
            Watch::Auto => clusters > above,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inventory {
    pub default_workspace: String,
}

/// A kubeconfig file or a directory of them.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub kubeconfig: Option<PathBuf>,
    pub dir: Option<PathBuf>,
    /// A management cluster (a context of the other sources) whose Cluster API clusters join
    /// the fleet.
    pub management: Option<String>,
    /// With `management`: the Cluster label that names the workspace (default: the namespace).
    pub workspace_label: Option<String>,
    /// With `management`: levels of management clusters to follow (default 1).
    pub depth: Option<usize>,
}

/// Puts clusters into a workspace: `name` + context globs, or a regex whose first capture group
/// is the workspace name.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceRule {
    pub name: Option<String>,
    #[serde(default)]
    pub contexts: Vec<String>,
    pub regex: Option<String>,
}

/// Adds labels to the clusters whose context matches.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelRule {
    #[serde(default)]
    pub contexts: Vec<String>,
    pub regex: Option<String>,
    #[serde(default)]
    pub set: std::collections::BTreeMap<String, String>,
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
    inventory: Inventory,
    #[serde(default)]
    sources: Vec<Source>,
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
    keymap: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRollout {
    rings: Vec<String>,
    ring_label: String,
    stuck_after: String,
    max_behind: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    chunk_size: usize,
    connect_concurrency: usize,
    connect_timeout: String,
    exec_concurrency: usize,
    exec_timeout: String,
    kinds: Vec<String>,
    max_backoff: String,
    max_objects: usize,
    discovery_interval: String,
    report_interval: String,
    watch: String,
    summary_above: usize,
    warm_clusters: usize,
}

/// Where the user's file is: `FLUXFLEET_CONFIG`, else the platform config directory.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FLUXFLEET_CONFIG") {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("dev", "fluxfleet", "fluxfleet")
        .map(|d| d.config_dir().join("config.toml"))
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
                    merge(&mut merged, checked.table);
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
        let fallback = Config::fallback().engine;
        let mut duration = |key: &str, text: &str, default: Duration| {
            parse_duration(text).unwrap_or_else(|e| {
                warn(format!("engine.{key}: {e}; using the default"));
                default
            })
        };
        let connect_timeout = duration(
            "connect_timeout",
            &raw.engine.connect_timeout,
            fallback.connect_timeout,
        );
        let exec_timeout = duration(
            "exec_timeout",
            &raw.engine.exec_timeout,
            fallback.exec_timeout,
        );
        let max_backoff = duration("max_backoff", &raw.engine.max_backoff, fallback.max_backoff);
        let discovery_interval = duration(
            "discovery_interval",
            &raw.engine.discovery_interval,
            fallback.discovery_interval,
        );
        let report_interval = match duration(
            "report_interval",
            &raw.engine.report_interval,
            fallback.report_interval,
        ) {
            d if d.is_zero() => {
                warn("engine.report_interval must be longer than zero; using the default".into());
                fallback.report_interval
            }
            d => d,
        };
        let watch = Watch::parse(&raw.engine.watch).unwrap_or_else(|| {
            warn(format!(
                "engine.watch: {:?} is not one of all, summary, auto; using auto",
                raw.engine.watch
            ));
            Watch::Auto
        });
        let mut kinds = Vec::new();
        for name in &raw.engine.kinds {
            match FluxKind::from_kind(name) {
                Some(k) if !kinds.contains(&k) => kinds.push(k),
                Some(_) => {}
                None => warn(format!(
                    "engine.kinds: {name:?} is not a Flux kind; ignored"
                )),
            }
        }
        let mut positive = |key: &str, n: usize, default: usize| {
            if n == 0 {
                warn(format!("engine.{key} must be at least 1; using {default}"));
                default
            } else {
                n
            }
        };
        let engine = Engine {
            chunk_size: positive("chunk_size", raw.engine.chunk_size, fallback.chunk_size),
            connect_concurrency: positive(
                "connect_concurrency",
                raw.engine.connect_concurrency,
                fallback.connect_concurrency,
            ),
            connect_timeout,
            exec_concurrency: positive(
                "exec_concurrency",
                raw.engine.exec_concurrency,
                fallback.exec_concurrency,
            ),
            exec_timeout,
            kinds,
            max_backoff,
            max_objects: positive("max_objects", raw.engine.max_objects, fallback.max_objects),
            discovery_interval,
            report_interval,
            watch,
            summary_above: raw.engine.summary_above,
            warm_clusters: positive(
                "warm_clusters",
                raw.engine.warm_clusters,
                fallback.warm_clusters,
            ),
        };
        let fallback_rules = Config::fallback().rollout.rules;
        let stuck_after = match parse_duration(&raw.rollout.stuck_after)
            .map_err(|e| e.to_string())
            .and_then(|d| jiff::SignedDuration::try_from(d).map_err(|e| e.to_string()))
        {
            Ok(d) => d,
            Err(e) => {
                warn(format!("rollout.stuck_after: {e}; using the default"));
                fallback_rules.stuck_after
            }
        };
        let rollout = Rollout {
            rings: crate::fleet::rollouts::Rings {
                patterns: raw.rollout.rings,
                label: Some(raw.rollout.ring_label).filter(|l| !l.is_empty()),
            },
            rules: crate::fleet::rollouts::Rules {
                stuck_after,
                max_behind: raw.rollout.max_behind,
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
            keymap: raw.keymap,
            guardrail_problems,
        };
        (config, warnings)
    }

    /// Used only if the embedded defaults themselves were unreadable.
    fn fallback() -> Config {
        Config {
            engine: Engine {
                chunk_size: 500,
                connect_concurrency: 64,
                connect_timeout: Duration::from_secs(15),
                exec_concurrency: 4,
                exec_timeout: Duration::from_secs(60),
                kinds: vec![
                    FluxKind::GitRepository,
                    FluxKind::OciRepository,
                    FluxKind::HelmRepository,
                    FluxKind::HelmChart,
                    FluxKind::Bucket,
                    FluxKind::Kustomization,
                    FluxKind::HelmRelease,
                ],
                max_backoff: Duration::from_secs(60),
                max_objects: 10_000,
                discovery_interval: Duration::from_secs(30),
                report_interval: Duration::from_secs(60),
                watch: Watch::Auto,
                summary_above: 5000,
                warm_clusters: 16,
            },
            inventory: Inventory {
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
            },
            rollout: Rollout {
                rings: Default::default(),
                rules: Default::default(),
            },
            keymap: toml::Table::new(),
            guardrail_problems: Vec::new(),
        }
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
