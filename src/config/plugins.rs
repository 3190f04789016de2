//! `[[plugins]]`: programs the TUI hands the selection to (k9s on a cluster, `kubectl
//! describe` or `flux events` on an object), as written in the config. The app checks keys,
//! views and programs ([`crate::app::plugins`]) and reports what it cannot use.

use serde::Deserialize;

/// One `[[plugins]]` entry: a plugin as the config writes it. serde names it `Plugin` as
/// before, in what it says of an entry that is not a table.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename = "Plugin", deny_unknown_fields)]
pub struct PluginEntry {
    /// Unique: a user's plugin of the same name replaces the shipped one.
    pub name: String,
    /// The key that runs it ("K", "ctrl-k", "f5").
    pub key: String,
    /// The views it applies to (fleet, workspace, cluster, objects, triage, rollout, matrix,
    /// detail), or "all".
    pub scopes: Vec<String>,
    /// The program: a name looked up on PATH, or a path.
    pub command: String,
    /// Its arguments; `$CLUSTER`, `$CONTEXT`, `$KUBECONFIG`, `$NAMESPACE`, `$NAME`, `$KIND`,
    /// `$RESOURCE`, `$API_VERSION`, `$WORKSPACE`, `$REVISION` are replaced by the selection's
    /// values, each within its argument (never through a shell).
    #[serde(default)]
    pub args: Vec<String>,
    /// What the help says it does.
    #[serde(default)]
    pub description: String,
    /// Runs without the terminal; its exit and last lines show in the status line.
    #[serde(default)]
    pub background: bool,
    /// Asks before running.
    #[serde(default)]
    pub confirm: bool,
    /// Whether it may change a cluster. Unknown programs are assumed to: only `writes = false`
    /// lets it run where the session is read-only.
    #[serde(default = "yes")]
    pub writes: bool,
    /// Arguments that make a writing program read-only (k9s: `--readonly`). Where the cluster
    /// is read-only the plugin runs with them added, and counts as not writing.
    #[serde(default)]
    pub read_only_args: Vec<String>,
    /// Programs that must be on PATH for it to be offered (default: `command`), for a plugin
    /// that runs through `sh`.
    #[serde(default)]
    pub needs: Vec<String>,
    /// `false` turns a shipped plugin off.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// The plugins of `defaults` with `user`'s merged in by name: the user's entry replaces the
/// shipped one of the same name, new names are added after them.
pub(super) fn merged(defaults: Option<toml::Value>, user: toml::Value) -> toml::Value {
    let name = |v: &toml::Value| v.get("name").and_then(|n| n.as_str()).map(str::to_string);
    let mut out = match defaults {
        Some(toml::Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let toml::Value::Array(user) = user else {
        return toml::Value::Array(out);
    };
    for item in user {
        match out
            .iter_mut()
            .find(|o| name(o).is_some() && name(o) == name(&item))
        {
            Some(slot) => *slot = item,
            None => out.push(item),
        }
    }
    toml::Value::Array(out)
}
