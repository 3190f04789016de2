//! One action on many objects, for the TUI and for the headless commands alike: planning every
//! target (the one place that decides refusals, in one order, with one wording), then sending
//! the patches through the session's [`Writer`] a limited number at a time, each outcome
//! reported as it comes, and the whole attempt appended to the audit journal.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use crate::audit;
use crate::config::{self, Permissions};
use crate::fleet::actions::{self as flux, Intent, Outcome, Refusal, Step, Verb};
use crate::fleet::{ClusterId, ClusterInfo, Index, ObjectKey};
use crate::session::{READ_ONLY_CLUSTER, Session, Writer};

/// Why nothing at all may be sent, before any target is looked at: guardrails that cannot be
/// read exactly ([`crate::config::Config::writes_refused`]), then read-only mode (no grant).
pub fn refusal(writes_refused: Option<&str>, granted: bool, verb: Verb) -> Option<String> {
    if let Some(why) = writes_refused {
        return Some(format!("nothing can {verb}: {why}"));
    }
    (!granted).then(|| {
        format!(
            "read-only: nothing can {verb} — start with --write, or set mode = \"write\" in [ui] \
             of the config"
        )
    })
}

/// What may refuse a target.
pub struct Guard<'a> {
    pub actions: &'a config::Actions,
    /// Which clusters are writable; None for a dry run in read-only mode, which shows what
    /// would be sent with writes enabled.
    pub permissions: Option<&'a Permissions>,
}

/// Plans each of `objects` into a target: refused by a deny rule, then by its cluster's mode,
/// then because the object is gone; else the patches [`flux::plan`] decides. The order of
/// `objects` is kept.
pub fn plan(
    index: &Index,
    objects: impl IntoIterator<Item = (ClusterId, ObjectKey)>,
    intent: &Intent,
    guard: &Guard<'_>,
) -> Vec<Target> {
    let mut targets = Vec::new();
    for (cluster, key) in objects {
        // Ids come from this index: an unknown one cannot happen.
        let Some(entry) = index.cluster(cluster) else {
            continue;
        };
        let read_only = guard.permissions.is_some_and(|p| !p.writable(&entry.info));
        let plan = if let Some(why) = guard.actions.denied(&entry.info, &key) {
            Err(Refusal::Denied(why))
        } else if read_only {
            Err(Refusal::Denied(READ_ONLY_CLUSTER.into()))
        } else if let Some(summary) = entry.objects.get(&key) {
            flux::plan(intent, summary, |k| entry.objects.get(k))
        } else {
            Err(Refusal::NotSupported(
                "the object is no longer on the cluster, or the cluster is not watched".into(),
            ))
        };
        targets.push(Target {
            record: audit::Target::new(&entry.info, &key),
            info: entry.info.clone(),
            cluster,
            key,
            plan,
        });
    }
    targets
}

/// What a planned action would do: the targets it would send, on how many clusters, and the
/// targets refused — counted apart, so that a dry run or a confirmation never calls a refused
/// target one that would change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    pub sent: usize,
    pub clusters: usize,
    pub refused: usize,
}

impl Tally {
    pub fn of(targets: &[Target]) -> Tally {
        let clusters: std::collections::BTreeSet<ClusterId> = targets
            .iter()
            .filter(|t| t.plan.is_ok())
            .map(|t| t.cluster)
            .collect();
        let sent = targets.iter().filter(|t| t.plan.is_ok()).count();
        Tally {
            sent,
            clusters: clusters.len(),
            refused: targets.len() - sent,
        }
    }

    /// "suspend 9 objects on 3 clusters, 3 refused", "nothing to suspend: all 4 refused".
    pub fn describe(&self, verb: Verb) -> String {
        use crate::units::count;
        if self.sent == 0 {
            return format!(
                "nothing to {verb}: {} refused",
                if self.refused == 1 {
                    "the object is".to_string()
                } else {
                    format!("all {} objects are", self.refused)
                }
            );
        }
        let mut text = format!(
            "{verb} {} on {}",
            count(self.sent, "object", "objects"),
            count(self.clusters, "cluster", "clusters")
        );
        if self.refused > 0 {
            text.push_str(&format!(", {} refused", self.refused));
        }
        text
    }
}

