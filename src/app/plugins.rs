//! Plugins: one key hands the selection to another program (k9s on the selected cluster,
//! `kubectl describe` or `flux events` on the selected object), with a kubeconfig that reaches
//! exactly that cluster. What the config says is checked here ([`from_config`]); a key press is
//! planned into a [`Launch`] in `launch.rs`; `handoff.rs` carries it out.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::keymap::{Context, Key, Keymap, Taken};
pub use super::plugin_error::PluginError;
use crate::fleet::{ClusterInfo, ObjectKey};

/// A plugin the keymap can run.
#[derive(Clone, Debug, PartialEq)]
pub struct Plugin {
    pub name: String,
    pub key: Key,
    /// The views it applies to.
    pub contexts: Vec<Context>,
    pub command: String,
    pub args: Vec<String>,
    pub description: String,
    pub background: bool,
    pub confirm: bool,
    pub writes: bool,
    pub read_only_args: Vec<String>,
    /// The program (or one it needs) is not on PATH: listed in the help, not offered.
    pub missing: Option<String>,
}

/// Binds each plugin's key in the views it applies to, after the actions: a key an action
/// (or an earlier plugin) has in a view stays theirs there, and the user hears about it. A
/// plugin whose program is missing is not bound.
pub fn bind(keymap: &mut Keymap, plugins: &[Plugin]) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, plugin) in plugins.iter().enumerate() {
        if plugin.missing.is_some() {
            continue;
        }
        for context in &plugin.contexts {
            let key = plugin.key;
            let other = match keymap.bind_plugin(*context, i, key) {
                Ok(()) => continue,
                Err(Taken::Action(action)) => action.name().to_string(),
                Err(Taken::Plugin(j)) => format!("plugin {}", plugins[j].name),
            };
            warnings.push(format!(
                "plugins.{}: {key} is bound to {other} in the {} view; the plugin has no key \
                 there",
                plugin.name,
                context.name()
            ));
        }
    }
    warnings
}

/// Whether a plugin may name view `c`: the views with a selection.
fn has_selection(c: Context) -> bool {
    !matches!(c, Context::Global | Context::Help | Context::Results)
}

/// The variables an argument may hold, as `$NAME` or `${NAME}`.
pub const VARIABLES: [&str; 10] = [
    "CLUSTER",
    "CONTEXT",
    "KUBECONFIG",
    "NAMESPACE",
    "NAME",
    "KIND",
    "RESOURCE",
    "API_VERSION",
    "WORKSPACE",
    "REVISION",
];

/// The config's plugins, checked: a key that is not a key, or a plugin with no view it can
/// apply to, is left out with a warning; a program not on `path` (PATH) is kept as missing.
pub fn from_config(
    config: &[crate::config::plugins::PluginEntry],
    path: Option<&std::ffi::OsStr>,
) -> (Vec<Plugin>, Vec<String>) {
    let mut plugins = Vec::new();
    let mut warnings = Vec::new();
    for p in config {
        let at = format!("plugins.{}", p.name);
        if p.name.trim().is_empty() || p.command.trim().is_empty() {
            warnings.push(format!(
                "{at}: a plugin needs a name and a command; left out"
            ));
            continue;
        }
        let key = match Key::parse(&p.key) {
            Ok(key) => key,
            Err(e) => {
                warnings.push(format!("{at}.key: {e}; left out"));
                continue;
            }
        };
        let mut contexts = Vec::new();
        for scope in &p.scopes {
            let scopes = Context::ALL.into_iter().filter(|c| has_selection(*c));
            if scope == "all" {
                contexts.extend(scopes);
            } else if let Some(c) = scopes.clone().find(|c| c.name() == scope) {
                contexts.push(c);
            } else {
                let known: Vec<&str> = scopes.map(|c| c.name()).collect();
                warnings.push(format!(
                    "{at}.scopes: {scope:?} is not a view (known: {}, all)",
                    known.join(", ")
                ));
            }
        }
        contexts.sort_by_key(|c| c.name());
        contexts.dedup();
        if contexts.is_empty() {
            warnings.push(format!("{at}: applies to no view; left out"));
            continue;
        }
        let needs: Vec<&str> = if p.needs.is_empty() {
            vec![p.command.as_str()]
        } else {
            p.needs.iter().map(String::as_str).collect()
        };
        let missing = needs
            .into_iter()
            .find(|program| find_program(program, path).is_none())
            .map(str::to_string);
        plugins.push(Plugin {
            name: p.name.clone(),
            key,
            contexts,
            command: p.command.clone(),
            args: p.args.clone(),
            description: p.description.clone(),
            background: p.background,
            confirm: p.confirm,
            writes: p.writes,
            read_only_args: p.read_only_args.clone(),
            missing,
        });
    }
    (plugins, warnings)
}

