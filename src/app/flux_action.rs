//! The actions in the TUI, as the update function handles them: marking, asking for
//! confirmation, planning every target into one job, and following the outcomes (a reconcile is
//! done when the watched object says the controller handled it).

use crossterm::event::{KeyCode, KeyEvent};

use super::message::Effect;
use super::model::Model;
use super::planning::{admit, changed, stage_of};
use super::view::{RowId, Run, RunRow, RunState, Stage, Unconfirmed, View, clusters_in};
use crate::actions::{Confirmation, Refused};
use crate::fleet::verbs::{Intent, Outcome, Verb};
use crate::fleet::{ClusterId, ObjectKey};

/// The objects a row stands for: itself, a triage group's members, a deployed thing's copies
/// on the clusters of the scope, or the copies in a ring of the matrix (those shown).
pub(super) fn objects_of(model: &Model, id: &RowId) -> Vec<(ClusterId, ObjectKey)> {
    match id {
        RowId::Object(c, k) => vec![(*c, k.clone())],
        RowId::Rollout(key) => clusters_in(model.index(), model.screen().view.scope())
            .into_iter()
            .filter(|(_, c)| c.objects.contains_key(key))
            .map(|(id, _)| (id, key.clone()))
            .collect(),
        RowId::Ring(ring) => match (&model.rows().matrix, &model.screen().view) {
            (Some(m), View::Matrix { key, .. }) => m
                .places
                .iter()
                .filter(|p| p.ring == *ring && model.rows().places.contains_key(&p.cluster))
                .map(|p| (p.cluster, key.clone()))
                .collect(),
            _ => Vec::new(),
        },
        // An incident stands for the objects of the groups under it.
        RowId::Group(g) => model
            .rows()
            .groups
            .get(g)
            .map(|group| {
                group
                    .members
                    .iter()
                    .flat_map(|m| match m {
                        RowId::Object(c, k) => vec![(*c, k.clone())],
                        inner @ RowId::Group(_) => objects_of(model, inner),
                        _ => Vec::new(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The objects the selection stands for (the detail view: its object).
fn selected_objects(model: &Model) -> Vec<(ClusterId, ObjectKey)> {
    // The detail view's rows are the objects it links to: its actions are on its object.
    match (&model.screen().selected, &model.screen().view) {
        (_, View::Detail { cluster, key }) => vec![(*cluster, key.clone())],
        (Some(id), _) => objects_of(model, id),
        _ => Vec::new(),
    }
}

pub(super) fn mark(model: &mut Model) {
    let objects = selected_objects(model);
    model.marks_mut().toggle(objects);
    // Marking moves on, as in k9s.
    let len = model.rows().ids.len();
    let screen = model.screen_mut();
    if screen.cursor + 1 < len {
        screen.cursor += 1;
    }
    let cursor = model.screen().cursor;
    model.screen_mut().selected = model.rows().ids.get(cursor).cloned();
}

/// `:mark`: every object row the view shows (its filter and toggles applied).
pub(super) fn mark_all(model: &mut Model) {
    model.refresh_rows();
    let ids = model.rows().ids.clone();
    let objects: Vec<_> = ids.iter().flat_map(|id| objects_of(model, id)).collect();
    let added = model.marks_mut().add(objects);
    model.say(format!(
        "{added} objects marked ({} in all)",
        model.marks().len()
    ));
}

/// `:mark stuck`: the stuck clusters' copies of what the rollout view or the matrix shows.
pub(super) fn mark_stuck(model: &mut Model) {
    model.refresh_rows();
    let mut stuck: Vec<(ClusterId, ObjectKey)> = Vec::new();
    match &model.screen().view {
        View::Matrix { key, .. } => {
            if let Some(m) = &model.rows().matrix {
                stuck.extend(
                    m.places
                        .iter()
                        .filter(|p| {
                            p.stuck.is_some() && model.rows().places.contains_key(&p.cluster)
                        })
                        .map(|p| (p.cluster, key.clone())),
                );
            }
        }
        View::Rollout { scope, .. } => {
            let rollout = &model.settings().rollout;
            for id in &model.rows().ids {
                let RowId::Rollout(key) = id else { continue };
                if model.rows().spreads.get(key).is_none_or(|s| s.stuck == 0) {
                    continue;
                }
                let clusters = clusters_in(model.index(), *scope);
                let Some(m) = crate::fleet::rollouts::matrix(
                    clusters,
                    key,
                    &rollout.rings,
                    &rollout.rules,
                    model.now(),
                ) else {
                    continue;
                };
                stuck.extend(
                    m.places
                        .iter()
                        .filter(|p| p.stuck.is_some())
                        .map(|p| (p.cluster, key.clone())),
                );
            }
        }
        _ => {
            model.say(":mark stuck works in the rollout view and its matrix");
            return;
        }
    }
    let added = model.marks_mut().add(stuck);
    model.say(format!(
        "{added} stuck objects marked ({} in all)",
        model.marks().len()
    ));
}

/// An action key: the confirmation, or why the one door refuses it.
pub(super) fn ask(model: &mut Model, verb: Verb) {
    let targets: Vec<(ClusterId, ObjectKey)> = if model.marks().is_empty() {
        selected_objects(model)
    } else {
        model.marks().sorted()
    };
    confirm(model, verb, targets, None);
}

/// The matrix's halt (`resume`: its undoing): suspend the thing on every cluster of the scope
/// not yet on its newest revision, with the reason "halted rollout of <revision>"; resume
/// exactly the copies suspended with that reason. Through the one door and confirmed as every
/// action.
pub(super) fn halt(model: &mut Model, resume: bool) {
    let verb = if resume { Verb::Resume } else { Verb::Suspend };
    let View::Matrix { scope, key } = model.screen().view.clone() else {
        model.say("halt works in a rollout's matrix (v, then enter)");
        return;
    };
    let (rings, rules) = (
        &model.settings().rollout.rings,
        &model.settings().rollout.rules,
    );
    let clusters = clusters_in(model.index(), scope);
    let Some(matrix) = crate::fleet::rollouts::matrix(clusters, &key, rings, rules, model.now())
    else {
        return;
    };
    let halt = match crate::fleet::rollouts::halt(model.index(), &matrix, &key, resume) {
        Ok(halt) => halt,
        Err(nothing) => {
            // The door first: in read-only mode that is what a person must hear.
            let intent = planned_intent(model, verb);
            model.say(match admit(model, Vec::new(), intent) {
                Err(refused) if refused != Refused::NoMatch => refused.to_string(),
                _ => nothing.to_string(),
            });
            return;
        }
    };
    let targets: Vec<(ClusterId, ObjectKey)> =
        halt.clusters.iter().map(|c| (*c, key.clone())).collect();
    confirm(model, halt.verb, targets, Some(halt.reason));
}

/// The intent a confirmation is planned with; sent with a fresh token on launch.
fn planned_intent(model: &Model, verb: Verb) -> Intent {
    Intent {
        verb,
        user: model.settings().user.clone(),
        reason: None,
        token: String::new(),
    }
}

/// Asks for the confirmation of `verb` on `targets`, admitted by the one door; a suspension
/// asks why, unless `reason` says it already.
fn confirm(
    model: &mut Model,
    verb: Verb,
    targets: Vec<(ClusterId, ObjectKey)>,
    reason: Option<String>,
) {
    // Admitted now to count what would be sent and what is refused; admitted again on launch,
    // when the fleet may have moved.
    let intent = planned_intent(model, verb);
    let admitted = match admit(model, targets.clone(), intent) {
        Ok(admitted) => admitted,
        Err(Refused::NoMatch) => {
            model.say(format!(
                "nothing to {verb}: select an object or mark some (space)"
            ));
            return;
        }
        Err(refused) => {
            model.say(refused.to_string());
            return;
        }
    };
    if let Some(nothing) = admitted.nothing_sent() {
        model.say(nothing);
        return;
    }
    let tally = admitted.tally();
    let stage = if verb == Verb::Suspend && reason.is_none() {
        Stage::Reason
    } else {
        stage_of(&admitted)
    };
    model.ask(Unconfirmed {
        verb,
        targets,
        tally,
        confirmation: admitted.confirmation(),
        reason: reason.unwrap_or_default(),
        typed: String::new(),
        stage,
        proposal: None,
    });
}

/// Keys while a confirmation is open: nothing else happens until it is answered.
pub(super) fn confirming(model: &mut Model, key: &KeyEvent) -> Vec<Effect> {
    let Some(mut c) = model.take_confirm() else {
        return Vec::new();
    };
    if key.code == KeyCode::Esc {
        model.say(format!("{} cancelled: nothing was sent", c.verb));
        return Vec::new();
    }
    match (c.stage, key.code) {
        (Stage::Reason, KeyCode::Enter) => {
            c.stage = match c.confirmation {
                Confirmation::Count => Stage::Count,
                Confirmation::Yes => Stage::Yes,
            }
        }
        (Stage::Reason, KeyCode::Backspace) => {
            c.reason.pop();
        }
        (Stage::Reason, KeyCode::Char(ch)) => c.reason.push(ch),
        (Stage::Yes, KeyCode::Enter | KeyCode::Char('y')) => return launch(model, c),
        (Stage::Yes, KeyCode::Char('n')) => {
            model.say(format!("{} cancelled: nothing was sent", c.verb));
            return Vec::new();
        }
        (Stage::Count, KeyCode::Char(d)) if d.is_ascii_digit() => c.typed.push(d),
        (Stage::Count, KeyCode::Backspace) => {
            c.typed.pop();
        }
        (Stage::Count, KeyCode::Enter) => {
            if c.typed == c.tally.sent.to_string() {
                return launch(model, c);
            }
            model.say(format!(
                "type {} (the number of objects to change) to confirm, Esc to cancel",
                c.tally.sent
            ));
            c.typed.clear();
        }
        _ => {}
    }
    model.ask(c);
    Vec::new()
}

/// Confirmed: through the one door again (the fleet may have moved while the person read the
/// confirmation), and the job handed to the event loop.
fn launch(model: &mut Model, c: Unconfirmed) -> Vec<Effect> {
    let intent = match &c.proposal {
        // Exactly what was proposed: its token, reason and suspender.
        Some(p) => p.intent(),
        None => fresh_intent(model, &c),
    };
    let run = model.run().map_or(1, |r| r.id + 1);
    let admitted = match admit(model, c.targets, intent) {
        Ok(admitted) => admitted,
        Err(refused) => {
            model.say(format!("{refused}; nothing was sent"));
            return Vec::new();
        }
    };
    if let Some(p) = &c.proposal
        && let Some(refused) = changed(model, p, admitted.targets())
    {
        return refused;
    }
    let proposal = c.proposal.map(|p| crate::audit::Proposed {
        id: p.id,
        proposed_by: p.proposed_by,
        proposer: p.user,
        approved_by: model.settings().user.clone(),
    });
    let rows = admitted
        .targets()
        .iter()
        .map(|t| RunRow {
            cluster: t.cluster,
            key: t.key.clone(),
            state: match &t.plan {
                Ok(_) => RunState::Sending,
                Err(refusal) => RunState::Ended(Outcome::Refused(refusal.to_string())),
            },
        })
        .collect();
    let intent = admitted.intent().clone();
    let job = match admitted.into_job(run, proposal) {
        Ok(job) => job,
        Err(refused) => {
            model.say(format!("{refused}; nothing was sent"));
            return Vec::new();
        }
    };
    model.sent(Run {
        id: run,
        verb: c.verb,
        token: intent.token.clone(),
        reason: intent.reason.clone(),
        rows,
    });
    model.marks_mut().clear();
    model.push(View::Results);
    vec![Effect::Act(job)]
}

/// The intent of an action typed here: the user, the reason typed, a new token.
fn fresh_intent(model: &mut Model, c: &Unconfirmed) -> Intent {
    let at = model.fresh_token();
    let reason = c.reason.trim();
    Intent {
        verb: c.verb,
        user: model.settings().user.clone(),
        reason: (!reason.is_empty()).then(|| reason.to_string()),
        token: at.to_string(),
    }
}

/// The results view: the same action again on the targets that did not end well.
pub(super) fn retry(model: &mut Model) {
    let Some(run) = model.run() else {
        return;
    };
    let failed: Vec<(ClusterId, ObjectKey)> = run
        .rows
        .iter()
        .filter(|r| r.state.failed())
        .map(|r| (r.cluster, r.key.clone()))
        .collect();
    if failed.is_empty() {
        model.say("nothing to retry: every target ended well or was refused");
        return;
    }
    let verb = run.verb;
    confirm(model, verb, failed, None);
}

pub(super) fn acted(
    model: &mut Model,
    run: u64,
    cluster: ClusterId,
    key: ObjectKey,
    outcome: Outcome,
) -> Vec<Effect> {
    let Some(r) = model.run_mut().filter(|r| r.id == run) else {
        return Vec::new();
    };
    let waits = r.verb.requests_reconcile();
    if let Some(row) = r
        .rows
        .iter_mut()
        .find(|row| row.cluster == cluster && row.key == key)
    {
        row.state = match outcome {
            // The executor says done once told it was handled: the row says so already.
            Outcome::Done if row.state == RunState::Handled => RunState::Handled,
            Outcome::Done if waits => RunState::Requested,
            other => RunState::Ended(other),
        };
    }
    model.rows_changed();
    notice_handled(model)
}

/// A requested reconcile is handled when the watched object says so; the executor is told, so
/// that the journal records it.
pub(super) fn notice_handled(model: &mut Model) -> Vec<Effect> {
    let Some(run) = model.run() else {
        return Vec::new();
    };
    let handled: Vec<usize> = run
        .rows
        .iter()
        .enumerate()
        .filter(|(_, row)| {
            row.state == RunState::Requested
                && model
                    .index()
                    .cluster(row.cluster)
                    .and_then(|c| c.objects.get(&row.key))
                    .and_then(|o| o.last_handled_reconcile_at())
                    == Some(run.token.as_str())
        })
        .map(|(i, _)| i)
        .collect();
    let Some(run) = model.run_mut() else {
        return Vec::new();
    };
    let mut told = Vec::new();
    for i in handled {
        let row = &mut run.rows[i];
        row.state = RunState::Handled;
        told.push(Effect::Handled {
            run: run.id,
            cluster: row.cluster,
            key: row.key.clone(),
        });
    }
    told
}
