//! Where clusters come from: kubeconfig files and directories, `KUBECONFIG`, the config file.
//! Turns them into [`ClusterSpec`]s without ever opening a connection, and reports every problem
//! per source: one broken file never hides the clusters of the others.

pub mod capi;
mod credentials;
mod kubeconfig;
pub mod rules;
mod spec;
pub mod untrusted;
pub mod yaml;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kube::config::Kubeconfig;

use crate::config::Config;
use crate::glob::glob_match;
pub use credentials::Credentials;
use kubeconfig::Keep;
pub use kubeconfig::{FileStamp, Loaded, stamp_of};
use rules::CompiledRules;
pub use spec::{CapiDiscovered, ClusterSpec, Inventory, Problem};

/// Where to look, as the command line says.
#[derive(Clone, Debug, Default)]
pub struct Lookup {
    /// `--kubeconfig` (each file on its own).
    pub kubeconfigs: Vec<PathBuf>,
    /// `--kubeconfig-dir` (recursive; `DIR/<workspace>/<file>`).
    pub dirs: Vec<PathBuf>,
    /// `--context` globs; empty keeps every context.
    pub contexts: Vec<String>,
    /// `KUBECONFIG` as found in the environment.
    pub kubeconfig_env: Option<std::ffi::OsString>,
    /// The user's home, for `~/.kube/config` and `~` in config paths.
    pub home: Option<PathBuf>,
}