/// Where `program` is: a path as it is (when it is an executable file), else the first
/// executable of that name in the directories of `path`.
pub fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// The values of a selection, by variable name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vars(BTreeMap<&'static str, String>);

impl Vars {
    pub fn set(&mut self, name: &'static str, value: impl Into<String>) {
        self.0.insert(name, value.into());
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

/// What each variable needs selected, for the message when it is not.
fn needs(name: &str) -> &'static str {
    match name {
        "NAMESPACE" | "NAME" | "KIND" | "RESOURCE" | "API_VERSION" | "REVISION" => "an object",
        "WORKSPACE" => "a workspace",
        _ => "a cluster",
    }
}

/// `arg` with every variable of [`VARIABLES`] replaced by its value in `vars`, within the
/// argument. Anything else after a `$` (a shell's `$1`, `${PAGER:-less}`) is left as written.
/// A variable with no value is an error naming what to select.
pub fn expand(arg: &str, vars: &Vars) -> Result<String, PluginError> {
    let mut out = String::with_capacity(arg.len());
    let mut rest = arg;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, braced) = match after.strip_prefix('{') {
            Some(inner) => (inner.split('}').next().unwrap_or(""), true),
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], false)
            }
        };
        let closed = !braced || after.len() > name.len() + 1;
        match VARIABLES.iter().find(|v| **v == name).filter(|_| closed) {
            Some(var) => {
                let value = vars.get(var).ok_or(PluginError::NeedsSelection {
                    var,
                    needs: needs(var),
                })?;
                out.push_str(value);
                rest = &after[name.len() + if braced { 2 } else { 0 }..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Values that come from a cluster or a management cluster go on a command line only when they
/// cannot be read as anything but a value: no shell characters, no spaces, no leading `-`.
pub(super) fn checked(what: &'static str, value: &str) -> Result<String, PluginError> {
    let fine = |c: char| c.is_ascii_alphanumeric() || "._:/@+=~-".contains(c);
    if value.is_empty() || value.starts_with('-') || !value.chars().all(fine) {
        return Err(PluginError::Unsafe {
            what,
            value: value.to_string(),
        });
    }
    Ok(value.to_string())
}

/// A plugin run, planned: everything but the kubeconfig's path, which exists only while it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub plugin: String,
    pub command: String,
    /// As written, with `read_only_args` added where they apply; expanded when it runs.
    pub args: Vec<String>,
    pub vars: Vars,
    /// The cluster it runs on: its kubeconfig goes in `$KUBECONFIG`.
    pub cluster: Option<Arc<ClusterInfo>>,
    pub object: Option<ObjectKey>,
    /// It may change the cluster: only with write mode's grant, and journaled.
    pub writes: bool,
    pub background: bool,
    /// Who runs it, for the journal.
    pub user: String,
}

impl Launch {
    /// "k9s on prod-eu-1", "describe on Kustomization flux-system/apps on prod-eu-1".
    pub fn describe(&self) -> String {
        let mut text = self.plugin.clone();
        if let Some(key) = &self.object {
            text.push_str(&format!(" on {} {}/{}", key.kind, key.namespace, key.name));
        }
        match (&self.cluster, self.vars.get("WORKSPACE")) {
            (Some(c), _) => text.push_str(&format!(" on {}", c.name)),
            (None, Some(w)) => text.push_str(&format!(" on workspace {w}")),
            (None, None) => {}
        }
        text
    }
}

#[cfg(test)]
mod tests;
