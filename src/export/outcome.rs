//! How a reading command ends (`get`, `rollout`, `gate`, `drift`, `workloads`, `trace`, `tree`,
//! `inventory`, `proposals`, `alert`), and why it could not do what it was asked; the edge
//! (`cli`) makes every line on stderr and the exit code from them, so the library prints nothing
//! but a command's output.

use std::io;

use crate::fleet::FluxKind;
use crate::headless::OpenFailed;

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

/// Why a reading command could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum ReadFailed {
    /// The request asks for something the command does not do: change the command line.
    #[error("{0}")]
    Misuse(#[from] Misuse),
    /// The fleet could not be opened (the config, the bus), or holds no cluster.
    #[error("{0}")]
    Open(#[from] OpenFailed),
    /// The output could not be written; a reader closing it (`| head`) is not a failure.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
    /// `rollout KIND NAME` names no one object.
    #[error("{0}")]
    NotOne(#[from] NotOne),
    /// The proposals could not be read.
    #[error("{0}")]
    Proposals(#[from] crate::proposals::StoreError),
    /// SIGINT and SIGTERM cannot be listened for.
    #[error("cannot listen for SIGINT and SIGTERM")]
    Signals,
    /// Every source of the followed fleet stopped.
    #[error("every source of the fleet has stopped")]
    SourcesStopped,
}

impl From<crate::bus::BusError> for ReadFailed {
    fn from(e: crate::bus::BusError) -> ReadFailed {
        ReadFailed::Open(e.into())
    }
}

impl ReadFailed {
    /// Whether the command line or the config is to be changed, rather than the world.
    pub fn is_usage(&self) -> bool {
        match self {
            ReadFailed::Misuse(_) => true,
            ReadFailed::Proposals(e) => matches!(e, crate::proposals::StoreError::BadId(_)),
            _ => false,
        }
    }

    /// Whether this is only the reader closing the output (`| head`): nothing to say.
    pub fn closed_pipe(&self) -> bool {
        matches!(self, ReadFailed::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
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
