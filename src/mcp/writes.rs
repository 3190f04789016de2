//! The tools that change clusters — `suspend`, `resume`, `reconcile` — which exist only when
//! `fluxfleet mcp --write` was started, through the planner, guardrails and journal every action
//! goes through. The confirmation rule: a call without a token is a dry run, which answers with
//! the targets, a token and the count it would send; the call that acts names that token and
//! count, for the same arguments, and acts only if the fleet still gives the same count.

use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::args::{DryRunToken, Picked, WriteReconcileArgs, WriteResumeArgs, WriteSuspendArgs};
use super::asking::{admitted, asked_by, client_tool, principal, reconciling};
use super::page::{self, PageAsked};
use super::state::{Awaiting, DryRun, FleetServer, Writes, answer, invalid};
use super::strict::Strict;
use crate::actions::{self, Admitted, Carry, Purpose, Target, Update, Watch};
use crate::config::Config;
use crate::fleet::verbs::Verb;

/// The tools that change clusters (with `--write`): what needs the `fluxfleet:write` scope.
pub(super) const TOOLS: [&str; 3] = ["suspend", "resume", "reconcile"];

/// Dry runs remembered, the newest last; an older one's token no longer acts.
const DRY_RUNS: usize = 32;
/// How long a dry run's token may act.
const TOKEN_LIFE: Duration = Duration::from_secs(600);

/// One target of an answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Planned<'a> {
    workspace: &'a str,
    cluster: &'a str,
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
    /// The patches in order, or why it is refused.
    would: String,
}

/// The writer a call acts through: as the person asking, where the server impersonates
/// (`--impersonate`: their name and groups behind its prefix), else the server's own.
fn writer_for(
    writes: &Writes,
    context: &RequestContext<RoleServer>,
) -> Result<crate::session::Writer, ErrorData> {
    let Some(prefix) = &writes.impersonate else {
        return Ok(writes.writer.clone());
    };
    let Some(person) = principal(context) else {
        return Err(invalid(
            "this server acts as the person asking, and no person's token came with the call",
        ));
    };
    let who = crate::fleet::notice::Identity {
        username: format!("{prefix}{}", person.username),
        groups: person
            .groups
            .iter()
            .map(|g| format!("{prefix}{g}"))
            .collect(),
    };
    let who = crate::source::Impersonation::of(&who).map_err(invalid)?;
    Ok(writes.writer.acting_as(&std::sync::Arc::new(who)))
}

#[tool_router(router = write_tools, vis = "pub(super)")]
impl FleetServer {
    #[tool(
        description = "Suspend Flux objects in scope (spec.suspend, with who and why recorded on them, as `flux suspend`). Without token: a dry run listing the targets and the exact patches, with a token and a count. Call again with the same arguments plus that token and count to act.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn suspend(
        &self,
        Parameters(Strict(args)): Parameters<Strict<WriteSuspendArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let asked = (Verb::Suspend, args.picked, args.reason);
        self.act(asked, args.confirm, &context).await
    }

    #[tool(
        description = "Resume suspended Flux objects in scope and request a reconcile, as `flux resume`; waits until each is handled. Dry run first without token, then act with its token and count.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn resume(
        &self,
        Parameters(Strict(args)): Parameters<Strict<WriteResumeArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let asked = (Verb::Resume, args.picked, None);
        self.act(asked, args.confirm, &context).await
    }

    #[tool(
        description = "Request a reconcile of Flux objects in scope (with_source: their sources first), as `flux reconcile`; waits until each is handled. Dry run first without token, then act with its token and count.",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn reconcile(
        &self,
        Parameters(Strict(args)): Parameters<Strict<WriteReconcileArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let verb = reconciling(args.with_source);
        self.act((verb, args.picked, None), args.confirm, &context)
            .await
    }
}

