//! Why a plugin cannot run: refused before it starts (what it would write, what the selection
//! lacks, a value a command line could misread) or failing to be handed what it needs (its
//! kubeconfig, the journal). The words are the TUI's flash line.

use std::path::PathBuf;

use crate::fleet::read::ReadError;

/// Why a plugin did not run; nothing was started.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The program is not installed.
    #[error("{plugin}: {program} is not on PATH")]
    NotOnPath { plugin: String, program: String },
    /// A value from a cluster that a command line could read as more than a value.
    #[error("the {what} {} holds characters a command line must not get", format!("{:?}", .value.escape_debug().to_string()))]
    Unsafe { what: &'static str, value: String },
    /// An argument names a variable the selection has no value for.
    #[error("${var} needs {needs} selected")]
    NeedsSelection {
        var: &'static str,
        needs: &'static str,
    },
    /// One of the plugin's arguments cannot be expanded.
    #[error("{plugin}: {error}")]
    Argument {
        plugin: String,
        error: Box<PluginError>,
    },
    /// Writes were refused for this session (the guardrails' reason).
    #[error("nothing can run {plugin}, which writes: {why}")]
    WritesRefused { plugin: String, why: String },
    /// The session is read-only and the plugin writes.
    #[error(
        "read-only: {plugin} writes, so it cannot run — start with --write, or set mode = \
         \"write\" in [ui] of the config (a plugin that only reads says writes = false)"
    )]
    ReadOnly { plugin: String },
    /// The cluster's mode or a deny rule refuses writes there.
    #[error("{plugin} writes: {why}")]
    Denied { plugin: String, why: String },
    /// The plugin writes and the session has no writer.
    #[error("read-only: {0} writes, so it cannot run")]
    NoWriter(String),
    /// No kubeconfig reaches the cluster, or it may not be handed to a writing program.
    #[error(transparent)]
    Kubeconfig(#[from] ReadError),
    /// The run's own kubeconfig file could not be written.
    #[error("cannot write its kubeconfig: {0}")]
    KubeconfigFile(std::io::Error),
    /// A writing plugin is journaled, and there is nowhere to journal.
    #[error("no data directory for the audit journal; nothing was run")]
    NoJournal,
    /// A writing plugin is journaled, and the journal cannot be written.
    #[error("the audit journal {} cannot be written ({why}); nothing was run", .path.display())]
    Journal { path: PathBuf, why: std::io::Error },
}
