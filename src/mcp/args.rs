//! The arguments each tool takes in the mode it is served in, as its schema advertises them to the
//! client; parsed through [`super::strict::Strict`], which refuses any name not here. A tool
//! served in two modes (`suspend`, `resume`, `reconcile` with `--write` or `--propose`) has a
//! type for each: what it would not read in a mode, it does not take there.

use rmcp::schemars;
use serde::Deserialize;

use super::state::Paging;
use crate::fleet::scope::Scope;

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct SummaryArgs {
    /// Only this workspace's rollup.
    pub workspace: Option<String>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ClustersArgs {
    /// Only clusters of this workspace.
    pub workspace: Option<String>,
    /// Only clusters whose name matches one of these globs.
    #[serde(default)]
    pub clusters: Vec<String>,
    /// Only clusters in this state: live, summary, connecting, syncing, unreachable,
    /// timed-out, tls-error, unauthorized, forbidden, server-error, flux-not-installed,
    /// invalid, provisioning, paused, deleting, provision-failed.
    pub state: Option<String>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ObjectsArgs {
    #[serde(flatten)]
    pub scope: Scope,
    /// failing (stalled or failed), not-ready, or one health: stalled, failed, deleting,
    /// progressing, waiting, suspended, running, ready, not-applicable.
    pub status: Option<String>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct RolloutsArgs {
    #[serde(flatten)]
    pub scope: Scope,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DriftToolArgs {
    #[serde(flatten)]
    pub scope: Scope,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GateToolArgs {
    /// The ring: a workspace, or a ring of fluxfleet's `[rollout]` config.
    pub ring: String,
    /// The revision: `main@sha1:…` (a digest may be cut to its first 12 characters or more),
    /// or a chart version.
    pub revision: String,
    /// How long every copy must have run it, ready: 30m (the default), 2h.
    pub soak: Option<String>,
    #[serde(flatten)]
    pub scope: Scope,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct HistoryArgs {
    /// How far back: 30m, 2h, 7d.
    pub since: String,
    #[serde(flatten)]
    pub scope: Scope,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ObjectArgs {
    /// The cluster's name, exactly.
    pub cluster: String,
    /// The Flux kind (Kustomization, ks, HelmRelease, hr …).
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// What an action is on: the objects in scope, of a status, and whether the whole fleet is meant.
/// Every write and proposal takes it; each tool adds only what it reads, in its mode.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct Picked {
    #[serde(flatten)]
    pub scope: Scope,
    /// failing, not-ready, or one health (suspended, ready …): only objects with it.
    pub status: Option<String>,
    /// The whole fleet is meant: needed when the scope names no workspace, clusters, namespace
    /// or name (a kind or a status alone picks across every cluster).
    #[serde(default)]
    pub all: bool,
}

/// With `--write`: a call without `token` is a dry run; the call that acts repeats its
/// arguments with the token and count the dry run gave.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct DryRunToken {
    /// The token a dry run of these same arguments gave: without it, this call is that dry run.
    pub token: Option<String>,
    /// The count that dry run said it would send.
    pub count: Option<usize>,
}

/// `suspend` with `--write`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct WriteSuspendArgs {
    #[serde(flatten)]
    pub picked: Picked,
    /// Why: recorded on each object, as `flux suspend` does, and in the journal.
    pub reason: Option<String>,
    #[serde(flatten)]
    pub confirm: DryRunToken,
}

/// `resume` with `--write`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct WriteResumeArgs {
    #[serde(flatten)]
    pub picked: Picked,
    #[serde(flatten)]
    pub confirm: DryRunToken,
}

/// `reconcile` with `--write`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct WriteReconcileArgs {
    #[serde(flatten)]
    pub picked: Picked,
    /// Request the object's source first and wait until it is handled (`flux reconcile
    /// --with-source`).
    #[serde(default)]
    pub with_source: bool,
    #[serde(flatten)]
    pub confirm: DryRunToken,
}

/// `suspend` with `--propose`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ProposeSuspendArgs {
    #[serde(flatten)]
    pub picked: Picked,
    /// Why: recorded on each object, as `flux suspend` does, and in the journal.
    pub reason: Option<String>,
    /// Why you ask, in a sentence: shown to the person who decides.
    pub why: Option<String>,
}

/// `resume` with `--propose`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ProposeResumeArgs {
    #[serde(flatten)]
    pub picked: Picked,
    /// Why you ask, in a sentence: shown to the person who decides.
    pub why: Option<String>,
}

/// `reconcile` with `--propose`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct ProposeReconcileArgs {
    #[serde(flatten)]
    pub picked: Picked,
    /// Request the object's source first and wait until it is handled (`flux reconcile
    /// --with-source`).
    #[serde(default)]
    pub with_source: bool,
    /// Why you ask, in a sentence: shown to the person who decides.
    pub why: Option<String>,
}
