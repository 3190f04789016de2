//! The `tree` tool: what a Kustomization or HelmRelease put on every cluster of a scope, as
//! `fluxfleet tree ks|hr NAME -o json` answers — its inventory, the Kustomizations and
//! HelmReleases in it followed down, one tree for the fleet — a page of nodes at a time.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::page;
use super::state::{FleetServer, Paging, answer, invalid};
use super::strict::Strict;
use crate::export::Filter;
use crate::export::tree::Grown;
use crate::fleet::{FluxKind, ObjectKey};
use crate::session::evidence::Gather;
use crate::session::traced::{grow, in_scope};

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct TreeToolArgs {
    /// Kustomization (ks) or HelmRelease (hr).
    pub kind: String,
    pub name: String,
    /// Its namespace (flux-system when not given, as `flux tree`).
    pub namespace: Option<String>,
    /// Only clusters of this workspace.
    pub workspace: Option<String>,
    /// Only clusters whose name matches one of these globs (`prod-*`, `eu-??-1`).
    #[serde(default)]
    pub clusters: Vec<String>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[tool_router(router = tree_tools, vis = "pub(super)")]
impl FleetServer {
    #[tool(
        description = "What a Kustomization or HelmRelease put on every cluster in scope, as `fluxfleet tree ks|hr NAME -o json` (and `flux tree ks` on one cluster): its inventory, the Kustomizations and HelmReleases in it followed down (a release's objects found by helm-controller's labels), one tree for the fleet in `flux tree`'s order (`depth` 0 is the root). Per node `on` how many of the clusters that have the root have it, `ready` how many of those hold it ready (Flux objects only), `without` the clusters that have its parent and not it, `missing` those whose parent names it and that do not have it. `differs` says some clusters' trees differ; `absent` the clusters without the root; `unread` those not read and why. Read now from the clusters (read-only, bounded). Pages of nodes.",
        annotations(read_only_hint = true)
    )]
    async fn tree(
        &self,
        Parameters(Strict(args)): Parameters<Strict<TreeToolArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let paging = args.paging.asked()?;
        let kind = match args.kind.to_ascii_lowercase().as_str() {
            "kustomization" | "ks" => FluxKind::Kustomization,
            "helmrelease" | "hr" => FluxKind::HelmRelease,
            other => {
                return Err(invalid(format!(
                    "kind {other:?}: a tree starts from a Kustomization (ks) or a HelmRelease (hr)"
                )));
            }
        };
        if args.name.is_empty() {
            return Err(invalid("name the Kustomization or HelmRelease"));
        }
        let root = ObjectKey {
            kind,
            namespace: args.namespace.as_deref().unwrap_or("flux-system").into(),
            name: args.name.as_str().into(),
        };
        let scope = Filter {
            workspace: args.workspace,
            clusters: args.clusters,
            ..Filter::default()
        };
        let clusters = self.read(|index| in_scope(index, &scope)).await?;
        let tree = grow(&self.state.reader, &clusters, &root, Gather::default()).await;
        let mut fields = match serde_json::to_value(Grown::of(&root, &tree)) {
            Ok(Value::Object(map)) => map,
            _ => {
                return Err(ErrorData::internal_error(
                    "the answer could not be made",
                    None,
                ));
            }
        };
        let nodes = match fields.remove("nodes") {
            Some(Value::Array(nodes)) => nodes,
            _ => Vec::new(),
        };
        Ok(answer(
            fields,
            "nodes",
            page::take(nodes.into_iter(), paging),
        ))
    }
}
