//! Reading kubeconfig files into one self-contained kubeconfig per context.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use kube::config::{
    AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};

use super::spec::Problem;

/// One usable context.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub context: String,
    pub source: PathBuf,
    pub server: String,
    /// `DIR/<workspace>/…` when the file was found under a `--kubeconfig-dir`.
    pub dir_workspace: Option<String>,
    /// Its self-contained kubeconfig; empty when the loader keeps names only.
    pub kubeconfig: Kubeconfig,
    /// An `http://` server with a token, a password or a credential plugin: its credentials
    /// would cross the network unencrypted.
    pub clear_text: bool,
}

/// One parsed file and where it sits.
struct File {
    path: PathBuf,
    dir_workspace: Option<String>,
    config: Kubeconfig,
}

#[derive(Default)]
pub(super) struct Loader {
    loaded: Vec<Loaded>,
    problems: Vec<Problem>,
    /// Looking only: the files that would be read, with their size and time, none parsed.
    looking: Option<Vec<FileStamp>>,
    keep: Keep,
}

/// What a loader keeps of the contexts it reads.
#[derive(Clone, Debug, Default)]
pub(super) enum Keep {
    /// Every context with its self-contained kubeconfig.
    #[default]
    Everything,
    /// Every context without its kubeconfig (each file's credentials dropped as soon as it is
    /// read): what a collector needs to share out a fleet it watches a part of.
    Names,
    /// The contexts of these files only, with their kubeconfigs; other files are not read (the
    /// files `KUBECONFIG` merges are read together when one of them is wanted).
    Files(BTreeSet<PathBuf>),
}

/// A file's path, and its size and modification time (None when it cannot be read).
pub type FileStamp = (PathBuf, Option<(u64, std::time::SystemTime)>);

/// `path` as it is now.
pub fn stamp_of(path: &Path) -> FileStamp {
    let stamp = std::fs::metadata(path)
        .ok()
        .map(|m| (m.len(), m.modified().unwrap_or(std::time::UNIX_EPOCH)));
    (path.to_path_buf(), stamp)
}

/// File names a kubeconfig directory may hold; anything else (READMEs, keys) is skipped.
const EXTENSIONS: [&str; 6] = ["yaml", "yml", "kubeconfig", "conf", "config", "json"];

impl Loader {
    /// A loader that reads no file: it says which it would read, as they are now.
    pub fn looking() -> Loader {
        Loader {
            looking: Some(Vec::new()),
            ..Loader::default()
        }
    }

    /// A loader that keeps `keep` of what it reads.
    pub fn keeping(keep: Keep) -> Loader {
        Loader {
            keep,
            ..Loader::default()
        }
    }

    /// Whether `path` is to be read at all.
    fn wanted(&self, path: &Path) -> bool {
        match &self.keep {
            Keep::Files(files) => files.contains(path),
            Keep::Everything | Keep::Names => true,
        }
    }

    /// The files a looking loader found.
    pub fn looked(self) -> Vec<FileStamp> {
        self.looking.unwrap_or_default()
    }

