//! What an action and a proposal's approval share in the TUI: the one door with the session's
//! rules, how the confirmation asks, and refusing a proposal the fleet no longer plans as it
//! was proposed.

use super::message::Effect;
use super::model::Model;
use super::view::Stage;
use crate::actions::{Admitted, Ask, Confirmation, Objects, Purpose, Refused, Rules};
use crate::fleet::verbs::Intent;
use crate::fleet::{ClusterId, ObjectKey};
use crate::proposals::{Decision, Proposal};

/// `objects` for `intent` through the one door, with the session's rules: to be sent.
pub(super) fn admit(
    model: &Model,
    objects: Vec<(ClusterId, ObjectKey)>,
    intent: Intent,
) -> Result<Admitted, Refused> {
    let ask = Ask {
        intent,
        objects: Objects::Named(objects),
    };
    crate::actions::admit(model.index(), ask, &rules(model))
}

/// The session's rules, for what is to be sent (an action, an approval, a plugin that writes).
pub(super) fn rules(model: &Model) -> Rules<'_> {
    let settings = model.settings();
    Rules {
        writes_refused: settings.writes_refused.as_deref(),
        purpose: Purpose::Send {
            granted: !settings.read_only,
        },
        actions: &settings.actions,
        permissions: settings.permissions.as_ref(),
    }
}

/// The confirmation's first stage for what was admitted (after the reason, for a suspend).
pub(super) fn stage_of(admitted: &Admitted) -> Stage {
    match admitted.confirmation() {
        Confirmation::Count => Stage::Count,
        Confirmation::Yes => Stage::Yes,
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
    model.say(format!(
        "the fleet changed since proposal {} was made; nothing was sent: {}",
        p.id,
        changed.join("; ")
    ));
    Some(vec![Effect::Decide {
        id: p.id.clone(),
        decision: Decision::Refused {
            by: model.settings().user.clone(),
            at: model.now(),
            changed,
        },
    }])
}
