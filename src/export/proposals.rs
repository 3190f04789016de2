//! `fluxfleet proposals [ID]`, `fluxfleet approve ID`, `fluxfleet reject ID`: the proposals an
//! assistant made through `fluxfleet mcp --propose`, and a person's decision on each. Approval
//! plans again against the fleet as it is then and acts only on exactly what was proposed,
//! through the guardrails, modes and journal every action goes through.

use std::io::{self, Write};
use std::time::Duration;

use jiff::Timestamp;

use super::act::{self, Asking};
use super::opening::fleet;
use super::request::{Output, exit};
use super::table::{Table, safe};
use crate::actions::{Guard, Tally};
use crate::audit;
use crate::config::Mode;
use crate::proposals::{Decision, Keeper, Outcome, Proposal, Status};
use crate::session::Session;
use crate::session::resolve::Sources;
use crate::units::age;

/// What `fluxfleet approve` was asked.
#[derive(Clone, Debug)]
pub struct Approve {
    pub id: String,
    pub sources: Sources,
    /// `--write` / `--read-only` over the config's mode.
    pub mode: Option<Mode>,
    pub yes: bool,
    pub timeout: Duration,
    pub output: Output,
}

/// `fluxfleet proposals`: every proposal, the newest first; with an id, that one whole. On the
/// bus with `nats`, else beside the journal.
pub async fn list(id: Option<String>, output: Output, nats: Option<crate::bus::Options>) -> u8 {
    let store = match Keeper::of(nats.as_ref()).await {
        Ok(store) => store,
        Err(e) => return failed(&e),
    };
    if let Some(id) = id {
        return match store.load(&id).await {
            Ok(proposal) => show(&proposal, output),
            Err(e) => failed(&e),
        };
    }
    let (found, problems) = match store.list().await {
        Ok(listed) => listed,
        Err(e) => return failed(&e),
    };
    for problem in &problems {
        eprintln!("warning: {}", safe(&problem.to_string()));
    }
    let now = Timestamp::now();
    let written = match output {
        Output::Table => {
            let mut t = Table::new(vec![
                "ID",
                "STATUS",
                "ACTION",
                "TARGETS",
                "PROPOSED BY",
                "AGE",
                "EXPIRES",
                "WHY",
            ]);
            for p in &found {
                t.row(vec![
                    p.id.clone(),
                    p.status(now).to_string(),
                    p.action.to_string(),
                    targets(p),
                    p.proposed_by.clone(),
                    age(Some(p.created), now),
                    expires(p, now),
                    p.why.clone().unwrap_or_default(),
                ]);
            }
            let mut out = io::stdout();
            t.write(&mut out).and_then(|()| out.flush())
        }
        Output::Json => {
            let docs: Vec<serde_json::Value> = found.iter().map(|p| doc(p, now)).collect();
            super::output::write_json(&mut io::stdout(), &docs)
        }
        Output::Ndjson => {
            let mut out = io::stdout();
            found
                .iter()
                .try_for_each(|p| super::output::write_line(&mut out, &doc(p, now)))
                .and_then(|()| out.flush())
        }
    };
    match super::request::finish(written) {
        Ok(()) if problems.is_empty() => exit::OK,
        Ok(()) => exit::ERROR,
        Err(code) => code,
    }
}

/// `fluxfleet reject ID --reason TEXT`.
pub async fn reject(id: String, reason: String, nats: Option<crate::bus::Options>) -> u8 {
    let now = Timestamp::now();
    let decision = Decision::Rejected {
        by: audit::local_user(),
        at: now,
        reason,
    };
    let store = match Keeper::of(nats.as_ref()).await {
        Ok(store) => store,
        Err(e) => return failed(&e),
    };
    match store.decide(&id, decision, now).await {
        Ok(p) => {
            eprintln!("rejected {}: nothing will be sent", p.id);
            exit::OK
        }
        Err(e) => failed(&e),
    }
}

