//! What a session saw change, kept where no collector keeps a history (a fleet read from
//! kubeconfigs): each event compared with the index before it is applied — an object's health
//! or revision, a cluster's connection, a deletion — as the collectors record them. Bounded: the
//! newest [`Recorder::new`]'s `cap` changes.

use std::collections::VecDeque;

use jiff::Timestamp;

use super::RecordedChange;
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterEntry, FluxSummary, Index};

/// The changes seen, oldest first.
#[derive(Debug)]
pub struct Recorder {
    cap: usize,
    changes: VecDeque<RecordedChange>,
    /// When the first event was seen: what is kept goes back no further.
    started: Option<Timestamp>,
}

impl Recorder {
    pub fn new(cap: usize) -> Recorder {
        Recorder {
            cap,
            changes: VecDeque::new(),
            started: None,
        }
    }

    /// Notes what `event` changes; call it before the index applies it.
    pub fn note(&mut self, index: &Index, event: &Event) {
        self.started.get_or_insert(event.at);
        let Some(c) = index.id_of(&event.cluster).and_then(|id| index.cluster(id)) else {
            return;
        };
        match &event.change {
            Change::Applied(s) => self.object(c, s, event.at),
            Change::Replaced(_, objects) => {
                for s in objects {
                    self.object(c, s, event.at);
                }
            }
            Change::Deleted(key) if c.objects.contains_key(key) => {
                let ws = c.info.workspace.clone();
                let change = RecordedChange::of_object(event.at, &c.info.name, ws, "deleted", key);
                self.push(change);
            }
            Change::Connection(conn) if conn.phase != c.connection.phase => {
                let (name, ws) = (&c.info.name, &c.info.workspace);
                let message = conn.error.as_deref().map(str::to_string);
                let from = Some(c.connection.phase);
                let change =
                    RecordedChange::of_connection(event.at, name, ws, from, conn.phase, message);
                self.push(change);
            }
            _ => {}
        }
    }

    /// An object's health and revision against what the index holds of it.
    fn object(&mut self, c: &ClusterEntry, s: &FluxSummary, at: Timestamp) {
        let Some(before) = c.objects.get(&s.key) else {
            return;
        };
        let was = (before.health, before.revision.as_deref());
        for change in RecordedChange::of_summary(at, &c.info.name, &c.info.workspace, was, s) {
            self.push(change);
        }
    }

    fn push(&mut self, change: RecordedChange) {
        if self.changes.len() == self.cap {
            self.changes.pop_front();
        }
        self.changes.push_back(change);
    }

    /// The changes seen since `from`, oldest first.
    pub fn since(&self, from: Timestamp) -> Vec<RecordedChange> {
        let first = self.changes.partition_point(|c| c.at < from);
        self.changes.range(first..).cloned().collect()
    }

    /// When the first event was seen, if any was.
    pub fn started(&self) -> Option<Timestamp> {
        self.started
    }
}
