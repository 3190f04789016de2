//! What a session saw change, kept where no collector keeps a history (a fleet read from
//! kubeconfigs): each event compared with the index before it is applied — an object's health
//! or revision, a cluster's connection, a deletion — as the collectors record them. Bounded: the
//! newest [`Recorder::new`]'s `cap` changes.

use std::collections::VecDeque;

use jiff::Timestamp;

use super::Change;
use crate::fleet::index::{Change as Event_, Event};
use crate::fleet::{ClusterEntry, FluxSummary, Index};

/// The changes seen, oldest first.
#[derive(Debug)]
pub struct Recorder {
    cap: usize,
    changes: VecDeque<Change>,
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
            Event_::Applied(s) => self.object(c, s, event.at),
            Event_::Replaced(_, objects) => {
                for s in objects {
                    self.object(c, s, event.at);
                }
            }
            Event_::Deleted(key) if c.objects.contains_key(key) => {
                let ws = c.info.workspace.clone();
                let change = Change::of_object(event.at, &c.info.name, ws, "deleted", key);
                self.push(change);
            }
            Event_::Connection(conn) if conn.phase != c.connection.phase => {
                self.push(Change {
                    at: event.at,
                    cluster: c.info.name.clone(),
                    workspace: c.info.workspace.clone(),
                    what: "connection".into(),
                    kind: None,
                    namespace: None,
                    name: None,
                    from: Some(c.connection.phase.as_str().into()),
                    to: Some(conn.phase.as_str().into()),
                    message: conn.error.as_deref().map(str::to_string),
                    happened: None,
                });
            }
            _ => {}
        }
    }

    /// An object's health and revision against what the index holds of it.
    fn object(&mut self, c: &ClusterEntry, s: &FluxSummary, at: Timestamp) {
        let Some(before) = c.objects.get(&s.key) else {
            return;
        };
        let ws = || c.info.workspace.clone();
        if before.health != s.health {
            let mut change = Change::of_object(at, &c.info.name, ws(), "health", &s.key);
            change.from = Some(before.health.as_str().into());
            change.to = Some(s.health.as_str().into());
            change.message = s.message.as_deref().map(str::to_string);
            change.happened = s.last_transition;
            self.push(change);
        }
        if before.revision != s.revision && s.revision.is_some() {
            let mut change = Change::of_object(at, &c.info.name, ws(), "revision", &s.key);
            change.from = before.revision.as_deref().map(str::to_string);
            change.to = s.revision.as_deref().map(str::to_string);
            change.happened = s.rollout.as_ref().and_then(|r| r.since);
            self.push(change);
        }
    }

    fn push(&mut self, change: Change) {
        if self.changes.len() == self.cap {
            self.changes.pop_front();
        }
        self.changes.push_back(change);
    }

    /// The changes seen since `from`, oldest first.
    pub fn since(&self, from: Timestamp) -> Vec<Change> {
        let first = self.changes.partition_point(|c| c.at < from);
        self.changes.range(first..).cloned().collect()
    }

    /// When the first event was seen, if any was.
    pub fn started(&self) -> Option<Timestamp> {
        self.started
    }
}