/// `fluxfleet approve ID`: plans the proposal again on the fleet as it is, acts only when that
/// is exactly what was proposed, and records who approved it and how each target ended.
pub async fn approve(request: Approve) -> u8 {
    let store = match Keeper::of(request.sources.nats.as_ref()).await {
        Ok(store) => store,
        Err(e) => return failed(&e),
    };
    let proposal = match store.load(&request.id).await {
        Ok(p) => p,
        Err(e) => return failed(&e),
    };
    let status = proposal.status(Timestamp::now());
    if status != Status::Pending {
        eprintln!(
            "error: proposal {} is {status}: only a pending proposal can be approved",
            proposal.id
        );
        return exit::ERROR;
    }
    let filter = match proposal.selection.filter() {
        Ok(filter) => filter,
        Err(why) => {
            eprintln!(
                "error: proposal {} selects nothing valid: {why}",
                proposal.id
            );
            return exit::ERROR;
        }
    };
    let opened = match fleet(&request.sources).await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let mut config = opened.config;
    let (grant, permissions) = config.writable(request.mode, &opened.fleet.clusters());
    let refused = crate::actions::may_write(
        config.writes_refused().as_deref(),
        grant.is_some(),
        proposal.action,
    );
    let (Some(grant), Ok(())) = (grant, &refused) else {
        let why = refused.err().map(|r| r.to_string()).unwrap_or_default();
        eprintln!("error: {why}; proposal {} stays pending", proposal.id);
        return exit::USAGE;
    };
    act::watch_kinds(&mut config, filter.kind, proposal.action);
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    if !live.settle(request.timeout).await {
        eprintln!(
            "error: not every cluster answered within the timeout, so the proposal cannot be \
             compared with the fleet; nothing was sent and {} stays pending",
            proposal.id
        );
        live.shutdown().await;
        return exit::ERROR;
    }
    let guard = Guard {
        actions: &config.actions,
        permissions: Some(&permissions),
    };
    let intent = proposal.intent();
    let now = Timestamp::now();
    let objects = match proposal.selection.select(&live.index, &config.rollout, now) {
        Ok(objects) => objects,
        Err(why) => {
            eprintln!(
                "error: proposal {} selects nothing valid: {why}",
                proposal.id
            );
            live.shutdown().await;
            return exit::ERROR;
        }
    };
    if let Err(refused) = crate::actions::within_limits(objects.len(), &config.actions) {
        eprintln!("error: {refused}; proposal {} stays pending", proposal.id);
        live.shutdown().await;
        return exit::USAGE;
    }
    let targets = crate::actions::plan(&live.index, objects, &intent, &guard);
    let approver = audit::local_user();
    if let Some(changed) = proposal.changes(&targets) {
        live.shutdown().await;
        eprintln!(
            "error: the fleet changed since proposal {} was made; nothing was sent:",
            proposal.id
        );
        for line in &changed {
            eprintln!("  {}", safe(line));
        }
        let refused = Decision::Refused {
            by: approver,
            at: now,
            changed,
        };
        if let Err(e) = store.decide(&proposal.id, refused, now).await {
            eprintln!("error: {}", safe(&e.to_string()));
        }
        return exit::ERROR;
    }
    let tally = Tally::of(&targets);
    // What is approved, shown to the person; on stderr when stdout is NDJSON for a program.
    let shown = match request.output {
        Output::Ndjson => act::print_targets(&targets, &mut std::io::stderr()),
        _ => act::print_targets(&targets, &mut std::io::stdout()),
    };
    if let Err(code) = shown {
        live.shutdown().await;
        return code;
    }
    eprintln!("{}", said(&proposal));
    let asking = Asking {
        yes: request.yes,
        verb: proposal.action,
        confirm_above: config.actions.confirm_above,
        even_one: true,
    };
    if !act::confirmed(&asking, tally) {
        live.shutdown().await;
        return exit::USAGE;
    }
    let approved = Decision::Approved {
        by: approver.clone(),
        at: now,
    };
    // The claim: of two people approving at once, one acts.
    if let Err(e) = store.decide(&proposal.id, approved, now).await {
        live.shutdown().await;
        return failed(&e);
    }
    let proposed = audit::Proposed {
        id: proposal.id.clone(),
        proposed_by: proposal.proposed_by.clone(),
        proposer: proposal.user.clone(),
        approved_by: approver,
    };
    let sending = act::Sending {
        timeout: request.timeout,
        concurrency: config.actions.concurrency,
        events: config.actions.events,
        ndjson: request.output == Output::Ndjson,
    };
    let job = crate::actions::Job {
        run: 1,
        intent,
        targets,
        proposal: Some(proposed),
    };
    let (code, results) = act::send_job(job, live, (grant, permissions), tally, sending).await;
    let outcomes = results.iter().map(Outcome::of).collect();
    if let Err(e) = store.record_outcomes(&proposal.id, outcomes).await {
        eprintln!("error: {}", safe(&e.to_string()));
        return exit::ERROR;
    }
    code
}

