//! The arguments each read tool takes, as its schema advertises them to the client; parsed
//! through [`super::strict::Strict`], which refuses any name not here.

use rmcp::schemars;
use serde::Deserialize;

use super::state::{Paging, ToolScope};

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
    pub scope: ToolScope,
    /// failing (stalled or failed), not-ready, or one health: stalled, failed, deleting,
    /// progressing, waiting, suspended, running, ready, not-applicable.
    pub status: Option<String>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct RolloutsArgs {
    #[serde(flatten)]
    pub scope: ToolScope,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DriftArgs {
    #[serde(flatten)]
    pub scope: ToolScope,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GateArgs {
    /// The ring: a workspace, or a ring of fluxfleet's `[rollout]` config.
    pub ring: String,
    /// The revision: `main@sha1:…` (a digest may be cut to its first 12 characters or more),
    /// or a chart version.
    pub revision: String,
    /// How long every copy must have run it, ready: 30m (the default), 2h.
    pub soak: Option<String>,
    #[serde(flatten)]
    pub scope: ToolScope,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct HistoryArgs {
    /// How far back: 30m, 2h, 7d.
    pub since: String,
    #[serde(flatten)]
    pub scope: ToolScope,
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
