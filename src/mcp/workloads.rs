//! The `workloads` tool: what broke inside a Kustomization or HelmRelease, as `fluxfleet
//! workloads -o json` answers for the same scope — its workloads' verdicts folded across the
//! clusters where it is not ready, read from those clusters now (read-only, bounded), a page
//! of folded lines at a time.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::page;
use super::state::{FleetServer, Paging, answer, invalid};
use super::strict::Strict;
use crate::export::workloads::targets;
use crate::fleet::FluxKind;
use crate::fleet::scope::Scope;
use crate::session::evidence::{Gather, gather};

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct WorkloadsToolArgs {
    /// kind (Kustomization or HelmRelease) and name are required; workspace, cluster globs and
    /// namespace narrow where it is read.
    #[serde(flatten)]
    pub scope: Scope,
    /// Every cluster that has the object, not only those where it is not ready.
    #[serde(default)]
    pub all: bool,
    #[serde(flatten)]
    pub paging: Paging,
}

#[tool_router(router = workload_tools, vis = "pub(super)")]
impl FleetServer {
    #[tool(
        description = "What broke inside a Kustomization or HelmRelease, as `fluxfleet workloads KIND NAME -o json`: its workloads (Deployments, StatefulSets, DaemonSets, Jobs) read now from every cluster in scope where it is not ready (all: everywhere), each with a verdict (ImagePullBackOff with the image and the pull error, CrashLoopBackOff with the exit code, OOMKilled and the log line that tells, Pending with the scheduler's reason, a failing readiness probe, a Job over its backoff limit, a rollout past its deadline, or healthy); equal verdicts folded into one line with their clusters, and the clusters or reads that failed counted with why. Pages of lines; the fields beside them describe the first object named.",
        annotations(read_only_hint = true)
    )]
    async fn workloads(
        &self,
        Parameters(Strict(args)): Parameters<Strict<WorkloadsToolArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let filter = super::state::filter(&args.scope, None)?;
        let asked = args.paging.asked()?;
        match (filter.kind, &filter.name) {
            (Some(FluxKind::Kustomization | FluxKind::HelmRelease), Some(_)) => {}
            _ => {
                return Err(invalid(
                    "name the object: kind Kustomization (ks) or HelmRelease (hr), and its name",
                ));
            }
        }
        let found = self.read(|index| targets(index, &filter, args.all)).await?;
        let mut fields = serde_json::Map::new();
        let Some((key, clusters)) = found.into_iter().next() else {
            fields.insert(
                "note".into(),
                Value::from(if args.all {
                    "no cluster in the scope has it"
                } else {
                    "no cluster in the scope has it not ready"
                }),
            );
            return Ok(answer(
                fields,
                "lines",
                page::take(std::iter::empty::<Value>(), asked),
            ));
        };
        let mut folded = gather(&self.state.reader, &clusters, &key, Gather::default()).await;
        let lines = std::mem::take(&mut folded.lines);
        let described = crate::export::workloads::ObjectEvidence {
            kind: key.kind,
            namespace: key.namespace.to_string(),
            name: key.name.to_string(),
            folded,
        };
        if let Ok(Value::Object(map)) = serde_json::to_value(&described) {
            fields = map;
        }
        fields.remove("lines");
        Ok(answer(
            fields,
            "lines",
            page::take(lines.into_iter(), asked),
        ))
    }
}