impl Lookup {
    /// The command-line sources plus `KUBECONFIG` and `$HOME` from the environment.
    pub fn from_env(kubeconfigs: Vec<PathBuf>, dirs: Vec<PathBuf>, contexts: Vec<String>) -> Self {
        Lookup {
            kubeconfigs,
            dirs,
            contexts,
            kubeconfig_env: std::env::var_os("KUBECONFIG"),
            home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }
}

/// The kubeconfig files `load` would read now, each with its size and modification time, none
/// parsed: equal stamps mean an equal fleet (a directory's files are listed again, so one added
/// or removed shows). Cheap beside a load of a fleet's kubeconfigs.
pub fn stamp(request: &Lookup, config: &Config) -> Vec<FileStamp> {
    let mut loader = kubeconfig::Loader::looking();
    read_sources(&mut loader, request, config);
    loader.looked()
}

/// Reads every source and resolves the fleet. Sources, in order of precedence: the command line,
/// else the config file's `[[sources]]`, else `KUBECONFIG` (merged as kubectl merges it), else
/// `~/.kube/config`.
pub fn load(request: &Lookup, config: &Config) -> Inventory {
    load_keeping(request, config, Keep::Everything)
}

/// The fleet as [`load`] reads it, by name: every cluster with its name, workspace, server and
/// where it comes from, but not its credentials (each file's are dropped as soon as it is read).
/// A collector shares out the whole fleet and watches a part of it: it reads the credentials
/// of the clusters it takes ([`Reread`]). Warnings (credentials in clear text) are made as the
/// files are read.
pub fn list(request: &Lookup, config: &Config) -> Inventory {
    load_keeping(request, config, Keep::Names)
}

/// Where the credentials of a fleet read by [`list`] are read again: the same request and config.
#[derive(Clone, Debug)]
pub struct Reread {
    pub request: Lookup,
    pub config: Config,
}

impl Reread {
    /// `wanted` with their kubeconfigs, read from the files they come from (no other file is
    /// read); those already read are returned as they are. A cluster its file no longer
    /// has (or no longer resolves) is left out, with the problem.
    pub fn credentials(&self, wanted: Vec<ClusterSpec>) -> (Vec<ClusterSpec>, Vec<Problem>) {
        let (mut read, unread): (Vec<_>, Vec<_>) =
            wanted.into_iter().partition(ClusterSpec::credentials_read);
        if unread.is_empty() {
            return (read, Vec::new());
        }
        let files = unread.iter().map(|s| s.source.clone()).collect();
        let mut loader = kubeconfig::Loader::keeping(Keep::Files(files));
        read_sources(&mut loader, &self.request, &self.config);
        let (loaded, mut problems) = loader.finish();
        let mut found: HashMap<(PathBuf, String), Kubeconfig> = loaded
            .into_iter()
            .map(|l| ((l.source, l.context), l.kubeconfig))
            .collect();
        for spec in unread {
            match found.remove(&(spec.source.clone(), spec.context.clone())) {
                Some(kubeconfig) => read.push(ClusterSpec {
                    kubeconfig: kubeconfig.into(),
                    ..spec
                }),
                None => problems.push(Problem {
                    source: spec.source.display().to_string(),
                    context: Some(spec.context),
                    message: "no longer in the file, or no longer usable".into(),
                }),
            }
        }
        (read, problems)
    }
}

fn load_keeping(request: &Lookup, config: &Config, keep: Keep) -> Inventory {
    let mut loader = kubeconfig::Loader::keeping(keep);
    read_sources(&mut loader, request, config);
    let looked = looked(request, config);
    let (loaded, mut problems) = loader.finish();
    let (rules, rule_problems) = CompiledRules::compile(&config.workspaces, &config.labels);
    problems.extend(rule_problems.into_iter().map(|message| Problem {
        source: "config".into(),
        context: None,
        message,
    }));
    let mut clusters = Vec::new();
    let mut warnings = Vec::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    for entry in loaded {
        if !request.contexts.is_empty()
            && !request
                .contexts
                .iter()
                .any(|g| glob_match(g, &entry.context))
        {
            continue;
        }
        let name = unique_name(&entry, &mut taken);
        let workspace = rules
            .workspace(&entry.context)
            .or_else(|| entry.dir_workspace.clone())
            .unwrap_or_else(|| config.inventory.default_workspace.clone());
        warnings.extend(clear_text(&entry));
        clusters.push(ClusterSpec {
            labels: rules.labels(&entry.context),
            name,
            context: entry.context,
            workspace,
            server: entry.server,
            source: entry.source,
            kubeconfig: entry.kubeconfig.into(),
            discovered: None,
        });
    }
    if clusters.is_empty() && !request.contexts.is_empty() && problems.is_empty() {
        problems.push(Problem {
            source: "--context".into(),
            context: None,
            message: format!(
                "no context matches {}",
                request
                    .contexts
                    .iter()
                    .map(|c| format!("{c:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Inventory {
        clusters,
        problems,
        warnings,
        looked,
    }
}

/// The four places kubeconfigs come from, in order of precedence, each with what it held or why
/// it was not read: the first one given is the only one read.
fn looked(request: &Lookup, config: &Config) -> Vec<String> {
    let given = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let command_line = [&request.kubeconfigs[..], &request.dirs[..]].concat();
    let sources = config
        .sources
        .iter()
        .filter(|s| s.kubeconfig.is_some() || s.dir.is_some())
        .count();
    let env = request
        .kubeconfig_env
        .as_ref()
        .filter(|v| !v.is_empty())
        .map(|v| v.to_string_lossy().into_owned());
    let mut first: Option<&str> = None;
    let mut line = |place: &'static str, found: Option<String>| {
        let status = match (first, found) {
            (Some(earlier), Some(_)) => format!("not read: {earlier} comes first"),
            (None, Some(found)) => {
                first = Some(place);
                found
            }
            (_, None) if place == "KUBECONFIG" => "not set".to_string(),
            (_, None) => "not given".to_string(),
        };
        format!("{place:<34} {status}")
    };
    vec![
        line(
            "--kubeconfig, --kubeconfig-dir",
            (!command_line.is_empty()).then(|| given(&command_line)),
        ),
        line(
            "[[sources]] in the config file",
            (sources > 0).then(|| format!("{sources} source(s)")),
        ),
        line("KUBECONFIG", env),
        line(
            "~/.kube/config",
            Some(match &request.home {
                Some(home) => home.join(".kube").join("config").display().to_string(),
                None => "$HOME is not set".to_string(),
            }),
        ),
    ]
}

/// Reads the kubeconfigs of the first kind of source given: the command line, the config's
/// `[[sources]]`, `KUBECONFIG`, `~/.kube/config`.
fn read_sources(loader: &mut kubeconfig::Loader, request: &Lookup, config: &Config) {
    let expand = |p: &Path| expand_home(p, request.home.as_deref());
    if !request.kubeconfigs.is_empty() || !request.dirs.is_empty() {
        for file in &request.kubeconfigs {
            loader.file(file, None);
        }
        for dir in &request.dirs {
            loader.dir(dir);
        }
    } else if config
        .sources
        .iter()
        .any(|s| s.kubeconfig.is_some() || s.dir.is_some())
    {
        for (i, source) in config.sources.iter().enumerate() {
            match (&source.kubeconfig, &source.dir, &source.management) {
                // With `management`: the file holds the management cluster's context.
                (Some(file), None, _) => loader.file(&expand(file), None),
                (None, Some(dir), None) => loader.dir(&expand(dir)),
                // Read once the other sources are loaded (it names one of their contexts).
                (None, None, Some(_)) => {}
                _ => loader.problem(Problem {
                    source: format!("config sources[{i}]"),
                    context: None,
                    message: "give `kubeconfig` or `dir` (with `management`: the context of a \
                              management cluster)"
                        .into(),
                }),
            }
        }
    } else if let Some(env) = request.kubeconfig_env.as_ref().filter(|v| !v.is_empty()) {
        let paths: Vec<PathBuf> = std::env::split_paths(env)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        loader.merged(&paths);
    } else if let Some(home) = &request.home {
        loader.file(&home.join(".kube").join("config"), None);
    } else {
        loader.problem(Problem {
            source: "~/.kube/config".into(),
            context: None,
            message: "no kubeconfig given and $HOME is not set".into(),
        });
    }
}

/// A cluster whose credentials would cross the network unencrypted (`Loaded::clear_text`). (From
/// a management cluster's Secret, such a kubeconfig is refused outright.)
fn clear_text(entry: &Loaded) -> Option<Problem> {
    entry.clear_text.then(|| Problem {
        source: entry.source.display().to_string(),
        context: Some(entry.context.clone()),
        message: format!(
            "the server {} is http://: its credentials are sent in clear text",
            entry.server
        ),
    })
}

/// The context name, or `context@file` when another file already used it (then `#2`, `#3` …).
fn unique_name(entry: &Loaded, taken: &mut HashMap<String, usize>) -> String {
    let mut name = entry.context.clone();
    if taken.contains_key(&name) {
        let stem = entry
            .source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        name = format!("{}@{stem}", entry.context);
    }
    let n = taken.entry(name.clone()).or_insert(0);
    *n += 1;
    if *n > 1 {
        name = format!("{name}#{n}");
        taken.insert(name.clone(), 1);
    }
    name
}

fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests;
