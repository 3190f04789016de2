//! `fluxfleet approve ID` and `fluxfleet reject ID`: a person's decision on a proposal an
//! assistant made through `fluxfleet mcp --propose`. Approval plans again against the fleet as
//! it is then and acts only on exactly what was proposed, through the guardrail, modes and
//! journal every action goes through.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::failed::{ActFailed, ProposalFailed};
use super::send::{Asking, Sending, Sent, confirmed, send_job, watch_kinds, write_targets};
use crate::actions::{Admitted, Ask, Objects, Purpose, Refused, Rules, Unsent};
use crate::audit;
use crate::config::Mode;
use crate::fleet::Index;
use crate::headless::Output;
use crate::headless::opening::fleet;
use crate::headless::table::safe;
use crate::headless::{Edge, Said};
use crate::proposals::{Decision, Keeper, Proposal, ProposalStatus, StoreError, TargetOutcome};
use crate::session::Session;
use crate::session::resolve::Sources;

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

/// What an approval did: the job sent, and whether its outcomes are recorded on the proposal.
#[derive(Debug)]
pub struct Approved {
    pub sent: Sent,
    pub unrecorded: Option<StoreError>,
}

/// `fluxfleet reject ID --reason TEXT`: the proposal as rejected.
pub async fn reject(
    id: String,
    reason: String,
    nats: Option<crate::bus::Options>,
) -> Result<Proposal, ProposalFailed> {
    let now = Timestamp::now();
    let decision = Decision::Rejected {
        by: audit::local_user(),
        at: now,
        reason,
    };
    let store = Keeper::of(nats.as_ref()).await?;
    Ok(store.decide(&id, decision, now).await?)
}

