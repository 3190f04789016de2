//! Why a write without a terminal was not done as asked: an action ([`ActFailed`]), or a
//! decision on a proposal ([`ProposalFailed`]).

use std::io;

use crate::actions::{Refused, Unsent};
use crate::fleet::verbs::Verb;
use crate::headless::OpenFailed;
use crate::proposals::{ProposalStatus, SelectionError, StoreError};

/// Why `suspend`, `resume` or `reconcile` sent nothing, or not everything.
#[derive(Debug, thiserror::Error)]
pub enum ActFailed {
    /// The fleet could not be opened (the config, the bus), or holds no cluster.
    #[error("{0}")]
    Open(#[from] OpenFailed),
    /// The targets could not be written; a reader closing them (`| head`) is not a failure.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
    /// The guardrail refused the action; `then` says what became of it.
    #[error("{refused}; {then}")]
    Refused { refused: Refused, then: Unsent },
    /// More than one target and no terminal to confirm on.
    #[error("{what}: pass --yes to {verb} them without a terminal (--dry-run lists them)")]
    NeedsYes { what: String, verb: Verb },
    /// The person did not confirm.
    #[error("not confirmed; nothing was sent")]
    NotConfirmed,
}

impl ActFailed {
    /// Whether the command line or the config is to be changed, rather than the world.
    pub fn is_usage(&self) -> bool {
        match self {
            ActFailed::NeedsYes { .. } | ActFailed::NotConfirmed => true,
            ActFailed::Refused { refused, .. } => refused.is_usage(),
            ActFailed::Open(_) | ActFailed::Output(_) => false,
        }
    }

    /// Whether this is only the reader closing the output (`| head`): nothing to say.
    pub fn closed_pipe(&self) -> bool {
        matches!(self, ActFailed::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// Why a proposal could not be read, approved or rejected; an approval fails as any action
/// does besides ([`ProposalFailed::Act`]).
#[derive(Debug, thiserror::Error)]
pub enum ProposalFailed {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("proposal {id} is {status}: only a pending proposal can be approved")]
    NotPending { id: String, status: ProposalStatus },
    #[error("proposal {id} selects nothing valid: {why}")]
    SelectsNothing { id: String, why: SelectionError },
    #[error(
        "not every cluster answered within the timeout, so the proposal cannot be compared with the fleet; nothing was sent and {id} stays pending"
    )]
    NotSettled { id: String },
    /// The fleet changed since it was proposed: refused, and the refusal recorded (or not).
    #[error("the fleet changed since proposal {id} was made; nothing was sent")]
    Changed {
        id: String,
        changed: Vec<String>,
        unrecorded: Option<Box<StoreError>>,
    },
    /// The approval's action: the fleet opened, the guardrail, the confirmation, the output.
    #[error("{0}")]
    Act(#[from] ActFailed),
}

impl From<OpenFailed> for ProposalFailed {
    fn from(e: OpenFailed) -> ProposalFailed {
        ActFailed::Open(e).into()
    }
}

impl From<io::Error> for ProposalFailed {
    fn from(e: io::Error) -> ProposalFailed {
        ActFailed::Output(e).into()
    }
}

impl ProposalFailed {
    /// Whether the command line or the config is to be changed, rather than the world.
    pub fn is_usage(&self) -> bool {
        match self {
            ProposalFailed::Store(e) => matches!(e, StoreError::BadId(_)),
            ProposalFailed::Act(failed) => failed.is_usage(),
            _ => false,
        }
    }
}