    pub fn problem(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    fn problem_at(&mut self, path: &Path, context: Option<&str>, message: String) {
        self.problems.push(Problem {
            source: path.display().to_string(),
            context: context.map(str::to_string),
            message,
        });
    }

    fn read(&mut self, path: &Path, dir_workspace: Option<String>) -> Option<File> {
        if let Some(looking) = &mut self.looking {
            looking.push(stamp_of(path));
            return None;
        }
        if let Err(e) = std::fs::metadata(path) {
            let message = if e.kind() == std::io::ErrorKind::NotFound {
                "file not found".to_string()
            } else {
                format!("cannot read: {e}")
            };
            self.problem_at(path, None, message);
            return None;
        }
        // Parse errors quote the lines around the error, which hold tokens and keys: only
        // where it is and what kind of error it is (`yaml::FileError`).
        match super::yaml::read(path) {
            Ok(config) => Some(File {
                path: path.to_path_buf(),
                dir_workspace,
                config,
            }),
            Err(e) => {
                self.problem_at(path, None, e.to_string());
                None
            }
        }
    }

    /// One file on its own: its contexts resolve their cluster and user in that file.
    pub fn file(&mut self, path: &Path, dir_workspace: Option<String>) {
        if !self.wanted(path) {
            return;
        }
        if let Some(file) = self.read(path, dir_workspace) {
            self.resolve(&[file]);
        }
    }

    /// `KUBECONFIG`: the files merged as kubectl merges them — for a cluster, user or context
    /// name, the first file that defines it wins. A context that kubectl would hide because an
    /// earlier file has the same name is kept (renamed later) and resolves in its own file first.
    pub fn merged(&mut self, paths: &[PathBuf]) {
        if !paths.iter().any(|p| self.wanted(p)) {
            return;
        }
        let files: Vec<File> = paths.iter().filter_map(|p| self.read(p, None)).collect();
        self.resolve(&files);
    }

    /// Every kubeconfig under `dir`, recursively, in name order.
    pub fn dir(&mut self, dir: &Path) {
        let mut found = Vec::new();
        if let Err(e) = walk(dir, &mut found) {
            self.problem_at(dir, None, format!("cannot read the directory: {e}"));
            return;
        }
        if found.is_empty() {
            self.problem_at(dir, None, "holds no kubeconfig files".into());
        }
        for path in found {
            let workspace = path
                .strip_prefix(dir)
                .ok()
                .filter(|rel| rel.components().count() > 1)
                .and_then(|rel| rel.components().next())
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            self.file(&path, workspace);
        }
    }

    /// Resolves every context of `files`, looking names up as described on [`Loader::merged`].
    fn resolve(&mut self, files: &[File]) {
        let mut seen_contexts = HashSet::new();
        // Each file's clusters and users by name, the first of a name in a file winning: a
        // context's lookup is then one per file, not a walk of every entry (a fleet's one file
        // may hold 20,000 contexts).
        let names: Vec<Names<'_>> = files.iter().map(Names::of).collect();
        for (i, file) in files.iter().enumerate() {
            if file.config.contexts.is_empty() {
                self.problem_at(&file.path, None, "defines no contexts".into());
            }
            for named in &file.config.contexts {
                // kubectl hides a later context of the same name; we keep it, own file first.
                let shadowed = !seen_contexts.insert(named.name.clone());
                let order: Vec<&Names<'_>> = if shadowed {
                    std::iter::once(&names[i])
                        .chain(
                            names
                                .iter()
                                .enumerate()
                                .filter(|(j, _)| *j != i)
                                .map(|(_, n)| n),
                        )
                        .collect()
                } else {
                    names.iter().collect()
                };
                match resolve_context(named, &order) {
                    Ok(mut loaded) => {
                        if matches!(self.keep, Keep::Names) {
                            loaded.kubeconfig = Kubeconfig::default();
                        }
                        self.loaded.push(Loaded {
                            source: file.path.clone(),
                            dir_workspace: file.dir_workspace.clone(),
                            ..loaded
                        })
                    }
                    Err(e) => self.problem_at(&file.path, Some(&named.name), e.to_string()),
                }
            }
        }
    }

    pub fn finish(self) -> (Vec<Loaded>, Vec<Problem>) {
        (self.loaded, self.problems)
    }
}

/// What is wrong with a kubeconfig's context: the kubeconfig is to be fixed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("has no `context` section (cluster and user)")]
    NoContextSection,
    #[error("names cluster {0:?}, which is not defined")]
    UndefinedCluster(String),
    #[error("cluster {0:?} has no settings")]
    NoClusterSettings(String),
    #[error("names user {0:?}, which is not defined")]
    UndefinedUser(String),
    #[error("cluster {0:?} has no server")]
    NoServer(String),
    #[error("server {0:?} is not an http(s) URL")]
    BadServer(String),
    #[error("the kubeconfig has no context")]
    NoContext,
}

/// A file's clusters and users by name (the first of a name in the file).
struct Names<'a> {
    clusters: std::collections::HashMap<&'a str, &'a NamedCluster>,
    users: std::collections::HashMap<&'a str, &'a NamedAuthInfo>,
}

