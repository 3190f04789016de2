//! One action on many objects, for every front door alike: the one door every request goes
//! through ([`admit`], `admission.rs`: every check in one order, one wording, and the only maker
//! of what the executor takes), planning every target (`plan.rs`), then
//! carrying the job out through the session's [`Writer`] ([`carry_out`]: `carry.rs` runs it,
//! `schedule.rs` is its state machine), each outcome reported as it ends, the whole attempt
//! appended to the audit journal.

mod admission;
mod carry;
mod plan;
mod progress;
mod schedule;

pub use admission::{
    Admitted, Ask, Confirmation, Objects, Purpose, Refused, Request, Rules, Unsent, admit,
    may_run_writer,
};
pub use carry::{Handled, JournalError, Watch, carry_out};
pub use plan::{Carry, Job, Tally, Target};
pub use progress::{Progress, Update};
