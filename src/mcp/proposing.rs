//! `fluxfleet mcp --propose`: `suspend`, `resume` and `reconcile` plan as a dry run does and keep
//! a proposal for a person to decide (`fluxfleet approve`, the TUI's `:proposals`) instead of
//! acting; the server itself sends nothing. `proposal_status` follows a proposal to its end.

use jiff::Timestamp;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::args::{Picked, ProposeReconcileArgs, ProposeResumeArgs, ProposeSuspendArgs};
use super::asking::{admitted, asked_by, client_tool, reconciling};
use super::page;
use super::state::{FleetServer, Paging, Proposing, answer, invalid};
use super::strict::Strict;
use crate::actions;
use crate::fleet::scope::Scope;
use crate::fleet::verbs::{Intent, Verb};
use crate::proposals::{Proposal, ProposalRequest, ProposalSelection, RolloutStep};

/// What the assistant is told about acting, instead of [`super::tools`]' words for `--write`.
pub(super) const PROPOSES: &str = " Started with --propose: suspend, resume and reconcile change \
nothing themselves. Each makes a proposal — the targets, the exact patches, why you ask — that a \
person approves or rejects with fluxfleet; the call answers with its id. Say why in `why`. Follow \
it with proposal_status: pending, approved (with each target's outcome), rejected (with the \
reason), refused (the fleet changed before approval) or expired. A rollout going wrong can be \
halted the same way (halt_rollout).";

/// The tools that propose (with `--propose`): what needs the `fluxfleet:propose` scope.
pub(super) const TOOLS: [&str; 4] = ["suspend", "resume", "reconcile", "halt_rollout"];

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct StatusArgs {
    /// The proposal's id, as suspend, resume or reconcile answered it.
    pub id: String,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct HaltArgs {
    /// The deployed thing whose rollout goes wrong: Kustomization or HelmRelease (kind, plural
    /// or short name), or a source.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// Only clusters of this workspace.
    pub workspace: Option<String>,
    /// Only clusters whose name matches one of these globs.
    #[serde(default)]
    pub clusters: Vec<String>,
    /// Propose resuming exactly what a halt of this rollout suspended, instead.
    #[serde(default)]
    pub resume: bool,
    /// Why you ask, in a sentence: shown to the person who decides.
    pub why: Option<String>,
}

#[tool_router(router = proposal_tools, vis = "pub(super)")]
impl FleetServer {
    #[tool(
        name = "suspend",
        description = "Propose suspending Flux objects in scope (spec.suspend, with who and why recorded on them, as `flux suspend`). Nothing changes until a person approves: the answer is the proposal's id, its targets and exact patches. Say why in `why`.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn propose_suspend(
        &self,
        Parameters(Strict(args)): Parameters<Strict<ProposeSuspendArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let asked = (Verb::Suspend, args.picked, args.reason);
        self.propose(asked, args.why, &context).await
    }

    #[tool(
        name = "resume",
        description = "Propose resuming suspended Flux objects in scope and requesting a reconcile, as `flux resume`. Nothing changes until a person approves: the answer is the proposal's id, its targets and exact patches. Say why in `why`.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn propose_resume(
        &self,
        Parameters(Strict(args)): Parameters<Strict<ProposeResumeArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let asked = (Verb::Resume, args.picked, None);
        self.propose(asked, args.why, &context).await
    }

    #[tool(
        name = "reconcile",
        description = "Propose a reconcile of Flux objects in scope (with_source: their sources first), as `flux reconcile`. Nothing changes until a person approves: the answer is the proposal's id, its targets and exact patches. Say why in `why`.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn propose_reconcile(
        &self,
        Parameters(Strict(args)): Parameters<Strict<ProposeReconcileArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let verb = reconciling(args.with_source);
        self.propose((verb, args.picked, None), args.why, &context)
            .await
    }

    #[tool(
        description = "Propose halting a rollout going wrong: suspend the thing (kind, namespace, name) on every cluster of the scope its newest revision has not reached yet, with the reason \"halted rollout of <revision>\"; with resume, propose resuming exactly what such a halt suspended. Nothing changes until a person approves: the answer is the proposal's id, its targets and exact patches. Say why in `why`.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn halt_rollout(
        &self,
        Parameters(Strict(args)): Parameters<Strict<HaltArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(proposing) = &self.state.proposing else {
            return Err(invalid(
                "this server makes no proposals: start it with --propose",
            ));
        };
        let step = match args.resume {
            true => RolloutStep::ResumeHalted,
            false => RolloutStep::Halt,
        };
        let selection = ProposalSelection {
            scope: Scope {
                workspace: args.workspace,
                clusters: args.clusters,
                kind: Some(args.kind),
                namespace: Some(args.namespace),
                name: Some(args.name),
            },
            status: None,
            rollout: Some(step),
        };
        let now = Timestamp::now();
        let rollout = &self.state.config.rollout;
        let (key, halt) = self
            .read(|index| selection.halt(index, rollout, now))
            .await?
            .map_err(invalid)?;
        let intent = Intent {
            verb: halt.verb,
            user: asked_by(&context),
            reason: Some(halt.reason),
            token: now.to_string(),
        };
        let objects = halt.clusters.iter().map(|c| (*c, key.clone())).collect();
        let ask = actions::Ask {
            intent,
            objects: actions::Objects::Named(objects),
        };
        // Planned as if writes were granted: the person approving plans again with their own.
        let admitted = admitted(self, ask, actions::Purpose::Preview, None).await?;
        self.keep(proposing, &admitted, selection, args.why, &context)
            .await
    }

    #[tool(
        description = "Where a proposal stands: pending, approved (acting, then each target's outcome), rejected (with the person's reason), refused (the fleet changed before approval, with what changed) or expired.",
        annotations(read_only_hint = true)
    )]
    async fn proposal_status(
        &self,
        Parameters(Strict(args)): Parameters<Strict<StatusArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(proposing) = &self.state.proposing else {
            return Err(invalid(
                "this server makes no proposals: start it with --propose",
            ));
        };
        let asked = args.paging.asked()?;
        let proposal = proposing.store.load(&args.id).await.map_err(invalid)?;
        let mut doc = serde_json::Map::new();
        doc.insert("id".into(), json!(proposal.id));
        doc.insert("status".into(), json!(proposal.status(Timestamp::now())));
        doc.insert("action".into(), json!(proposal.action));
        doc.insert("proposedBy".into(), json!(proposal.proposed_by));
        doc.insert("created".into(), json!(proposal.created));
        doc.insert("expires".into(), json!(proposal.expires));
        doc.insert("count".into(), json!(proposal.sends));
        doc.insert("refused".into(), json!(proposal.refused));
        if let Some(decision) = &proposal.decision {
            doc.insert("decision".into(), json!(decision));
        }
        doc.insert("acted".into(), json!(proposal.outcomes.is_some()));
        let outcomes = proposal.outcomes.unwrap_or_default();
        Ok(answer(doc, "outcomes", page::take(outcomes.iter(), asked)))
    }
}

