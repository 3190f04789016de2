//! One action on many objects, for every front door alike: the one guardrail that refuses a
//! whole action (`guardrail.rs`), planning every target (`plan.rs`: the one place that decides a
//! target's refusal, in one order, with one wording), then
//! carrying the job out through the session's [`Writer`] ([`carry_out`]: `carry.rs` runs it,
//! `schedule.rs` is its state machine), each outcome reported as it ends, the whole attempt
//! appended to the audit journal.

mod carry;
mod guardrail;
mod plan;
mod progress;
mod schedule;

pub use carry::{Handled, JournalError, Watch, carry_out};
pub use guardrail::{Refused, Request, admit, may_write, within_limits};
pub use plan::{Carry, Guard, Job, Tally, Target, plan};
pub use progress::{Progress, Update};
