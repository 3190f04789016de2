//! `fluxfleet proposals [ID]`: the proposals an assistant made through `fluxfleet mcp
//! --propose`, and the decision on each (made by `approve` and `reject`, in
//! [`crate::acting::approve`]).

use std::io::{self, Write};
use std::sync::Arc;

use jiff::Timestamp;

use super::outcome::{Ended, ReadFailed};
use crate::headless::Output;
use crate::headless::table::{Table, safe};
use crate::headless::{Edge, Said};
use crate::proposals::{Decision, Keeper, Proposal, ProposalStatus};
use crate::units::age;

/// `fluxfleet proposals`: every proposal, the newest first; with an id, that one whole. On the
/// bus with `nats`, else beside the journal.
pub async fn list(
    id: Option<String>,
    output: Output,
    nats: Option<crate::bus::Options>,
    edge: Arc<dyn Edge>,
) -> Result<Ended, ReadFailed> {
    let store = Keeper::of(nats.as_ref()).await?;
    if let Some(id) = id {
        let proposal = store.load(&id).await?;
        show(&proposal, output)?;
        return Ok(Ended::Done);
    }
    let (found, problems) = store.list().await?;
    for problem in &problems {
        edge.said(Said::Warning(problem.to_string()));
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
                    p.sends_told(),
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
            crate::headless::writing::write_json(&mut io::stdout(), &docs)
        }
        Output::Ndjson => {
            let mut out = io::stdout();
            found
                .iter()
                .try_for_each(|p| crate::headless::writing::write_line(&mut out, &doc(p, now)))
                .and_then(|()| out.flush())
        }
    };
    written?;
    Ok(match problems.is_empty() {
        true => Ended::Done,
        false => Ended::Unreadable,
    })
}

/// "in 42m", or "-" once it cannot act any more.
fn expires(p: &Proposal, now: Timestamp) -> String {
    match p.status(now) {
        ProposalStatus::Pending => format!("in {}", age(Some(now), p.expires)),
        _ => "-".into(),
    }
}

/// A proposal as JSON, with its status now.
fn doc(p: &Proposal, now: Timestamp) -> serde_json::Value {
    let mut value = serde_json::to_value(p).unwrap_or_default();
    value["status"] = serde_json::json!(p.status(now));
    value
}

/// One proposal: who asked and why, its targets and patches, the decision and outcomes.
fn show(p: &Proposal, output: Output) -> io::Result<()> {
    let now = Timestamp::now();
    if output != Output::Table {
        return crate::headless::writing::write_json(&mut io::stdout(), &doc(p, now));
    }
    let mut lines = vec![
        safe(&p.told()).into_owned(),
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
    lines
        .iter()
        .try_for_each(|l| writeln!(out, "{l}"))
        .and_then(|()| t.write(&mut out))
        .and_then(|()| out.flush())
}
