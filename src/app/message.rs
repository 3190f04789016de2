//! What reaches the TUI's `update` (a key, a batch of fleet events, an answer) and the work it
//! hands back to the event loop.

use std::sync::Arc;

use crossterm::event::KeyEvent;

use super::view::Fetched;
use crate::actions::Job;
use crate::fleet::index::Event;
use crate::fleet::verbs::Outcome;
use crate::fleet::{ClusterId, ClusterInfo, ObjectKey};

/// What happened: a key, the fleet's events, an answer to an effect.
pub enum Msg {
    Key(KeyEvent),
    /// A batch of engine events, applied together.
    Fleet(Vec<Event>),
    /// The answer to a fetch effect, for the object it was about.
    Fetched {
        cluster: ClusterId,
        key: ObjectKey,
        fetched: Fetched,
    },
    /// What broke inside `key` on `clusters`, read and folded.
    Workloads {
        key: ObjectKey,
        clusters: Arc<[ClusterId]>,
        folded: Box<crate::fleet::workload::fold::Folded>,
    },
    /// Where `asked` comes from on every cluster read, folded.
    Traced {
        asked: crate::fleet::trace::Asked,
        trace: Box<crate::fleet::trace::Trace>,
    },
    /// What `root` put on every cluster read, folded into one tree.
    Grown {
        root: ObjectKey,
        tree: Box<crate::fleet::tree::Tree>,
    },
    /// How one target of run `run` ended (or that its patch was accepted).
    Acted {
        run: u64,
        cluster: ClusterId,
        key: ObjectKey,
        outcome: Outcome,
    },
    /// The audit journal's last lines, newest first.
    Audit(Result<Vec<String>, Arc<crate::actions::JournalError>>),
    /// A plugin run ended (or could not start).
    Plugin(super::handoff::PluginEnded),
    /// The proposals, newest first.
    Proposals(Result<Vec<crate::proposals::Proposal>, Arc<crate::proposals::StoreError>>),
    /// A decision on a proposal was recorded (or could not be: decided by someone else first,
    /// expired).
    Decided(Result<Box<crate::proposals::Proposal>, Arc<crate::proposals::StoreError>>),
    /// Drift asked of `key` in `scope`, its copies read (`D` on a matrix or an object).
    Drift {
        scope: super::view::ListScope,
        key: ObjectKey,
        drift: Box<crate::fleet::drift::Drift>,
    },
    /// The history asked for by `:history`, oldest first.
    History(Result<Vec<crate::fleet::history::RecordedChange>, crate::fleet::read::ReadError>),
}

/// Work for the event loop to start on the model's behalf.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    FetchEvents {
        cluster: ClusterId,
        /// Where to read it from.
        info: Arc<ClusterInfo>,
        key: ObjectKey,
        /// Whose events: the object, then what `flux events --for` shows beside it.
        told: Vec<ObjectKey>,
    },
    FetchYaml {
        cluster: ClusterId,
        info: Arc<ClusterInfo>,
        key: ObjectKey,
    },
    /// Read the object and show its runs (`status.history`).
    FetchRuns {
        cluster: ClusterId,
        info: Arc<ClusterInfo>,
        key: ObjectKey,
    },
    /// Read what broke inside `key` on each of `clusters` (`infos`, in the same order) and fold
    /// it.
    FetchWorkloads {
        key: ObjectKey,
        clusters: Arc<[ClusterId]>,
        infos: Vec<Arc<ClusterInfo>>,
    },
    /// Trace `asked` on each of `infos` and fold the chains.
    FetchTrace {
        asked: crate::fleet::trace::Asked,
        infos: Vec<Arc<ClusterInfo>>,
    },
    /// Grow `root`'s tree on each of `infos` and fold them.
    FetchTree {
        root: ObjectKey,
        infos: Vec<Arc<ClusterInfo>>,
    },
    /// Read the copies of the object `plan` is for (drift asked of one object in `scope`).
    ReadDrift {
        scope: super::view::ListScope,
        key: ObjectKey,
        plan: Arc<crate::session::drift::Plan>,
    },
    /// Send an action (write mode only: a read-only session has nothing that can send it).
    Act(Job),
    /// Tell the executor of run `run` that the watch shows this target's reconcile handled.
    Handled {
        run: u64,
        cluster: ClusterId,
        key: ObjectKey,
    },
    ReadAudit,
    ReadProposals,
    /// Record a person's decision on a proposal (approval goes with its job: [`Effect::Act`]).
    Decide {
        id: String,
        decision: crate::proposals::Decision,
    },
    /// Read what changed since this time.
    ReadHistory(jiff::Timestamp),
    /// The user opened this cluster: where its source only summarizes it, its objects are
    /// watched from now on.
    Open(Arc<ClusterInfo>),
    /// Run a plugin (planned by `plugins::plan`: a writing one only where writes are allowed).
    Plugin(super::plugins::Launch),
}
