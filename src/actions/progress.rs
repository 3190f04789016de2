//! What a job reports as it goes: its progress line and each target's update.

use crate::audit;
use crate::fleet::verbs::{Outcome, Verb};

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
    Ended(&'a Outcome, &'a audit::Record),
}
