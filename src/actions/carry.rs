//! Carrying a job out: its patches sent with at most `concurrency` requests in flight, each
//! reconcile followed to "handled" through the watches (never holding a slot), each target's
//! outcome reported as it ends, and the whole attempt journaled.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use super::plan::{Carry, Job, Target};
use super::progress::{Progress, Update};
use super::schedule::{Awaited, Executor, Waiter, watched};
use crate::audit;
use crate::fleet::notice::Identity;
use crate::fleet::verbs::{Access, Outcome};
use crate::fleet::{ClusterId, ObjectKey};
use crate::session::Session;

/// An object its owner's index now shows handled with the job's token (see [`Watch::Told`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Handled {
    pub cluster: ClusterId,
    pub key: ObjectKey,
}

/// How the executor learns that a requested reconcile was handled.
pub enum Watch<'a> {
    /// It applies the session's events to the session's index itself (headless).
    Session(&'a mut Session),
    /// Whoever owns the index (the TUI's event loop) says so for the targets; the sources a
    /// reconcile with source requests first are read until handled.
    Told(tokio::sync::mpsc::UnboundedReceiver<Handled>),
}

/// Journals the intent, sends `job`, calls `report` as each target ends — in whatever order
/// they end — journals the outcomes and returns the targets' records in their order. A journal
/// that cannot be written is the error; when the intent cannot be written, nothing is sent and
/// every target is refused.
///
/// `how.concurrency` bounds the requests in flight, never the waiting: a reconcile is requested,
/// its slot freed, and it is handled when `observe`'s index shows
/// `status.lastHandledReconcileAt` equal to the token — from the watches the session holds, with
/// no request (or where its owner says so, [`Watch::Told`]). A source that several targets of one
/// cluster reconcile first is requested once, and each of them goes on when it is handled.
/// Without anything to watch, a target ends when its patches are accepted.
pub async fn carry_out(
    job: &Job,
    how: Carry<'_>,
    mut observe: Option<Watch<'_>>,
    mut report: impl FnMut(&Target, Update<'_>, &Progress),
) -> (Vec<audit::Record>, Result<(), JournalError>) {
    let token = job.intent.token.as_str();
    let progress = Progress {
        total: job.targets.len(),
        ..Progress::default()
    };
    if let Err(e) = journal(job, audit::AttemptStage::Intent, &intended(job), &how) {
        return (not_sent(job, &e.to_string(), progress, &mut report), Err(e));
    }
    let mut run = Executor {
        job,
        how: &how,
        records: vec![None; job.targets.len()],
        next_step: vec![0; job.targets.len()],
        identities: vec![None; job.targets.len()],
        handled_at: vec![None; job.targets.len()],
        verdicts: vec![None; job.targets.len()],
        events: vec![None; job.targets.len()],
        ready: std::collections::VecDeque::new(),
        fresh: Vec::new(),
        waiting: Vec::new(),
        shared: Vec::new(),
        progress,
        watched: observe.is_some(),
        began: vec![None; job.targets.len()],
    };
    let denied = review(job, &how).await;
    for (i, (t, denied)) in job.targets.iter().zip(denied).enumerate() {
        match (&t.plan, how.writer, denied) {
            (Err(refusal), _, _) => run.end(i, Outcome::Refused(refusal.to_string()), &mut report),
            (Ok(_), None, _) => run.end(i, Outcome::Refused("read-only".into()), &mut report),
            (Ok(_), Some(_), Some((why, seen_as))) => {
                // Who was asked, as the journal says it for what was sent.
                run.identities[i] = seen_as;
                run.end(i, Outcome::Refused(why), &mut report)
            }
            (Ok(_), Some(_), None) => run.advance(i, &mut report),
        }
    }
    let mut in_flight = FuturesUnordered::new();
    // Reads of objects no watch covers, until handled: not requests the slots bound.
    let mut polls = FuturesUnordered::new();
    loop {
        while in_flight.len() < how.concurrency.max(1) {
            let Some(work) = run.ready.pop_front() else {
                break;
            };
            run.count_sent(work);
            in_flight.push(run.send(work, token));
        }
        // New waiters wait for the watch, or where nothing will tell — no watch of the session
        // covers their object, or a source (the TUI tells about its rows, the targets, only) —
        // are read until handled.
        for w in std::mem::take(&mut run.fresh) {
            let told = match observe.as_ref() {
                Some(Watch::Session(session)) => watched(&session.index, &w),
                Some(Watch::Told(_)) => matches!(w.who, Awaited::Target(_)),
                None => false,
            };
            if told {
                run.waiting.push(w);
            } else {
                polls.push(run.poll(w, token));
            }
        }
        if in_flight.is_empty() && run.waiting.is_empty() && polls.is_empty() {
            break;
        }
        let deadline = run.waiting.iter().map(|w| w.deadline).min();
        tokio::select! {
            Some(sent) = in_flight.next(), if !in_flight.is_empty() => {
                run.sent(sent, &mut report);
            }
            alive = async {
                match observe.as_mut() {
                    Some(Watch::Session(session)) => session.apply_batch().await.then(Vec::new),
                    Some(Watch::Told(told)) => {
                        let mut handled = Vec::new();
                        (told.recv_many(&mut handled, 256).await > 0).then_some(handled)
                    }
                    None => std::future::pending().await,
                }
            }, if !run.waiting.is_empty() => {
                if let (Some(watch), Some(told)) = (&observe, &alive) {
                    run.settle(|w| seen_handled(watch, told, w, token), &mut report);
                }
                if alive.is_none() {
                    // The sources stopped: nothing more can be seen.
                    observe = None;
                    run.expire(None, &mut report);
                }
            }
            Some((who, outcome)) = polls.next(), if !polls.is_empty() => {
                run.polled(who, outcome, &mut report);
            }
            _ = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            }, if deadline.is_some() => {
                run.expire(Some(tokio::time::Instant::now()), &mut report);
            }
        }
    }
    let records: Vec<audit::Record> = run
        .records
        .into_iter()
        .zip(&job.targets)
        .map(|(r, t)| r.unwrap_or_else(|| t.record.clone()))
        .collect();
    let journaled = journal(job, audit::AttemptStage::Outcome, &records, &how);
    (records, journaled)
}