impl FleetServer {
    /// A dry run (no token) or the action its token confirms.
    async fn act(
        &self,
        (verb, picked, reason): (Verb, Picked, Option<String>),
        confirm: DryRunToken,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let state = &self.state;
        let Some(writes) = &state.writes else {
            return Err(invalid("this server only reads: start it with --write"));
        };
        let request = picked.request(verb, reason.clone())?;
        let DryRunToken { token, count } = confirm;
        let asked = json!({
            "scope": serde_json::to_value(&picked.scope).unwrap_or(Value::Null),
            "status": picked.status, "reason": reason, "all": picked.all,
        });
        let by = principal(context).map(|p| p.subject.clone());
        let confirmed = match (&token, count) {
            (None, None) => None,
            (Some(token), Some(count)) => {
                Some(confirmed(writes, (verb, &asked, &by), token, count)?)
            }
            _ => {
                return Err(invalid(
                    "token and count go together: both from the dry run",
                ));
            }
        };
        let token = confirmed
            .clone()
            .unwrap_or_else(|| jiff::Timestamp::now().to_string());
        let ask = request.ask(asked_by(context), token);
        let purpose = match confirmed {
            Some(_) => Purpose::Send { granted: true },
            None => Purpose::Preview,
        };
        let admitted = admitted(self, ask, purpose, Some(&writes.permissions)).await?;
        let tally = admitted.tally();
        let Some(token) = confirmed else {
            return Ok(dry_run(writes, (verb, asked, by), &admitted));
        };
        if Some(tally.sent) != count {
            return Err(invalid(format!(
                "the fleet changed since the dry run: {} objects would now be sent, the dry run said {}; nothing was sent — dry-run again",
                tally.sent,
                count.unwrap_or(0)
            )));
        }
        let tool = client_tool(context);
        let job = admitted.into_job(1, None).map_err(invalid)?;
        let config: &Config = &state.config;
        let journal = crate::audit::default_path();
        let writer = writer_for(writes, context)?;
        let how = Carry {
            writer: Some(&writer),
            wait: verb.requests_reconcile().then_some(state.timeout),
            concurrency: config.actions.concurrency,
            journal: journal.as_deref(),
            tool: Some(&tool),
            events: config.actions.events,
        };
        let (tell, told) = mpsc::unbounded_channel();
        let awaited = writes.awaited.clone();
        let index = state.index.clone();
        let report = |target: &Target, update: Update<'_>, _: &actions::Progress| {
            if matches!(update, Update::Requested) {
                awaited.add(Awaiting {
                    cluster: target.cluster,
                    key: target.key.clone(),
                    token: token.clone(),
                    tell: tell.clone(),
                });
                // Handled before it was awaited: told now.
                if let Ok(index) = index.read() {
                    awaited.tell(&index);
                }
            }
        };
        let (results, journaled) =
            actions::carry_out(&job, how, Some(Watch::Told(told)), report).await;
        let failed = results.iter().filter(|r| r.outcome != "done").count();
        let mut doc = serde_json::Map::new();
        doc.insert("action".into(), json!(verb));
        doc.insert("token".into(), json!(token));
        doc.insert("done".into(), json!(results.len() - failed));
        doc.insert("notDone".into(), json!(failed));
        if let Err(e) = journaled {
            doc.insert("journalError".into(), json!(e.to_string()));
        }
        let paged = page::take(results.iter(), PageAsked::first(page::MAX_LIMIT));
        Ok(answer(doc, "results", paged))
    }
}

/// Checks the dry run `token` names: the same verb and arguments, not expired, the same count.
/// Returns the token, which becomes the action's (its `requestedAt` and journal token), and
/// forgets the dry run: a token acts once.
fn confirmed(
    writes: &Writes,
    (verb, asked, by): (Verb, &Value, &Option<String>),
    token: &str,
    count: usize,
) -> Result<String, ErrorData> {
    let mut dry_runs = writes
        .dry_runs
        .lock()
        .map_err(|_| ErrorData::internal_error("the dry runs are unusable", None))?;
    let Some(at) = dry_runs.iter().position(|d| d.token == token) else {
        return Err(invalid(format!(
            "token {token:?} is not a dry run's of this server, or it has acted already: dry-run first"
        )));
    };
    let dry = &dry_runs[at];
    // Another person's dry run is not theirs to confirm: said as one not found.
    if dry.by != *by {
        return Err(invalid(format!(
            "token {token:?} is not a dry run's of this server, or it has acted already: dry-run first"
        )));
    }
    if dry.at.elapsed() > TOKEN_LIFE {
        return Err(invalid(
            "that dry run is older than ten minutes: dry-run again",
        ));
    }
    if dry.verb != verb || dry.asked != *asked {
        return Err(invalid(format!(
            "token {token:?} is a dry run of other arguments ({} {}): call with the same ones",
            dry.verb, dry.asked
        )));
    }
    if dry.count != count {
        return Err(invalid(format!(
            "the dry run said {} objects, not {count}",
            dry.count
        )));
    }
    // One action per dry run: its token acts once.
    let token = dry.token.clone();
    dry_runs.remove(at);
    Ok(token)
}

/// Remembers the dry run and answers with its targets, token and count.
fn dry_run(
    writes: &Writes,
    (verb, asked, by): (Verb, Value, Option<String>),
    admitted: &Admitted,
) -> CallToolResult {
    let (intent, targets, tally) = (admitted.intent(), admitted.targets(), admitted.tally());
    if let Ok(mut dry_runs) = writes.dry_runs.lock() {
        if dry_runs.len() == DRY_RUNS {
            dry_runs.pop_front();
        }
        dry_runs.push_back(DryRun {
            token: intent.token.clone(),
            verb,
            asked,
            count: tally.sent,
            at: Instant::now(),
            by,
        });
    }
    let planned = targets.iter().map(|t| Planned {
        workspace: &t.record.workspace,
        cluster: &t.record.cluster,
        kind: &t.record.kind,
        namespace: &t.record.namespace,
        name: &t.record.name,
        would: t.would(),
    });
    let mut doc = serde_json::Map::new();
    doc.insert("dryRun".into(), json!(true));
    doc.insert("token".into(), json!(intent.token));
    doc.insert("count".into(), json!(tally.sent));
    doc.insert("refused".into(), json!(tally.refused));
    doc.insert("says".into(), json!(tally.describe(verb)));
    answer(
        doc,
        "targets",
        page::take(planned, PageAsked::first(page::MAX_LIMIT)),
    )
}
