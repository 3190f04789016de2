//! The engine's settings (`[engine]`): their type, and how the user's values are read, each bad
//! one a warning with the default standing in.

use std::time::Duration;

use serde::Deserialize;

use crate::fleet::FluxKind;
use crate::units::parse_duration;

/// `[engine]` as read: how clusters are connected to, listed and watched.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSection {
    /// Objects per list page (kubectl's `--chunk-size`).
    pub chunk_size: usize,
    /// Kinds listed by streaming watches (false: paged lists then watches).
    pub streaming_lists: bool,
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
    /// How often a summarized cluster is looked at (its FluxReport read, where the Flux
    /// Operator runs); a watched cluster watches its FluxReport, and reads it again after this
    /// long only where the watch cannot be held.
    pub report_interval: Duration,
    /// Which clusters have every object watched.
    pub watch: WatchMode,
    /// With `watch = "auto"`: more clusters than this are summarized.
    pub summary_above: usize,
    /// Summarized clusters whose objects stay watched after they were opened.
    pub warm_clusters: usize,
    /// Each kind is listed once and not watched: for a command that prints what the fleet is
    /// and exits (`get` without `--watch`, `rollout`, `gate`), the watch requests would only be
    /// opened to be dropped. Set by the command, not by the config file.
    pub list_only: bool,
}

/// Which clusters have every Flux object watched (`engine.watch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchMode {
    /// Every cluster, over one connection each.
    All,
    /// Every cluster counted from its FluxReport, read every interval over a connection that is
    /// not kept; the objects of the clusters opened are watched.
    Summary,
    /// `All` up to `summary_above` clusters, `Summary` above.
    Auto,
}

impl WatchMode {
    pub fn parse(text: &str) -> Option<WatchMode> {
        match text {
            "all" => Some(WatchMode::All),
            "summary" => Some(WatchMode::Summary),
            "auto" => Some(WatchMode::Auto),
            _ => None,
        }
    }

    /// Whether a fleet of `clusters` is past what `self` watches whole.
    fn past(self, clusters: usize, above: usize) -> bool {
        match self {
            WatchMode::All => false,
            WatchMode::Summary => true,
            WatchMode::Auto => clusters > above,
        }
    }
}

/// Where a fleet's objects are read from, for the one decision of what is watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// From the clusters themselves, a connection each (the engine; a collector).
    Clusters,
    /// From the bus, where collectors hold them already; `counts_suffice` when the command needs
    /// only the clusters' counts (the TUI, `get --summary`).
    Bus { counts_suffice: bool },
}

impl EngineSection {
    /// Whether a fleet of `clusters` read as `reading` is summarized (its clusters counted, the
    /// objects of those opened watched): the one decision the engine and a reader of the bus
    /// share. `engine.watch = "summary"` always; `"auto"` past `summary_above` clusters — on
    /// the bus only where counts suffice, since the objects are collected already; `"all"`
    /// never.
    pub fn summarizes(&self, clusters: usize, reading: Reading) -> bool {
        let past = self.watch.past(clusters, self.summary_above);
        match reading {
            Reading::Clusters => past,
            Reading::Bus { counts_suffice } => {
                past && (counts_suffice || self.watch == WatchMode::Summary)
            }
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEngine {
    chunk_size: usize,
    lists: String,
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

impl RawEngine {
    /// The settings these values make, `fallback` standing in for each bad one (and a
    /// warning saying so).
    pub(super) fn read(
        &self,
        fallback: &EngineSection,
        warn: &mut impl FnMut(String),
    ) -> EngineSection {
        let mut duration = |key: &str, text: &str, default: Duration| {
            parse_duration(text).unwrap_or_else(|e| {
                warn(format!("engine.{key}: {e}; using the default"));
                default
            })
        };
        let connect_timeout = duration(
            "connect_timeout",
            &self.connect_timeout,
            fallback.connect_timeout,
        );
        let exec_timeout = duration("exec_timeout", &self.exec_timeout, fallback.exec_timeout);
        let max_backoff = duration("max_backoff", &self.max_backoff, fallback.max_backoff);
        let discovery_interval = duration(
            "discovery_interval",
            &self.discovery_interval,
            fallback.discovery_interval,
        );
        let report_interval = match duration(
            "report_interval",
            &self.report_interval,
            fallback.report_interval,
        ) {
            d if d.is_zero() => {
                warn("engine.report_interval must be longer than zero; using the default".into());
                fallback.report_interval
            }
            d => d,
        };
        let watch = WatchMode::parse(&self.watch).unwrap_or_else(|| {
            warn(format!(
                "engine.watch: {:?} is not one of all, summary, auto; using auto",
                self.watch
            ));
            WatchMode::Auto
        });
        let streaming_lists = match self.lists.as_str() {
            "streaming" => true,
            "paged" => false,
            other => {
                warn(format!(
                    "engine.lists: {other:?} is not one of streaming, paged; using streaming"
                ));
                true
            }
        };
        let mut kinds = Vec::new();
        for name in &self.kinds {
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
        EngineSection {
            chunk_size: positive("chunk_size", self.chunk_size, fallback.chunk_size),
            streaming_lists,
            connect_concurrency: positive(
                "connect_concurrency",
                self.connect_concurrency,
                fallback.connect_concurrency,
            ),
            connect_timeout,
            exec_concurrency: positive(
                "exec_concurrency",
                self.exec_concurrency,
                fallback.exec_concurrency,
            ),
            exec_timeout,
            kinds,
            max_backoff,
            max_objects: positive("max_objects", self.max_objects, fallback.max_objects),
            discovery_interval,
            report_interval,
            watch,
            summary_above: self.summary_above,
            warm_clusters: positive("warm_clusters", self.warm_clusters, fallback.warm_clusters),
            list_only: false,
        }
    }
}

impl EngineSection {
    /// Used only if the embedded defaults themselves were unreadable.
    pub(super) fn fallback() -> EngineSection {
        EngineSection {
            chunk_size: 500,
            streaming_lists: true,
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
            watch: WatchMode::Auto,
            summary_above: 5000,
            warm_clusters: 16,
            list_only: false,
        }
    }
}
