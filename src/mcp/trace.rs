//! The `trace` tool: where an object comes from on every cluster of a scope, as `fluxfleet
//! trace KIND NAME -o json` answers — each copy's owners up to what Flux applied, the
//! Kustomizations and HelmReleases that applied it, their sources and revisions — folded by
//! shape, the majority first, a page of shapes at a time.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::page;
use super::state::{FleetServer, Paging, answer, invalid};
use super::strict::Strict;
use crate::export::Filter;
use crate::export::trace::Traced;
use crate::fleet::trace::{Asked, resource::Resource};
use crate::session::evidence::Gather;
use crate::session::traced::{gather, in_scope};

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct TraceToolArgs {
    /// The kind, as kubectl takes it: Deployment (deploy), StatefulSet, DaemonSet, Job, Pod,
    /// Service, ConfigMap, Ingress, a Flux kind, or any other as KIND.GROUP
    /// (rollouts.argoproj.io). Secrets are never read.
    pub kind: String,
    pub name: String,
    /// Its namespace (none for a cluster-scoped kind).
    pub namespace: Option<String>,
    /// Only clusters of this workspace.
    pub workspace: Option<String>,
    /// Only clusters whose name matches one of these globs (`prod-*`, `eu-??-1`).
    #[serde(default)]
    pub clusters: Vec<String>,
    #[serde(flatten)]
    pub paging: Paging,
}

#[tool_router(router = trace_tools, vis = "pub(super)")]
impl FleetServer {
    #[tool(
        description = "Where an object comes from on every cluster in scope, as `fluxfleet trace KIND NAME -o json` (and `flux trace` on one cluster): each copy's owners up to what Flux applied (a Pod to its ReplicaSet to its Deployment), the Kustomization or HelmRelease that applied it and the one above, each with its revision and source; the copies folded by that chain into shapes, the most clusters first, every other shape (applied by another object, another source or revision, not managed by Flux) with its clusters. `diverges` says the copies differ; `absent` the clusters without it; `unread` those not read and why. Read now from the clusters (read-only, bounded). Pages of shapes.",
        annotations(read_only_hint = true)
    )]
    async fn trace(
        &self,
        Parameters(Strict(args)): Parameters<Strict<TraceToolArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let paging = args.paging.asked()?;
        let asked = Asked {
            resource: Resource::named(&args.kind).map_err(invalid)?,
            kind: args.kind,
            namespace: args.namespace.unwrap_or_default(),
            name: args.name,
        };
        if asked.name.is_empty() {
            return Err(invalid("name the object: kind and name"));
        }
        let scope = Filter {
            workspace: args.workspace,
            clusters: args.clusters,
            ..Filter::default()
        };
        let clusters = self.read(|index| in_scope(index, &scope)).await?;
        let trace = gather(&self.state.reader, &clusters, &asked, Gather::default()).await;
        let traced = Traced::of(&asked, &trace);
        let mut fields = match serde_json::to_value(&traced) {
            Ok(Value::Object(map)) => map,
            _ => {
                return Err(ErrorData::internal_error(
                    "the answer could not be made",
                    None,
                ));
            }
        };
        let shapes = match fields.remove("shapes") {
            Some(Value::Array(shapes)) => shapes,
            _ => Vec::new(),
        };
        Ok(answer(
            fields,
            "shapes",
            page::take(shapes.into_iter(), paging),
        ))
    }
}
