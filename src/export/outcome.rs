//! How a headless command ends, and what it tells a person on the way. The commands (`get`,
//! `rollout`, `gate`, `workloads`, `inventory`, `alert`, `proposals`, and the writes in
//! [`crate::acting`]) return these; the edge (`cli`) makes every line on stderr and the exit
//! code from them, so the library prints nothing but a command's output.

use std::io;
use std::time::Duration;

use crate::fleet::FluxKind;
use crate::fleet::verbs::Verb;

/// Where a command tells a person what happens on the way, and asks them to confirm: the
/// terminal for the command line, a recorder in tests.
pub trait Edge: Send + Sync {
    /// Something to tell a person now.
    fn said(&self, said: Said);
    /// Whether a progress line redrawn in place is seen (a terminal).
    fn shows_progress(&self) -> bool;
    /// Asks a person to confirm.
    fn confirm(&self, asked: &Confirm) -> Confirmed;
}

/// Something a command tells a person on the way, besides its output.
#[derive(Clone, Debug, PartialEq)]
pub enum Said {
    /// Something read inexactly (a source, a config, a proposal), and gone on without.
    Warning(String),
    /// What a command that follows the bus waits for (nothing published yet, not reachable).
    Waiting(String),
    /// The clusters in the scope that are not seen completely, when the output was made;
    /// `settled` is false when the timeout passed before every cluster answered.
    NotLive {
        settled: bool,
        clusters: Vec<NotLive>,
    },
    /// The selection matched no Flux object (the table would be empty).
    NoObjects,
    /// An action's progress: a line redrawn where that is seen, the last one kept.
    Progress {
        line: String,
        elapsed: Duration,
        last: bool,
    },
    /// A line for a person: what a dry run would do, what an approval shows, what is watched.
    Note(String),
}

/// A cluster not seen completely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotLive {
    pub workspace: String,
    pub cluster: String,
    /// Its phase.
    pub state: String,
    /// When it is tried again ("in 5s", or "-").
    pub retry: String,
    pub error: String,
}

/// What confirming an action asks a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirm {
    /// "suspend 12 objects on 4 clusters".
    pub what: String,
    /// What they type to confirm: the count, or `y`.
    pub wanted: String,
}

/// A person's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmed {
    Yes,
    No,
    /// Nobody can be asked: no terminal.
    NoTerminal,
}

/// How a command ended, having done what it was asked (what it wrote tells the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Everything asked for was seen and written.
    Done,
    /// Told to stop (a signal), or the reader closed the output: nothing is wrong.
    Stopped,
    /// Written, but an inventory source or the config has problems, or no cluster was found.
    Unclean,
    /// Written, but some clusters in the scope were not seen completely.
    Incomplete,
    /// `--fail-on` found matching objects.
    FailOn,
    /// `gate`: the gate is closed.
    GateClosed,
    /// `drift`: some copies on a revision applied something else, or drifted live.
    Drifted,
    /// `trace`: the copies found do not share one chain; `tree`: the clusters' trees differ.
    Diverged,
    /// `trace`, `tree`: every cluster in the scope was read and none has it (`flux trace` and
    /// `flux tree` exit 1 when they find nothing).
    Nowhere,
    /// Written, but some of what was asked for could not be read (said as warnings).
    Unreadable,
}

impl Ended {
    /// Written: done, unless an inventory source had problems (`clean` false) or some clusters
    /// in the scope were not seen completely.
    pub fn written(clean: bool, incomplete: bool) -> Ended {
        match (clean, incomplete) {
            (false, _) => Ended::Unclean,
            (true, true) => Ended::Incomplete,
            (true, false) => Ended::Done,
        }
    }
}

