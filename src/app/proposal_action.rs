//! Proposals in the TUI (`:proposals`): approving the selected one — planned again on the fleet
//! as the TUI sees it, with the proposal's own intent, then confirmed as any action when that is
//! exactly what was proposed, refused (and recorded so) when it is not — and rejecting it with a
//! reason. The arrows move the selection; nothing here touches a file: the decisions are
//! effects.

use super::message::Effect;
use super::model::Model;
use super::planning::{admit, changed, stage_of};
use super::view::{Unconfirmed, View};
use crate::actions::Refused;
use crate::proposals::{Decision, Proposal, ProposalStatus};

/// The proposal under the cursor.
pub(super) fn selected(model: &Model) -> Option<&Proposal> {
    let Some(Ok(list)) = model.reads().proposals() else {
        return None;
    };
    list.get(
        model
            .reads()
            .fetched_scroll()
            .min(list.len().saturating_sub(1)),
    )
}

/// `a`: the confirmation of the selected proposal, if the one door admits it and the fleet
/// still plans it the same.
pub(super) fn approve(model: &mut Model) -> Vec<Effect> {
    let Some(p) = selected(model).cloned() else {
        model.say("no proposal to approve");
        return Vec::new();
    };
    // The door first, with nothing yet: read-only or unreadable guardrails say so before
    // anything about the proposal.
    if let Err(refused) = admit(model, Vec::new(), p.intent())
        && refused != Refused::NoMatch
    {
        model.say(refused.to_string());
        return Vec::new();
    }
    let status = p.status(model.now());
    if status != ProposalStatus::Pending {
        model.say(format!(
            "proposal {} is {status}: only a pending proposal can be approved",
            p.id
        ));
        return Vec::new();
    }
    if !model.index().settled() {
        model.say(format!(
            "not every cluster has answered yet: {} can be compared with the fleet once they have",
            p.id
        ));
        return Vec::new();
    }
    let selected = p
        .selection
        .select(model.index(), &model.settings().rollout, model.now());
    let objects = match selected {
        Ok(objects) => objects,
        Err(e) => {
            model.say(format!("proposal {} selects nothing valid: {e}", p.id));
            return Vec::new();
        }
    };
    let admitted = match admit(model, objects.clone(), p.intent()) {
        Ok(admitted) => admitted,
        // Nothing it named is there any more (a halt whose copies moved on): a changed fleet.
        Err(crate::actions::Refused::NoMatch) if objects.is_empty() => {
            return changed(model, &p, &[]).unwrap_or_default();
        }
        Err(refused) => {
            // As `fluxfleet approve` says it.
            let then = crate::actions::Unsent::Pending(p.id.clone());
            model.say(format!("{refused}; {then}"));
            return Vec::new();
        }
    };
    if let Some(refused) = changed(model, &p, admitted.targets()) {
        return refused;
    }
    let tally = admitted.tally();
    model.ask(Unconfirmed {
        verb: p.action,
        targets: objects,
        tally,
        confirmation: admitted.confirmation(),
        reason: p.reason.clone().unwrap_or_default(),
        typed: String::new(),
        stage: stage_of(&admitted),
        proposal: Some(Box::new(p)),
    });
    Vec::new()
}

/// `:reject REASON` (`x` starts the line): the selected proposal rejected, with why.
pub(super) fn reject(model: &mut Model, reason: &str) -> Vec<Effect> {
    if model.screen().view != View::Proposals {
        model.say(":reject works in :proposals, on the selected proposal");
        return Vec::new();
    }
    let reason = reason.trim();
    if reason.is_empty() {
        model.say("say why: :reject REASON (the assistant reads it)");
        return Vec::new();
    }
    let Some(p) = selected(model) else {
        model.say("no proposal to reject");
        return Vec::new();
    };
    let status = p.status(model.now());
    if status != ProposalStatus::Pending {
        model.say(format!(
            "proposal {} is {status}: only a pending proposal can be rejected",
            p.id
        ));
        return Vec::new();
    }
    vec![Effect::Decide {
        id: p.id.clone(),
        decision: Decision::Rejected {
            by: model.settings().user.clone(),
            at: model.now(),
            reason: reason.to_string(),
        },
    }]
}

/// A decision recorded, or not: said, and the list read again.
pub(super) fn decided(
    model: &mut Model,
    result: Result<Box<Proposal>, std::sync::Arc<crate::proposals::StoreError>>,
) -> Vec<Effect> {
    model.say(match result {
        Ok(p) => format!("proposal {} is {}", p.id, p.status(model.now())),
        Err(e) => e.to_string(),
    });
    // Read again wherever the list is kept: going back to it shows the decision.
    if model.reads().proposals().is_some() {
        return vec![Effect::ReadProposals];
    }
    Vec::new()
}