/// An action to send: every target with its patches, or why it is refused.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Tells this job's outcomes from an earlier one's.
    pub run: u64,
    pub intent: Intent,
    pub targets: Vec<Target>,
}

/// One object of a job.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub cluster: ClusterId,
    /// Where the cluster comes from and how it is guarded.
    pub info: Arc<ClusterInfo>,
    pub key: ObjectKey,
    /// What the journal will say about it; the outcome is filled in when it ends.
    pub record: audit::Target,
    pub plan: Result<Vec<Step>, Refusal>,
}

/// How to carry a job out.
pub struct Carry<'a> {
    /// None in read-only mode: every target is refused.
    pub writer: Option<&'a Writer>,
    /// Wait this long for each reconcile to be handled before calling it done (None: done when
    /// the patch is accepted; the TUI follows the rest in the watch).
    pub wait: Option<Duration>,
    pub concurrency: usize,
    pub journal: Option<&'a Path>,
}

/// How far a job is: what the progress line shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Targets in the job, refused ones included.
    pub total: usize,
    /// Targets whose first patch has gone out.
    pub sent: usize,
    /// Reconciles accepted and waiting for their controller.
    pub requested: usize,
    /// Targets done: handled by the controller, or for a suspend, accepted.
    pub done: usize,
    /// Targets that ended otherwise (forbidden, unreachable, timed out …).
    pub failed: usize,
    pub refused: usize,
}

impl Progress {
    /// "120/2000 sent · 80 requested · 30 handled · 2 failed · 0 refused"
    pub fn line(&self, verb: Verb) -> String {
        let done = if verb.requests_reconcile() {
            "handled"
        } else {
            "done"
        };
        format!(
            "{verb}: {}/{} sent · {} requested · {} {done} · {} failed · {} refused",
            self.sent, self.total, self.requested, self.done, self.failed, self.refused
        )
    }
}

/// What happened to a target, as it happens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Update<'a> {
    /// Its reconcile was accepted; its controller has yet to handle it.
    Requested,
    /// It ended; its journal record as it will be written.
    Ended(&'a Outcome, &'a audit::Target),
}

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
    /// Whoever owns the index (the TUI's event loop) says so.
    Told(tokio::sync::mpsc::UnboundedReceiver<Handled>),
}

/// What one request in flight is for.
#[derive(Clone, Copy, Debug)]
enum Work {
    /// Step `step` of target `target`.
    Patch { target: usize, step: usize },
    /// All of a target's steps, waiting by polling: only where no watch can tell (no session
    /// to observe).
    Whole { target: usize },
    /// A source shared by targets of one cluster: requested once.
    Source(usize),
}

/// What a waiter waits for.
#[derive(Clone, Copy, Debug)]
enum Awaited {
    Target(usize),
    Source(usize),
}

struct Waiter {
    cluster: ClusterId,
    key: ObjectKey,
    who: Awaited,
    deadline: tokio::time::Instant,
    /// Known to be covered by a watch of the session.
    watched: bool,
}