/// Why a command could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Failed {
    /// The request asks for something the command does not do: change the command line.
    #[error("{0}")]
    Misuse(#[from] Misuse),
    /// The fleet or its history could not be read (the config, the bus).
    #[error("{0}")]
    Open(#[from] crate::bus::BusError),
    /// No cluster to read: the kubeconfigs or the bus hold none.
    #[error("{0}")]
    NoClusters(String),
    /// The output could not be written; a reader closing it (`| head`) is not a failure.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
    /// `rollout KIND NAME` names no one object.
    #[error("{0}")]
    NotOne(#[from] NotOne),
    /// An Alertmanager URL or CA cannot be used.
    #[error("{0}")]
    Alertmanager(#[from] AlertmanagerError),
    /// SIGINT and SIGTERM cannot be listened for.
    #[error("cannot listen for SIGINT and SIGTERM")]
    Signals,
    /// Every source of the followed fleet stopped.
    #[error("every source of the fleet has stopped")]
    SourcesStopped,
    /// The guardrail refused the action; `then` says what became of it.
    #[error("{refused}; {then}")]
    Refused {
        refused: crate::actions::Refused,
        then: Unsent,
    },
    /// More than one target and no terminal to confirm on.
    #[error("{what}: pass --yes to {verb} them without a terminal (--dry-run lists them)")]
    NeedsYes { what: String, verb: Verb },
    /// The person did not confirm.
    #[error("not confirmed; nothing was sent")]
    NotConfirmed,
    /// A proposal cannot be read, approved or decided.
    #[error("{0}")]
    Proposal(Box<ProposalFailed>),
}

/// `rollout KIND NAME` names no one object in scope: what to change in the scope.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotOne {
    #[error("no {kind} {name:?} on the clusters in scope")]
    Missing { kind: FluxKind, name: String },
    #[error("{kind} {name:?} is in several namespaces ({}): choose one with -n", .namespaces.join(", "))]
    Namespaces {
        kind: FluxKind,
        name: String,
        namespaces: Vec<String>,
    },
}

/// Why alerts could not be sent: `--alertmanager` or its CA to fix, or Alertmanager to reach
/// again (the next round sends every alert again). Never the URL's password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AlertmanagerError {
    /// The URL or the CA file given is not usable.
    #[error("--alertmanager {url}: {why}")]
    Usage { url: String, why: String },
    /// The alerts could not be written as JSON.
    #[error("{0}")]
    Encode(String),
    /// It could not be reached: tried again at the next round.
    #[error("cannot reach {at}: {why}")]
    Unreachable { at: String, why: String },
    /// It answered with an error.
    #[error("{at} answered {status}: {text}")]
    Refused {
        at: String,
        status: u16,
        text: String,
    },
    /// It did not answer in time: tried again at the next round.
    #[error("{at} did not answer within {within:?}")]
    TimedOut { at: String, within: Duration },
}

pub use crate::actions::Unsent;

/// A request a command refuses before reading anything.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Misuse {
    #[error(
        "{0} has no revisions to roll out (Kustomization, HelmRelease, or a source with an artifact)"
    )]
    NoRevisions(FluxKind),
    #[error("name the kind too: fluxfleet rollout KIND NAME")]
    NameWithoutKind,
    #[error("{0} applies nothing to compare: name a Kustomization (ks) or a HelmRelease (hr)")]
    NoDrift(FluxKind),
    #[error("name the object: fluxfleet workloads ks NAME (or hr NAME)")]
    WorkloadsUnnamed,
    #[error("{0} deploys no workloads: name a Kustomization (ks) or a HelmRelease (hr)")]
    NoWorkloads(FluxKind),
    #[error("ring metrics come from the collectors' history: read the fleet with --nats URL")]
    MetricsNeedBus,
    /// `--since` reaches before any time.
    #[error("--{0}")]
    Since(String),
}

/// Why a proposal could not be read, approved or decided.
#[derive(Debug, thiserror::Error)]
pub enum ProposalFailed {
    #[error("{0}")]
    Store(#[from] crate::proposals::StoreError),
    #[error("proposal {id} is {status}: only a pending proposal can be approved")]
    NotPending {
        id: String,
        status: crate::proposals::ProposalStatus,
    },
    #[error("proposal {id} selects nothing valid: {why}")]
    SelectsNothing {
        id: String,
        why: crate::proposals::SelectionError,
    },
    #[error(
        "not every cluster answered within the timeout, so the proposal cannot be compared with the fleet; nothing was sent and {id} stays pending"
    )]
    NotSettled { id: String },
    /// The fleet changed since it was proposed: refused, and the refusal recorded (or not).
    #[error("the fleet changed since proposal {id} was made; nothing was sent")]
    Changed {
        id: String,
        changed: Vec<String>,
        unrecorded: Option<crate::proposals::StoreError>,
    },
}

impl From<ProposalFailed> for Failed {
    fn from(failed: ProposalFailed) -> Failed {
        Failed::Proposal(Box::new(failed))
    }
}

impl From<crate::proposals::StoreError> for Failed {
    fn from(e: crate::proposals::StoreError) -> Failed {
        ProposalFailed::Store(e).into()
    }
}

impl Failed {
    /// Whether the command line or the config is to be changed, rather than the world.
    pub fn is_usage(&self) -> bool {
        match self {
            Failed::Misuse(_)
            | Failed::Alertmanager(_)
            | Failed::NeedsYes { .. }
            | Failed::NotConfirmed => true,
            Failed::Refused { refused, .. } => refused.is_usage(),
            Failed::Proposal(p) => {
                matches!(
                    **p,
                    ProposalFailed::Store(crate::proposals::StoreError::BadId(_))
                )
            }
            _ => false,
        }
    }
}

/// Whether `failed` is only the reader closing the output (`| head`): nothing to say.
pub fn closed_pipe(failed: &Failed) -> bool {
    matches!(failed, Failed::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
}