impl FleetServer {
    /// Plans the action as a dry run does and keeps it as a proposal.
    async fn propose(
        &self,
        (verb, picked, reason): (Verb, Picked, Option<String>),
        why: Option<String>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(proposing) = &self.state.proposing else {
            return Err(invalid(
                "this server makes no proposals: start it with --propose",
            ));
        };
        let request = picked.request(verb, reason)?;
        let now = Timestamp::now();
        let ask = request.ask(asked_by(context), now.to_string());
        // Planned as if writes were granted: the person approving plans again with their own.
        let admitted = admitted(self, ask, actions::Purpose::Preview, None).await?;
        let Picked { scope, status, .. } = picked;
        let selection = ProposalSelection {
            scope,
            status,
            rollout: None,
        };
        self.keep(proposing, &admitted, selection, why, context)
            .await
    }

    /// How many of `user`'s proposals are pending now.
    async fn pending_of(&self, proposing: &Proposing, user: &str) -> Result<usize, ErrorData> {
        let (proposals, _unreadable) = proposing
            .store
            .list()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let now = Timestamp::now();
        Ok(proposals
            .iter()
            .filter(|p| {
                p.user == user && p.status(now) == crate::proposals::ProposalStatus::Pending
            })
            .count())
    }

    /// Keeps what the one door admitted as a proposal and answers with it.
    async fn keep(
        &self,
        proposing: &Proposing,
        admitted: &actions::Admitted,
        selection: ProposalSelection,
        why: Option<String>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (intent, targets) = (admitted.intent(), admitted.targets());
        if let Some(nothing) = admitted.nothing_sent() {
            return Err(invalid(format!("{nothing}: nothing was proposed")));
        }
        let (tally, verb) = (admitted.tally(), intent.verb);
        let pending = self.pending_of(proposing, &intent.user).await?;
        if pending >= proposing.max_pending {
            return Err(invalid(format!(
                "{} has {pending} proposals pending, the most one person may \
                 (--max-pending-proposals {}): nothing was proposed — wait until a person \
                 approves or rejects one, or it expires",
                intent.user, proposing.max_pending
            )));
        }
        let asked = ProposalRequest {
            proposed_by: client_tool(context),
            why,
            selection,
            expiry: proposing.expiry,
        };
        let now = Timestamp::now();
        let proposal = Proposal::new(intent, targets, asked, now);
        proposing
            .store
            .create(&proposal)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut doc = serde_json::Map::new();
        doc.insert("proposal".into(), json!(proposal.id));
        doc.insert("status".into(), json!(proposal.status(now)));
        doc.insert("expires".into(), json!(proposal.expires));
        doc.insert("says".into(), json!(tally.describe(verb)));
        doc.insert("count".into(), json!(tally.sent));
        doc.insert("refused".into(), json!(tally.refused));
        doc.insert("hash".into(), json!(proposal.hash));
        doc.insert(
            "approve".into(),
            json!(format!(
                "a person runs `fluxfleet approve {}` (or `fluxfleet reject {} --reason …`)",
                proposal.id, proposal.id
            )),
        );
        let first = page::PageAsked::first(page::MAX_LIMIT);
        Ok(answer(
            doc,
            "targets",
            page::take(proposal.targets.iter(), first),
        ))
    }
}
