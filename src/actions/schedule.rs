//! The state machine of one job being carried out: which step of which target goes next,
//! sources shared by targets of a cluster, and what waits for its controller until when.

use std::sync::Arc;
use std::time::Duration;

use super::plan::{Carry, Job, Target};
use super::progress::{Progress, Update};
use crate::audit;
use crate::fleet::notice::Identity;
use crate::fleet::verbs::{Outcome, Step};
use crate::fleet::{ClusterId, Index, ObjectKey};

/// What one request in flight is for.
#[derive(Clone, Copy, Debug)]
pub(super) enum Work {
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
pub(super) enum Awaited {
    Target(usize),
    Source(usize),
}

pub(super) struct Waiter {
    pub(super) cluster: ClusterId,
    pub(super) key: ObjectKey,
    pub(super) who: Awaited,
    pub(super) deadline: tokio::time::Instant,
}

/// A source that targets of one cluster reconcile before themselves.
pub(super) struct Shared {
    target: usize,
    step: usize,
    subscribers: Vec<usize>,
    state: SourceState,
    /// Its request has gone out.
    sent: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum SourceState {
    Requested,
    Handled,
    Failed(Outcome),
}

/// Whether a watch of the session covers `w`'s object: its kind is watched on its cluster.
pub(super) fn watched(index: &Index, w: &Waiter) -> bool {
    index.cluster(w.cluster).is_some_and(|c| {
        c.connection
            .watching
            .iter()
            .any(|served| served.kind == w.key.kind)
    })
}

/// The state of one job being carried out.
pub(super) struct Executor<'j> {
    pub(super) job: &'j Job,
    pub(super) how: &'j Carry<'j>,
    /// Each target's record once it has ended.
    pub(super) records: Vec<Option<audit::Record>>,
    /// Each target's next step.
    pub(super) next_step: Vec<usize>,
    /// Who each target's cluster saw send it.
    pub(super) identities: Vec<Option<Arc<Identity>>>,
    /// When each reconcile was seen handled.
    pub(super) handled_at: Vec<Option<jiff::Timestamp>>,
    /// What each target's reconcile came to, where the watch that saw it handled showed it.
    pub(super) verdicts: Vec<Option<crate::audit::HandledState>>,
    /// What became of each target's Event, once its own patch was accepted.
    pub(super) events: Vec<Option<Recorded>>,
    pub(super) ready: std::collections::VecDeque<Work>,
    /// Requested, not yet routed to the watch or to a read (see the loop).
    pub(super) fresh: Vec<Waiter>,
    pub(super) waiting: Vec<Waiter>,
    pub(super) shared: Vec<Shared>,
    pub(super) progress: Progress,
    /// Handling is seen in a session's index (else a target ends when accepted).
    pub(super) watched: bool,
    /// When each target's first request that waits (a source's) came back: its own wait ends
    /// within `wait` of it, so that `--timeout` bounds the whole of a `--with-source`.
    pub(super) began: Vec<Option<tokio::time::Instant>>,
}

/// What a request came back with: its outcome, who the cluster saw send it, and — when it
/// changed its target — what became of the target's Event.
pub(super) type Sent = (Work, Outcome, Option<Arc<Identity>>, Option<Recorded>);

/// Whether a target's Event was recorded.
pub(super) type Recorded = Result<(), crate::fleet::notice::NotRecorded>;

impl<'j> Executor<'j> {
    /// How long a requested reconcile (or a source) may take to be handled.
    fn wait(&self) -> Duration {
        self.how.wait.unwrap_or(Duration::from_secs(60))
    }

    /// "GitRepository flux-system/podinfo": the source shared as `id`.
    fn source_name(&self, id: usize) -> String {
        let s = &self.shared[id];
        let key = &self.steps(s.target)[s.step].key;
        format!("{} {}/{}", key.kind, key.namespace, key.name)
    }

    /// Target `i` waited for its controller, and that ended with `outcome`.
    fn waited(
        &mut self,
        i: usize,
        outcome: Outcome,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        self.progress.requested -= 1;
        if outcome == Outcome::Done {
            self.handled_at[i] = Some(jiff::Timestamp::now());
        }
        self.end(i, outcome, report);
    }

    fn steps(&self, target: usize) -> &'j [Step] {
        match &self.job.targets[target].plan {
            Ok(steps) => steps,
            Err(_) => &[],
        }
    }

