//! Halting a rollout going wrong: suspend it on every cluster of the matrix the newest revision
//! has not reached yet (and that is not suspended already), with the reason `halted rollout of
//! <revision>`; and undoing a halt: resume exactly the copies suspended with that reason. The TUI
//! (`H`, `U` in the matrix), `fluxfleet mcp`'s `halt_rollout` and an approval of its proposal
//! all decide the targets here.

use super::spread::{Matrix, Standing};
use crate::fleet::verbs::Verb;
use crate::fleet::{ClusterId, Index, ObjectKey};

/// What halting (or undoing a halt) sends: the verb, the reason, the clusters whose copy it
/// touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Halt {
    pub verb: Verb,
    /// The reason a halt suspends with (and a resume looks for).
    pub reason: String,
    pub clusters: Vec<ClusterId>,
}

/// Why there is nothing to halt or resume.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoHalt {
    #[error("no revision runs anywhere yet: nothing to halt")]
    NoRevision,
    #[error("every copy runs {0} already, or is suspended")]
    Arrived(String),
    #[error("nothing suspended with the reason \"{0}\"")]
    NothingHalted(String),
}

/// The halt of `key`'s rollout over `matrix` (its copies on the clusters of a scope), or with
/// `resume` its undoing.
pub fn halt(index: &Index, matrix: &Matrix, key: &ObjectKey, resume: bool) -> Result<Halt, NoHalt> {
    let newest = matrix.spread.newest.as_ref().ok_or(NoHalt::NoRevision)?;
    let reason = format!("halted rollout of {}", newest.revision);
    let halted = |c: ClusterId| {
        index
            .cluster(c)
            .and_then(|e| e.objects.get(key))
            .is_some_and(|o| o.suspended && o.suspend_reason() == Some(reason.as_str()))
    };
    let clusters: Vec<ClusterId> = matrix
        .places
        .iter()
        .filter(|p| match resume {
            true => halted(p.cluster),
            false => p.revision.as_ref() != Some(newest) && p.standing != Standing::Suspended,
        })
        .map(|p| p.cluster)
        .collect();
    if clusters.is_empty() {
        return Err(match resume {
            true => NoHalt::NothingHalted(reason),
            false => NoHalt::Arrived(newest.revision.to_string()),
        });
    }
    Ok(Halt {
        verb: if resume { Verb::Resume } else { Verb::Suspend },
        reason,
        clusters,
    })
}