/// A source that targets of one cluster reconcile before themselves.
struct Shared {
    target: usize,
    step: usize,
    subscribers: Vec<usize>,
    state: SourceState,
    /// Its request has gone out.
    sent: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum SourceState {
    Requested,
    Handled,
    Failed(Outcome),
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
) -> (Vec<audit::Target>, Result<(), String>) {
    let token = job.intent.token.as_str();
    let intended: Vec<audit::Target> = job
        .targets
        .iter()
        .map(|t| match &t.plan {
            Ok(_) => audit::Target {
                outcome: "intended",
                ..t.record.clone()
            },
            Err(refusal) => t
                .record
                .clone()
                .with(&Outcome::Refused(refusal.to_string())),
        })
        .collect();
    let mut progress = Progress {
        total: job.targets.len(),
        ..Progress::default()
    };
    if let Err(e) = journal(&job.intent, audit::Stage::Intent, &intended, how.journal) {
        let refused = Outcome::Refused(format!("not sent: {e}"));
        let records = job
            .targets
            .iter()
            .map(|t| {
                progress.refused += 1;
                let record = t.record.clone().with(&refused);
                report(t, Update::Ended(&refused, &record), &progress);
                record
            })
            .collect();
        return (records, Err(e));
    }
    let mut run = Executor {
        job,
        how: &how,
        records: vec![None; job.targets.len()],
        next_step: vec![0; job.targets.len()],
        identities: vec![None; job.targets.len()],
        handled_at: vec![None; job.targets.len()],
        ready: std::collections::VecDeque::new(),
        waiting: Vec::new(),
        shared: Vec::new(),
        progress,
        watched: observe.is_some(),
    };
    for (i, t) in job.targets.iter().enumerate() {
        match (&t.plan, how.writer) {
            (Err(refusal), _) => run.end(i, Outcome::Refused(refusal.to_string()), &mut report),
            (Ok(_), None) => run.end(i, Outcome::Refused("read-only".into()), &mut report),
            (Ok(_), Some(_)) => run.advance(i, &mut report),
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
        if let Some(Watch::Session(session)) = observe.as_ref() {
            for w in run.unwatched(&session.index) {
                polls.push(run.poll(w, token));
            }
        }
        if in_flight.is_empty() && run.waiting.is_empty() && polls.is_empty() {
            break;
        }
        let deadline = run.waiting.iter().map(|w| w.deadline).min();
        tokio::select! {
            Some((work, outcome, identity)) = in_flight.next(), if !in_flight.is_empty() => {
                run.sent(work, outcome, identity, &mut report);
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
                match (&observe, &alive) {
                    (Some(Watch::Session(session)), Some(_)) => {
                        let index = &session.index;
                        run.settle(
                            |w| {
                                index
                                    .cluster(w.cluster)
                                    .and_then(|c| c.objects.get(&w.key))
                                    .is_some_and(|o| {
                                        o.last_handled_reconcile_at.as_deref() == Some(token)
                                    })
                            },
                            &mut report,
                        );
                    }
                    (Some(Watch::Told(_)), Some(told)) => {
                        run.settle(
                            |w| told.iter().any(|h| h.cluster == w.cluster && h.key == w.key),
                            &mut report,
                        );
                    }
                    _ => {}
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
    let records: Vec<audit::Target> = run
        .records
        .into_iter()
        .zip(&job.targets)
        .map(|(r, t)| r.unwrap_or_else(|| t.record.clone()))
        .collect();
    let journaled = journal(&job.intent, audit::Stage::Outcome, &records, how.journal);
    (records, journaled)
}

/// The state of one job being carried out.
struct Executor<'j> {
    job: &'j Job,
    how: &'j Carry<'j>,
    /// Each target's record once it has ended.
    records: Vec<Option<audit::Target>>,
    /// Each target's next step.
    next_step: Vec<usize>,
    /// Who each target's cluster saw send it.
    identities: Vec<Option<Arc<str>>>,
    /// When each reconcile was seen handled.
    handled_at: Vec<Option<jiff::Timestamp>>,
    ready: std::collections::VecDeque<Work>,
    waiting: Vec<Waiter>,
    shared: Vec<Shared>,
    progress: Progress,
    /// Handling is seen in a session's index (else a target ends when accepted).
    watched: bool,
}

type Sent = (Work, Outcome, Option<Arc<str>>);

impl<'j> Executor<'j> {
    fn steps(&self, target: usize) -> &'j [Step] {
        match &self.job.targets[target].plan {
            Ok(steps) => steps,
            Err(_) => &[],
        }
    }

    /// Queues target `i`'s next step, or ends it when it has none left.
    fn advance(&mut self, i: usize, report: &mut impl FnMut(&Target, Update<'_>, &Progress)) {
        let steps = self.steps(i);
        let n = self.next_step[i];
        let Some(step) = steps.get(n) else {
            self.end(i, Outcome::Done, report);
            return;
        };
        if !self.watched && steps.iter().any(|s| s.wait) {
            self.ready.push_back(Work::Whole { target: i });
            return;
        }
        if !step.wait {
            self.ready.push_back(Work::Patch { target: i, step: n });
            return;
        }
        let cluster = self.job.targets[i].cluster;
        let found = self.shared.iter().position(|s| {
            let t = &self.job.targets[s.target];
            t.cluster == cluster && self.steps(s.target)[s.step].key == step.key
        });
        let Some(id) = found else {
            self.shared.push(Shared {
                target: i,
                step: n,
                subscribers: vec![i],
                state: SourceState::Requested,
                sent: false,
            });
            self.ready.push_back(Work::Source(self.shared.len() - 1));
            return;
        };
        match self.shared[id].state.clone() {
            SourceState::Requested => {
                self.shared[id].subscribers.push(i);
                if self.shared[id].sent && n == 0 {
                    self.progress.sent += 1;
                }
            }
            SourceState::Handled => {
                self.next_step[i] += 1;
                self.advance(i, report);
            }
            SourceState::Failed(outcome) => self.end(i, outcome, report),
        }
    }

    /// Counts the targets whose first request `work` is.
    fn count_sent(&mut self, work: Work) {
        match work {
            Work::Patch { step: 0, .. } | Work::Whole { .. } => self.progress.sent += 1,
            Work::Source(id) => {
                let shared = &mut self.shared[id];
                shared.sent = true;
                let first = shared
                    .subscribers
                    .iter()
                    .filter(|&&t| self.next_step[t] == 0)
                    .count();
                self.progress.sent += first;
            }
            Work::Patch { .. } => {}
        }
    }

    fn send(&self, work: Work, token: &str) -> futures::future::BoxFuture<'j, Sent> {
        let job = self.job;
        let writer = self.how.writer;
        let wait = self.how.wait;
        let token = token.to_string();
        let (target, steps): (usize, &'j [Step]) = match work {
            Work::Patch { target, step } => (target, &self.steps(target)[step..=step]),
            Work::Whole { target } => (target, self.steps(target)),
            Work::Source(id) => {
                let s = &self.shared[id];
                (s.target, &self.steps(s.target)[s.step..=s.step])
            }
        };
        Box::pin(async move {
            let t = &job.targets[target];
            let Some(writer) = writer else {
                return (work, Outcome::Refused("read-only".into()), None);
            };
            let identity = writer.identity(&t.info).await;
            let wait = match work {
                Work::Whole { .. } => wait,
                _ => None,
            };
            let outcome = writer.apply(&t.info, steps, &token, wait).await;
            (work, outcome, identity)
        })
    }

    /// A request came back.
    fn sent(
        &mut self,
        work: Work,
        outcome: Outcome,
        identity: Option<Arc<str>>,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        let wait = self.how.wait.unwrap_or(Duration::from_secs(60));
        let deadline = tokio::time::Instant::now() + wait;
        match work {
            Work::Whole { target } => {
                self.identities[target] = identity;
                self.end(target, outcome, report);
            }
            Work::Patch { target, step } => {
                self.identities[target] = identity;
                if outcome != Outcome::Done {
                    self.end(target, outcome, report);
                    return;
                }
                let steps = self.steps(target);
                let last = step + 1 == steps.len();
                let follow = self.watched
                    && self.how.wait.is_some()
                    && self.job.intent.verb.requests_reconcile();
                if last && follow {
                    self.progress.requested += 1;
                    let t = &self.job.targets[target];
                    self.waiting.push(Waiter {
                        cluster: t.cluster,
                        key: steps[step].key.clone(),
                        who: Awaited::Target(target),
                        deadline,
                        watched: false,
                    });
                    report(t, Update::Requested, &self.progress);
                } else {
                    self.next_step[target] += 1;
                    self.advance(target, report);
                }
            }
            Work::Source(id) => {
                let s = &self.shared[id];
                if outcome != Outcome::Done {
                    let key = &self.steps(s.target)[s.step].key;
                    let why = format!(
                        "source {} {}/{}: {} {}",
                        key.kind,
                        key.namespace,
                        key.name,
                        outcome.name(),
                        outcome.message()
                    );
                    let failed = match outcome {
                        Outcome::Refused(_) => Outcome::Refused(why.trim_end().to_string()),
                        _ => Outcome::Failed(why.trim_end().to_string()),
                    };
                    self.source_ended(id, SourceState::Failed(failed), report);
                    return;
                }
                let t = &self.job.targets[s.target];
                for &sub in &s.subscribers {
                    self.identities[sub] = identity.clone();
                }
                self.waiting.push(Waiter {
                    cluster: t.cluster,
                    key: self.steps(s.target)[s.step].key.clone(),
                    who: Awaited::Source(id),
                    deadline,
                    watched: false,
                });
            }
        }
    }

    fn source_ended(
        &mut self,
        id: usize,
        state: SourceState,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        self.shared[id].state = state.clone();
        let subscribers = std::mem::take(&mut self.shared[id].subscribers);
        for sub in subscribers {
            match &state {
                SourceState::Failed(outcome) => self.end(sub, outcome.clone(), report),
                _ => {
                    self.next_step[sub] += 1;
                    self.advance(sub, report);
                }
            }
        }
    }

    /// Takes out the new waiters whose object no watch of the session covers (its kind is not
    /// watched on that cluster): they are read until handled instead.
    fn unwatched(&mut self, index: &Index) -> Vec<Waiter> {
        let covered = |w: &Waiter| {
            index.cluster(w.cluster).is_some_and(|c| {
                c.connection
                    .watching
                    .iter()
                    .any(|(kind, _)| *kind == w.key.kind)
            })
        };
        let mut out = Vec::new();
        let mut kept = Vec::with_capacity(self.waiting.len());
        for mut w in std::mem::take(&mut self.waiting) {
            if w.watched || covered(&w) {
                w.watched = true;
                kept.push(w);
            } else {
                out.push(w);
            }
        }
        self.waiting = kept;
        out
    }

    /// Reads `w`'s object until handled or its deadline.
    fn poll(&self, w: Waiter, token: &str) -> futures::future::BoxFuture<'j, (Awaited, Outcome)> {
        let info = self.job.targets[match w.who {
            Awaited::Target(i) => i,
            Awaited::Source(id) => self.shared[id].target,
        }]
        .info
        .clone();
        let writer = self.how.writer;
        let token = token.to_string();
        Box::pin(async move {
            let within = w
                .deadline
                .saturating_duration_since(tokio::time::Instant::now());
            let outcome = match writer {
                Some(writer) => writer.handled(&info, &w.key, &token, within).await,
                None => Outcome::Refused("read-only".into()),
            };
            (w.who, outcome)
        })
    }

    /// A read of an unwatched object ended.
    fn polled(
        &mut self,
        who: Awaited,
        outcome: Outcome,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        match (who, outcome) {
            (Awaited::Target(i), outcome) => {
                self.progress.requested -= 1;
                if outcome == Outcome::Done {
                    self.handled_at[i] = Some(jiff::Timestamp::now());
                }
                self.end(i, outcome, report);
            }
            (Awaited::Source(id), Outcome::Done) => {
                self.source_ended(id, SourceState::Handled, report);
            }
            (Awaited::Source(id), outcome) => {
                self.source_ended(id, SourceState::Failed(outcome), report);
            }
        }
    }

    /// Ends every waiter that `handled` says is handled.
    fn settle(
        &mut self,
        handled: impl Fn(&Waiter) -> bool,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        let (done, still): (Vec<Waiter>, Vec<Waiter>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(handled);
        self.waiting = still;
        for w in done {
            match w.who {
                Awaited::Target(i) => {
                    self.progress.requested -= 1;
                    self.handled_at[i] = Some(jiff::Timestamp::now());
                    self.end(i, Outcome::Done, report);
                }
                Awaited::Source(id) => self.source_ended(id, SourceState::Handled, report),
            }
        }
    }

    /// Ends the waiters past their deadline (all of them with None: nothing more can be seen).
    fn expire(
        &mut self,
        now: Option<tokio::time::Instant>,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        let (late, still): (Vec<Waiter>, Vec<Waiter>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| now.is_none_or(|now| w.deadline <= now));
        self.waiting = still;
        let wait = crate::units::format_duration(self.how.wait.unwrap_or(Duration::from_secs(60)));
        for w in late {
            let outcome = Outcome::TimedOut(format!(
                "requested; the controller did not handle it within {wait}"
            ));
            match w.who {
                Awaited::Target(i) => {
                    self.progress.requested -= 1;
                    self.end(i, outcome, report);
                }
                Awaited::Source(id) => {
                    let key = &self.steps(self.shared[id].target)[self.shared[id].step].key;
                    let outcome = Outcome::TimedOut(format!(
                        "source {} {}/{} requested; its controller did not handle it within {wait}",
                        key.kind, key.namespace, key.name
                    ));
                    self.source_ended(id, SourceState::Failed(outcome), report);
                }
            }
        }
    }

    fn end(
        &mut self,
        i: usize,
        outcome: Outcome,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        if self.records[i].is_some() {
            return;
        }
        match &outcome {
            Outcome::Done => self.progress.done += 1,
            Outcome::Refused(_) => self.progress.refused += 1,
            _ => self.progress.failed += 1,
        }
        let t = &self.job.targets[i];
        let record = t
            .record
            .clone()
            .with(&outcome)
            .seen_as(self.identities[i].as_deref())
            .handled(self.handled_at[i]);
        report(t, Update::Ended(&outcome, &record), &self.progress);
        self.records[i] = Some(record);
    }
}

fn journal(
    intent: &Intent,
    stage: audit::Stage,
    targets: &[audit::Target],
    path: Option<&Path>,
) -> Result<(), String> {
    let entry = audit::Entry {
        time: jiff::Timestamp::now(),
        stage,
        user: &intent.user,
        host: &audit::local_host(),
        action: intent.verb,
        reason: intent.reason.as_deref(),
        token: &intent.token,
        targets,
    };
    match path {
        Some(path) => audit::append(path, &entry)
            .map_err(|e| format!("cannot write the audit journal {}: {e}", path.display())),
        None => Err("no data directory for the audit journal".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::index::{Change, Event};
    use crate::fleet::{Connection, FluxKind, Phase};

    #[test]
    fn only_objects_whose_kind_is_watched_on_their_cluster_wait_for_the_watch() {
        let mut index = Index::new();
        let cluster = index.add_cluster(ClusterInfo::new("prod", "payments"));
        let mut live = Connection::new(Phase::Live);
        live.watching = Box::new([(FluxKind::Kustomization, "v1".into())]);
        let key = index.cluster(cluster).map(|c| c.info.key.clone()).unwrap();
        index.apply(Event {
            cluster: key,
            at: jiff::Timestamp::UNIX_EPOCH,
            change: Change::Connection(live),
        });
        let job = Job {
            run: 1,
            intent: Intent {
                verb: Verb::ReconcileWithSource,
                user: "u".into(),
                reason: None,
                token: "t".into(),
            },
            targets: Vec::new(),
        };
        let how = Carry {
            writer: None,
            wait: None,
            concurrency: 1,
            journal: None,
        };
        let mut run = Executor {
            job: &job,
            how: &how,
            records: Vec::new(),
            next_step: Vec::new(),
            identities: Vec::new(),
            handled_at: Vec::new(),
            ready: std::collections::VecDeque::new(),
            waiting: Vec::new(),
            shared: Vec::new(),
            progress: Progress::default(),
            watched: true,
        };
        for (kind, who) in [
            (FluxKind::Kustomization, Awaited::Target(0)),
            (FluxKind::GitRepository, Awaited::Source(0)),
        ] {
            run.waiting.push(Waiter {
                cluster,
                key: ObjectKey::new(kind, "flux-system", "apps"),
                who,
                deadline: tokio::time::Instant::now(),
                watched: false,
            });
        }
        let read = run.unwatched(&index);
        assert_eq!(read.len(), 1, "the GitRepository has no watch: it is read");
        assert_eq!(read[0].key.kind, FluxKind::GitRepository);
        assert_eq!(run.waiting.len(), 1);
        assert!(
            run.waiting[0].watched,
            "the Kustomization waits for its watch"
        );
    }
}
