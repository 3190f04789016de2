//! What an action and a proposal's approval share in the TUI: planning targets with the
//! session's guardrails, how the confirmation asks, and refusing a proposal the fleet no longer
//! plans as it was proposed.

use super::message::Effect;
use super::model::Model;
use super::view::Stage;
use crate::fleet::verbs::Intent;
use crate::fleet::{ClusterId, ObjectKey};
use crate::proposals::{Decision, Proposal};

/// Plans `objects` with the session's guardrails.
pub(super) fn plan(
    model: &Model,
    objects: impl IntoIterator<Item = (ClusterId, ObjectKey)>,
    intent: &Intent,
) -> Vec<crate::actions::Target> {
    let guard = crate::actions::Guard {
        actions: &model.settings.actions,
        permissions: model.settings.permissions.as_ref(),
    };
    crate::actions::plan(&model.index, objects, intent, &guard)
}

pub(super) fn count_or_yes(model: &Model, n: usize) -> Stage {
    if n > model.settings.actions.confirm_above {
        Stage::Count
    } else {
        Stage::Yes
    }
}

/// When `targets` (the proposal planned again) differ from what was proposed: said, and the
/// proposal recorded as refused; None when they are the same.
pub(super) fn changed(
    model: &mut Model,
    p: &Proposal,
    targets: &[crate::actions::Target],
) -> Option<Vec<Effect>> {
    let changed = p.changes(targets)?;
    model.flash = Some(format!(
        "the fleet changed since proposal {} was made; nothing was sent: {}",
        p.id,
        changed.join("; ")
    ));
    Some(vec![Effect::Decide {
        id: p.id.clone(),
        decision: Decision::Refused {
            by: model.settings.user.clone(),
            at: model.now,
            changed,
        },
    }])
}