impl<'a> Names<'a> {
    fn of(file: &'a File) -> Names<'a> {
        let mut clusters = std::collections::HashMap::new();
        for c in &file.config.clusters {
            clusters.entry(c.name.as_str()).or_insert(c);
        }
        let mut users = std::collections::HashMap::new();
        for u in &file.config.auth_infos {
            users.entry(u.name.as_str()).or_insert(u);
        }
        Names { clusters, users }
    }
}

fn resolve_context(named: &NamedContext, files: &[&Names<'_>]) -> Result<Loaded, ContextError> {
    let context: &Context = named
        .context
        .as_ref()
        .ok_or(ContextError::NoContextSection)?;
    let cluster: &Cluster = files
        .iter()
        .find_map(|f| f.clusters.get(context.cluster.as_str()))
        .ok_or_else(|| ContextError::UndefinedCluster(context.cluster.clone()))?
        .cluster
        .as_ref()
        .ok_or_else(|| ContextError::NoClusterSettings(context.cluster.clone()))?;
    let user: Option<AuthInfo> = match &context.user {
        None => None,
        Some(user) => Some(
            files
                .iter()
                .find_map(|f| f.users.get(user.as_str()))
                .ok_or_else(|| ContextError::UndefinedUser(user.clone()))?
                .auth_info
                .clone()
                .unwrap_or_default(),
        ),
    };
    let server = cluster
        .server
        .clone()
        .ok_or_else(|| ContextError::NoServer(context.cluster.clone()))?;
    match server.parse::<http::Uri>() {
        Ok(uri) if matches!(uri.scheme_str(), Some("https" | "http")) && uri.host().is_some() => {}
        _ => return Err(ContextError::BadServer(server)),
    }
    let clear_text = server.to_ascii_lowercase().starts_with("http://")
        && user.as_ref().is_some_and(|u| {
            u.token.is_some()
                || u.token_file.is_some()
                || u.password.is_some()
                || u.exec.is_some()
                || u.auth_provider.is_some()
        });
    // A kubeconfig holding this one context, under fixed names, so nothing can resolve
    // differently later. The user keeps its name: the audit journal records it.
    let user_name = context.user.clone().unwrap_or_else(|| "user".into());
    let kubeconfig = Kubeconfig {
        clusters: vec![NamedCluster {
            name: "cluster".into(),
            cluster: Some(cluster.clone()),
            ..Default::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: user_name.clone(),
            auth_info: Some(user.unwrap_or_default()),
            ..Default::default()
        }],
        contexts: vec![NamedContext {
            name: named.name.clone(),
            context: Some(Context {
                cluster: "cluster".into(),
                user: Some(user_name),
                namespace: context.namespace.clone(),
                ..Default::default()
            }),
            ..Default::default()
        }],
        current_context: Some(named.name.clone()),
        ..Default::default()
    };
    Ok(Loaded {
        context: named.name.clone(),
        source: PathBuf::new(),
        server,
        dir_workspace: None,
        kubeconfig,
        clear_text,
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Symlinked directories are not followed: they could loop.
        let is_dir = entry.file_type()?.is_dir();
        if is_dir {
            walk(&path, out)?;
        } else if path.is_file()
            && path
                .extension()
                .is_none_or(|e| EXTENSIONS.contains(&&*e.to_string_lossy()))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The current context (else the first) of a kubeconfig that did not come from a file, such as
/// one read from a Secret; `source` says where it came from.
pub fn current(config: Kubeconfig, source: PathBuf) -> Result<Loaded, ContextError> {
    let named = config
        .current_context
        .as_deref()
        .and_then(|c| config.contexts.iter().find(|n| n.name == c))
        .or_else(|| config.contexts.first())
        .cloned()
        .ok_or(ContextError::NoContext)?;
    let file = File {
        path: source.clone(),
        dir_workspace: None,
        config,
    };
    let mut loaded = resolve_context(&named, &[&Names::of(&file)])?;
    loaded.source = source;
    Ok(loaded)
}