/// `fluxfleet approve ID`: plans the proposal again on the fleet as it is, acts only when that
/// is exactly what was proposed, and records who approved it and how each target ended.
pub async fn approve(request: Approve, edge: Arc<dyn Edge>) -> Result<Approved, ProposalFailed> {
    let store = Keeper::of(request.sources.nats.as_ref()).await?;
    let proposal = store.load(&request.id).await?;
    let status = proposal.status(Timestamp::now());
    if status != ProposalStatus::Pending {
        let id = proposal.id.clone();
        return Err(ProposalFailed::NotPending { id, status });
    }
    let filter = proposal.selection.filter().map_err(|why| {
        let id = proposal.id.clone();
        ProposalFailed::SelectsNothing { id, why }
    })?;
    let opened = fleet(&request.sources, edge.as_ref()).await?;
    let mut config = opened.config;
    let (grant, permissions) = config.writable(request.mode, &opened.fleet.clusters());
    let writes_refused = config.writes_refused();
    watch_kinds(&mut config, filter.kind, proposal.action);
    let rules = Rules {
        writes_refused: writes_refused.as_deref(),
        purpose: Purpose::Send {
            granted: grant.is_some(),
        },
        actions: &config.actions,
        permissions: Some(&permissions),
    };
    let pending = || Unsent::Pending(proposal.id.clone());
    // The door asked once before any cluster is: only what matches can change once the fleet
    // is read.
    let ask = |objects| Ask {
        intent: proposal.intent(),
        objects: Objects::Named(objects),
    };
    match crate::actions::admit(&Index::default(), ask(Vec::new()), &rules) {
        Err(refused) if refused != Refused::NoMatch => {
            let then = pending();
            return Err(ActFailed::Refused { refused, then }.into());
        }
        _ => {}
    }
    let Some(grant) = grant else {
        // Never: refused as read-only above.
        let verb = proposal.action;
        let refused = Refused::ReadOnly { verb };
        let then = pending();
        return Err(ActFailed::Refused { refused, then }.into());
    };
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    let planned = plan(&proposal, &mut live, &config, &rules, request.timeout).await;
    // What it would do now; nothing at all when what it named is gone (a halt whose copies all
    // moved on since): a changed fleet either way.
    let now_targets = match &planned {
        Ok(admitted) => Some(admitted.targets()),
        Err(ProposalFailed::Act(ActFailed::Refused {
            refused: Refused::NoMatch,
            ..
        })) => Some(&[][..]),
        Err(_) => None,
    };
    let approver = audit::local_user();
    let now = Timestamp::now();
    if let Some(changed) = now_targets.and_then(|targets| proposal.changes(targets)) {
        live.shutdown().await;
        let refused = Decision::Refused {
            by: approver,
            at: now,
            changed: changed.clone(),
        };
        let unrecorded = store
            .decide(&proposal.id, refused, now)
            .await
            .err()
            .map(Box::new);
        let id = proposal.id.clone();
        return Err(ProposalFailed::Changed {
            id,
            changed,
            unrecorded,
        });
    }
    let admitted = match planned {
        Ok(admitted) => admitted,
        Err(failed) => {
            live.shutdown().await;
            return Err(failed);
        }
    };
    let tally = admitted.tally();
    let decided = shown(&proposal, admitted.targets(), &request, edge.as_ref())
        .and_then(|()| {
            let asking = Asking {
                yes: request.yes,
                verb: proposal.action,
                confirmation: admitted.confirmation(),
                even_one: true,
            };
            confirmed(&asking, tally, edge.as_ref()).map_err(ProposalFailed::from)
        })
        .map(|()| Decision::Approved {
            by: approver.clone(),
            at: now,
        });
    // The claim: of two people approving at once, one acts.
    let claimed = match decided {
        Ok(approved) => store
            .decide(&proposal.id, approved, now)
            .await
            .map_err(ProposalFailed::from),
        Err(failed) => Err(failed),
    };
    if let Err(failed) = claimed {
        live.shutdown().await;
        return Err(failed);
    }
    let proposed = audit::Proposed {
        id: proposal.id.clone(),
        proposed_by: proposal.proposed_by.clone(),
        proposer: proposal.user.clone(),
        approved_by: approver,
    };
    let sending = Sending::of(&config.actions, request.timeout, request.output);
    let job = match admitted.into_job(1, Some(proposed)) {
        Ok(job) => job,
        Err(refused) => {
            live.shutdown().await;
            let then = pending();
            return Err(ActFailed::Refused { refused, then }.into());
        }
    };
    let sent = send_job(job, live, (grant, permissions), tally, (sending, edge)).await;
    let outcomes = sent.results.iter().map(TargetOutcome::of).collect();
    let unrecorded = store.record_outcomes(&proposal.id, outcomes).await.err();
    Ok(Approved { sent, unrecorded })
}

/// The proposal through the one door, on the fleet as it is once every cluster answered.
async fn plan(
    proposal: &Proposal,
    live: &mut Session,
    config: &crate::config::Config,
    rules: &Rules<'_>,
    timeout: Duration,
) -> Result<Admitted, ProposalFailed> {
    let id = || proposal.id.clone();
    if !live.settle(timeout).await {
        return Err(ProposalFailed::NotSettled { id: id() });
    }
    let objects = proposal
        .selection
        .select(&live.index, &config.rollout, Timestamp::now())
        .map_err(|why| ProposalFailed::SelectsNothing { id: id(), why })?;
    let ask = Ask {
        intent: proposal.intent(),
        objects: Objects::Named(objects),
    };
    crate::actions::admit(&live.index, ask, rules).map_err(|refused| {
        let then = Unsent::Pending(id());
        ActFailed::Refused { refused, then }.into()
    })
}

/// What is approved, shown to the person before they confirm: the targets on stdout (told to
/// the edge when stdout is NDJSON for a program), then who asked and why.
fn shown(
    proposal: &Proposal,
    targets: &[crate::actions::Target],
    request: &Approve,
    edge: &dyn Edge,
) -> Result<(), ProposalFailed> {
    match request.output {
        Output::Ndjson => {
            let mut table = Vec::new();
            write_targets(targets, &mut table)?;
            edge.said(Said::Note(
                String::from_utf8_lossy(&table).trim_end().to_string(),
            ));
        }
        _ => write_targets(targets, &mut io::stdout())?,
    }
    edge.said(Said::Note(safe(&proposal.told()).into_owned()));
    Ok(())
}
