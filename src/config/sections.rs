//! The sections of the config file as fluxfleet keeps them: what the parent, the reader of each
//! section and the rest of fluxfleet share.

use std::path::PathBuf;

use serde::Deserialize;

use super::modes::Mode;

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
pub struct RolloutSection {
    pub rings: crate::fleet::rollouts::Rings,
    pub rules: crate::fleet::rollouts::StuckRules,
}

/// `[inventory]`: the workspace of clusters that no rule and no directory place.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InventorySection {
    pub default_workspace: String,
}

/// One `[[sources]]` entry: a kubeconfig file or a directory of them. serde names it `Source`
/// as before, in what it says of an entry that is not a table.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename = "Source", deny_unknown_fields)]
pub struct SourceEntry {
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

/// `[rollout]` as written: durations as text, to be read one by one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRollout {
    pub(super) rings: Vec<String>,
    pub(super) ring_label: String,
    pub(super) stuck_after: String,
    pub(super) max_behind: usize,
    pub(super) suspect_window: String,
}