    /// Queues target `i`'s next step, or ends it when it has none left.
    pub(super) fn advance(
        &mut self,
        i: usize,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
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
    pub(super) fn count_sent(&mut self, work: Work) {
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

    pub(super) fn send(&self, work: Work, token: &str) -> futures::future::BoxFuture<'j, Sent> {
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
        // The target's own object is patched by this request (not only a source before it).
        let own = match work {
            Work::Whole { .. } => true,
            Work::Patch { step, .. } => step + 1 == self.steps(target).len(),
            Work::Source(_) => false,
        };
        let record = own && self.how.events;
        let tool = self.how.tool;
        // A source sent on its own is waited for by the executor's watch, not by the writer.
        let unwaited: Option<Step> = match work {
            Work::Source(_) => steps.first().map(|s| Step {
                wait: false,
                ..s.clone()
            }),
            _ => None,
        };
        Box::pin(async move {
            let steps = match &unwaited {
                Some(step) => std::slice::from_ref(step),
                None => steps,
            };
            let t = &job.targets[target];
            let Some(writer) = writer else {
                return (work, Outcome::Refused("read-only".into()), None, None);
            };
            let identity = writer.identity(&t.info).await;
            let wait = match work {
                Work::Whole { .. } => wait,
                _ => None,
            };
            if !record {
                let outcome = writer.apply(&t.info, steps, &token, wait).await;
                return (work, outcome, identity, None);
            }
            let notice = job.notice(identity.as_deref(), tool);
            let waiting = (token.as_str(), wait);
            let (outcome, event) = writer.apply_noting(&t.info, steps, waiting, &notice).await;
            (work, outcome, identity, event)
        })
    }

    /// A request came back.
    pub(super) fn sent(
        &mut self,
        (work, outcome, identity, event): Sent,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        let now = tokio::time::Instant::now();
        let deadline = now + self.wait();
        if let (Some(event), Work::Whole { target } | Work::Patch { target, .. }) = (event, work) {
            self.events[target] = Some(event);
        }
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
                    let deadline = match self.began[target] {
                        Some(began) => deadline.min(began + self.wait()),
                        None => deadline,
                    };
                    self.fresh.push(Waiter {
                        cluster: t.cluster,
                        key: steps[step].key.clone(),
                        who: Awaited::Target(target),
                        deadline,
                    });
                    report(t, Update::Requested, &self.progress);
                } else {
                    self.next_step[target] += 1;
                    self.advance(target, report);
                }
            }
            Work::Source(id) => {
                if outcome != Outcome::Done {
                    let why = format!(
                        "source {}: {} {}",
                        self.source_name(id),
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
                let s = &self.shared[id];
                let t = &self.job.targets[s.target];
                for &sub in &s.subscribers {
                    self.identities[sub] = identity.clone();
                    self.began[sub].get_or_insert(now);
                }
                self.fresh.push(Waiter {
                    cluster: t.cluster,
                    key: self.steps(s.target)[s.step].key.clone(),
                    who: Awaited::Source(id),
                    deadline,
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

    /// Reads `w`'s object until handled or its deadline.
    pub(super) fn poll(
        &self,
        w: Waiter,
        token: &str,
    ) -> futures::future::BoxFuture<'j, (Awaited, Outcome)> {
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
    pub(super) fn polled(
        &mut self,
        who: Awaited,
        outcome: Outcome,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        match (who, outcome) {
            (Awaited::Target(i), outcome) => self.waited(i, outcome, report),
            (Awaited::Source(id), Outcome::Done) => {
                self.source_ended(id, SourceState::Handled, report);
            }
            (Awaited::Source(id), outcome) => {
                self.source_ended(id, SourceState::Failed(outcome), report);
            }
        }
    }

    /// Ends every waiter that `handled` says is handled (with what its object then said, where
    /// it shows it).
    pub(super) fn settle(
        &mut self,
        handled: impl Fn(&Waiter) -> Option<Option<crate::audit::HandledState>>,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        let mut still = Vec::new();
        let mut done = Vec::new();
        for w in std::mem::take(&mut self.waiting) {
            match handled(&w) {
                Some(verdict) => done.push((w, verdict)),
                None => still.push(w),
            }
        }
        self.waiting = still;
        for (w, verdict) in done {
            match w.who {
                Awaited::Target(i) => {
                    self.verdicts[i] = verdict;
                    self.waited(i, Outcome::Done, report)
                }
                Awaited::Source(id) => self.source_ended(id, SourceState::Handled, report),
            }
        }
    }

    /// Ends the waiters past their deadline (all of them with None: nothing more can be seen).
    pub(super) fn expire(
        &mut self,
        now: Option<tokio::time::Instant>,
        report: &mut impl FnMut(&Target, Update<'_>, &Progress),
    ) {
        let (late, still): (Vec<Waiter>, Vec<Waiter>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| now.is_none_or(|now| w.deadline <= now));
        self.waiting = still;
        let wait = crate::units::format_duration(self.wait());
        for w in late {
            let outcome = Outcome::TimedOut(format!(
                "requested; the controller did not handle it within {wait}"
            ));
            match w.who {
                Awaited::Target(i) => self.waited(i, outcome, report),
                Awaited::Source(id) => {
                    let outcome = Outcome::TimedOut(format!(
                        "source {} requested; its controller did not handle it within {wait}",
                        self.source_name(id)
                    ));
                    self.source_ended(id, SourceState::Failed(outcome), report);
                }
            }
        }
    }

    pub(super) fn end(
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
            .seen_as(self.identities[i].as_deref().map(|i| i.username.as_str()))
            .handled(self.handled_at[i])
            .result(self.verdicts[i].take())
            .event(self.events[i].as_ref());
        report(t, Update::Ended(&outcome, &record), &self.progress);
        self.records[i] = Some(record);
    }
}

#[cfg(test)]
mod tests;