/// "6 (1 refused)".
fn targets(p: &Proposal) -> String {
    match p.refused {
        0 => p.sends.to_string(),
        refused => format!("{} ({refused} refused)", p.sends),
    }
}

/// "in 42m", or "-" once it cannot act any more.
fn expires(p: &Proposal, now: Timestamp) -> String {
    match p.status(now) {
        Status::Pending => format!("in {}", age(Some(now), p.expires)),
        _ => "-".into(),
    }
}

/// Who asked, for whom and why: said before a person approves.
fn said(p: &Proposal) -> String {
    let mut text = format!(
        "proposal {} by {} (for {}): {} {}",
        p.id,
        safe(&p.proposed_by),
        safe(&p.user),
        p.action,
        targets(p)
    );
    if let Some(why) = &p.why {
        text.push_str(&format!(" — why: {}", safe(why)));
    }
    text
}

/// A proposal as JSON, with its status now.
fn doc(p: &Proposal, now: Timestamp) -> serde_json::Value {
    let mut value = serde_json::to_value(p).unwrap_or_default();
    value["status"] = serde_json::json!(p.status(now));
    value
}

/// One proposal: who asked and why, its targets and patches, the decision and outcomes.
fn show(p: &Proposal, output: Output) -> u8 {
    let now = Timestamp::now();
    if output != Output::Table {
        let written = super::output::write_json(&mut io::stdout(), &doc(p, now));
        return super::request::finish(written).map_or_else(|code| code, |()| exit::OK);
    }
    let mut lines = vec![
        said(p),
        format!("status: {}; expires {}", p.status(now), p.expires),
    ];
    match &p.decision {
        Some(Decision::Approved { by, at }) => lines.push(format!("approved by {by} at {at}")),
        Some(Decision::Rejected { by, at, reason }) => {
            lines.push(format!("rejected by {by} at {at}: {}", safe(reason)));
        }
        Some(Decision::Refused { by, at, changed }) => {
            lines.push(format!(
                "refused when {by} approved it at {at}; the fleet had changed:"
            ));
            lines.extend(changed.iter().map(|c| format!("  {}", safe(c))));
        }
        None => {}
    }
    let mut t = Table::new(vec![
        "WORKSPACE",
        "CLUSTER",
        "KIND",
        "NAMESPACE",
        "NAME",
        "WOULD",
        "OUTCOME",
    ]);
    for target in &p.targets {
        let outcome = p.outcomes.iter().flatten().find(|o| {
            (&o.cluster, &o.kind, &o.namespace, &o.name)
                == (
                    &target.cluster,
                    &target.kind,
                    &target.namespace,
                    &target.name,
                )
        });
        t.row(vec![
            target.workspace.clone(),
            target.cluster.clone(),
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
            target.would.clone(),
            outcome.map_or(String::new(), |o| {
                [o.outcome.as_str(), o.message.as_str()]
                    .join(" ")
                    .trim()
                    .to_string()
            }),
        ]);
    }
    let mut out = io::stdout();
    let written = lines
        .iter()
        .try_for_each(|l| writeln!(out, "{l}"))
        .and_then(|()| t.write(&mut out))
        .and_then(|()| out.flush());
    super::request::finish(written).map_or_else(|code| code, |()| exit::OK)
}

fn failed(e: &crate::proposals::StoreError) -> u8 {
    eprintln!("error: {}", safe(&e.to_string()));
    match e {
        crate::proposals::StoreError::BadId(_) => exit::USAGE,
        _ => exit::ERROR,
    }
}