/// The one door's last check, made on the clusters before anything is sent: each target whose
/// cluster checks Flux's verbs (`[actions] flux_verbs = "check"`) is asked about, once for every
/// object its patches touch (a reconcile with source: the source too), with at most
/// `how.concurrency` reviews in flight. Why each target is refused, where one is.
async fn review(job: &Job, how: &Carry<'_>) -> Vec<Option<(String, Option<Arc<Identity>>)>> {
    let mut denied = vec![None; job.targets.len()];
    let Some(writer) = how.writer else {
        return denied;
    };
    // Each object of each cluster asked once, whichever targets touch it.
    let mut asked: Vec<(usize, ObjectKey, &'static str)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut wants: Vec<(usize, usize)> = Vec::new();
    for (i, t) in job.targets.iter().enumerate() {
        let (Ok(steps), Some(verb)) = (&t.plan, t.flux_verb) else {
            continue;
        };
        for step in steps {
            let question = *index
                .entry((t.cluster, step.key.clone()))
                .or_insert_with(|| {
                    asked.push((i, step.key.clone(), verb));
                    asked.len() - 1
                });
            wants.push((i, question));
        }
    }
    // Made before they are awaited: no closure is held across the awaits.
    let reviews: Vec<_> = asked
        .iter()
        .map(|(i, key, verb)| writer.may(&job.targets[*i].info, key, verb))
        .collect();
    let answers: Vec<Access> = futures::stream::iter(reviews)
        .buffered(how.concurrency.max(1))
        .collect()
        .await;
    for (i, question) in wants {
        if denied[i].is_some() {
            continue;
        }
        let (_, key, verb) = &asked[question];
        let t = &job.targets[i];
        denied[i] = match &answers[question] {
            Access::Allowed => None,
            Access::Denied(reason) => {
                let who = writer.identity(&t.info).await;
                let why = refused_by_flux_rbac(key, verb, who.as_deref(), reason);
                Some((why, who))
            }
            Access::Unanswered(why) => Some((
                format!(
                    "Flux's RBAC could not be asked whether to {verb} {} {}/{} \
                     (actions.flux_verbs = \"check\"), so nothing was sent: {why}",
                    key.kind, key.namespace, key.name
                ),
                None,
            )),
        };
    }
    denied
}

/// A target Flux's RBAC refuses, as a person reads it: who, which verb, on what, and the
/// server's reason where it gave one.
fn refused_by_flux_rbac(
    key: &ObjectKey,
    verb: &str,
    who: Option<&Identity>,
    reason: &str,
) -> String {
    let who = who.map_or("these credentials".to_string(), |i| {
        format!("User {:?}", i.username)
    });
    let mut text = format!(
        "forbidden by Flux's RBAC: {who} cannot {verb} {} {}/{} (the verb {verb:?} on {}.{}, \
         actions.flux_verbs = \"check\")",
        key.kind,
        key.namespace,
        key.name,
        key.kind.plural(),
        key.kind.group()
    );
    if !reason.is_empty() {
        text.push_str(&format!(": {reason}"));
    }
    text
}

/// The journal's first word on each target: intended, or refused with the planner's reason.
fn intended(job: &Job) -> Vec<audit::Record> {
    job.targets
        .iter()
        .map(|t| match &t.plan {
            Ok(_) => audit::Record {
                outcome: "intended",
                ..t.record.clone()
            },
            Err(refusal) => t
                .record
                .clone()
                .with(&Outcome::Refused(refusal.to_string())),
        })
        .collect()
}

/// Every target refused, reported and recorded, when the intent could not be journaled:
/// nothing is sent that the journal does not hold.
fn not_sent(
    job: &Job,
    error: &str,
    mut progress: Progress,
    report: &mut impl FnMut(&Target, Update<'_>, &Progress),
) -> Vec<audit::Record> {
    let refused = Outcome::Refused(format!("not sent: {error}"));
    job.targets
        .iter()
        .map(|t| {
            progress.refused += 1;
            let record = t.record.clone().with(&refused);
            report(t, Update::Ended(&refused, &record), &progress);
            record
        })
        .collect()
}

/// Whether the watch has seen `w`'s request handled — the session's index shows the token in
/// `lastHandledReconcileAt`, or a source told of it among `told` — and, where the index shows
/// it, what the object said in the same status.
fn seen_handled(
    watch: &Watch,
    told: &[Handled],
    w: &Waiter,
    token: &str,
) -> Option<Option<audit::HandledState>> {
    match watch {
        Watch::Session(session) => session
            .index
            .cluster(w.cluster)
            .and_then(|c| c.objects.get(&w.key))
            .filter(|o| o.last_handled_reconcile_at() == Some(token))
            .map(|o| Some(audit::HandledState::of(o))),
        Watch::Told(_) => told
            .iter()
            .any(|h| h.cluster == w.cluster && h.key == w.key)
            .then_some(None),
    }
}

/// The journal could not be written: nothing is sent without an intent recorded, and outcomes
/// not recorded are an error of the run. The data directory is to be fixed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("no data directory for the audit journal")]
    NoDirectory,
    #[error("cannot write the audit journal {}: {why}", .path.display())]
    Write {
        path: std::path::PathBuf,
        why: std::io::Error,
    },
    #[error("cannot read the audit journal {}: {why}", .path.display())]
    Read {
        path: std::path::PathBuf,
        why: std::io::Error,
    },
}

fn journal(
    job: &Job,
    stage: audit::AttemptStage,
    targets: &[audit::Record],
    how: &Carry<'_>,
) -> Result<(), JournalError> {
    let intent = &job.intent;
    let entry = audit::JournalLine {
        time: jiff::Timestamp::now(),
        stage,
        user: &intent.user,
        host: &audit::local_host(),
        tool: how.tool,
        automation: how.tool.is_some() && job.proposal.is_none(),
        action: intent.verb,
        reason: intent.reason.as_deref(),
        token: &intent.token,
        proposal: job.proposal.as_ref(),
        targets,
    };
    match how.journal {
        Some(path) => audit::append(path, &entry).map_err(|why| JournalError::Write {
            path: path.to_path_buf(),
            why,
        }),
        None => Err(JournalError::NoDirectory),
    }
}
