//! What was read from a cluster or the journal when the user asked, owned here: asked for (and
//! shown as being read), arrived, scrolled and picked in, parked while the user looks elsewhere.

use std::sync::Arc;

use jiff::Timestamp;

use super::view::{Fetched, ListScope, View};
use crate::fleet::ObjectKey;
use crate::fleet::drift::Drift;
use crate::fleet::history::RecordedChange;
use crate::fleet::read::ReadError;
use crate::fleet::rollouts::metrics::RingDelivery;

/// The proposals as read: newest first, or why they could not be.
pub type Proposals = Result<Vec<crate::proposals::Proposal>, Arc<crate::proposals::StoreError>>;

/// The audit journal's last lines as read: newest first, or why they could not be.
pub type Audit = Result<Vec<String>, Arc<crate::actions::JournalError>>;

/// The history as read: oldest first, or why it could not be.
pub type History = Result<Vec<RecordedChange>, ReadError>;

/// What was read from a cluster or the journal when the user asked, and how far it is scrolled.
#[derive(Default)]
pub struct Reads {
    /// The detail view's events, YAML or workloads.
    fetched: Option<Fetched>,
    /// First line of the fetched pane shown.
    fetched_scroll: usize,
    /// The item picked in a view of items read (a workload, a trace's chain, a tree's node).
    picked: usize,
    /// The audit journal's last lines, newest first (read when `:audit` opens).
    audit: Option<Audit>,
    /// The proposals read when `:proposals` opened (or a decision was taken), newest first.
    proposals: Option<Proposals>,
    /// The history read when `:history` opened, oldest first.
    history: Option<History>,
    /// Since when the history was last asked for.
    history_since: Option<Timestamp>,
    /// The history read is what this session saw itself (no collector keeps one).
    history_own: bool,
    /// How each ring delivered the thing the matrix shows, from the history read when it
    /// opened (on the bus; none from kubeconfigs, which keep no history).
    deliveries: Vec<RingDelivery>,
    /// Drift asked of one object, its copies read (or being read).
    drift: Option<AskedDrift>,
    /// A trace or tree left for one of its copies: shown again when the user comes back.
    parked: Option<Parked>,
}

/// What a view of items read showed, and the item picked, while the user looks elsewhere.
#[derive(Clone, Debug, PartialEq)]
pub struct Parked {
    view: View,
    fetched: Fetched,
    picked: usize,
}

/// Drift asked of one object in a scope: none until its copies are read.
pub struct AskedDrift {
    scope: ListScope,
    key: ObjectKey,
    drift: Option<Box<Drift>>,
}

impl AskedDrift {
    /// Whether `view` is the drift view it was asked for.
    pub fn is_for(&self, view: &View) -> bool {
        matches!(view, View::Drift { scope, key: Some(key) } if *scope == self.scope && *key == self.key)
    }

    /// What the drift view of `view` shows, when it is this one's and read.
    pub fn of(&self, view: &View) -> Option<&Drift> {
        self.drift().filter(|_| self.is_for(view))
    }

    /// The drift read, none while its copies are being read.
    pub fn drift(&self) -> Option<&Drift> {
        self.drift.as_deref()
    }
}

impl Reads {
    /// The detail view's events, YAML or workloads, or the trace or tree read.
    pub fn fetched(&self) -> Option<&Fetched> {
        self.fetched.as_ref()
    }

    /// First line of the fetched pane shown (the proposal selected in `:proposals`).
    pub fn fetched_scroll(&self) -> usize {
        self.fetched_scroll
    }

    /// The item picked in a view of items read (a workload, a trace's chain, a tree's node).
    pub fn picked(&self) -> usize {
        self.picked
    }

    /// The audit journal's last lines, none while they are read.
    pub fn audit(&self) -> Option<&Audit> {
        self.audit.as_ref()
    }

    /// The proposals, none while they are read.
    pub fn proposals(&self) -> Option<&Proposals> {
        self.proposals.as_ref()
    }

    /// The history `:history` shows, none while it is read.
    pub fn history(&self) -> Option<&History> {
        self.history.as_ref()
    }

    /// Since when the history was last asked for.
    pub fn history_since(&self) -> Option<Timestamp> {
        self.history_since
    }

    /// Whether the history read is what this session saw itself.
    pub fn history_own(&self) -> bool {
        self.history_own
    }

    /// How each ring delivered the thing the matrix shows.
    pub fn deliveries(&self) -> &[RingDelivery] {
        &self.deliveries
    }

    /// Drift asked of one object, its copies read (or being read).
    pub fn drift(&self) -> Option<&AskedDrift> {
        self.drift.as_ref()
    }

    /// Shows `fetched` below the detail view's facts (or in a view of items read), from its
    /// first line and its first item.
    pub fn show(&mut self, fetched: Option<Fetched>) {
        self.fetched = fetched;
        self.fetched_scroll = 0;
        self.picked = 0;
    }

    /// The fetched pane scrolled to first show line `at` (the proposal `at` selected).
    pub fn scroll_to(&mut self, at: usize) {
        self.fetched_scroll = at;
    }

    /// Keeps the fetched pane's scroll within what there is to show (`max`: its last first line).
    pub fn clamp_scroll(&mut self, max: usize) {
        self.fetched_scroll = self.fetched_scroll.min(max);
    }

    /// Item `at` of a view of items read picked.
    pub fn pick(&mut self, at: usize) {
        self.picked = at;
    }

    /// What `view` shows, read, put aside with the item picked while the user opens another:
    /// shown again by [`Reads::back_to`] `view`.
    pub fn park(&mut self, view: View) {
        if let Some(fetched) = self.fetched.take() {
            self.parked = Some(Parked {
                view,
                fetched,
                picked: self.picked,
            });
        }
    }

    /// The user is back on `view`: what was read for the view left is gone, and what was parked
    /// for `view` is shown again, at the item picked.
    pub fn back_to(&mut self, view: &View) {
        self.show(None);
        if self.parked.as_ref().is_some_and(|p| p.view == *view)
            && let Some(parked) = self.parked.take()
        {
            self.show(Some(parked.fetched));
            self.picked = parked.picked;
        }
    }

    /// The audit journal asked for: none shown until it is read.
    pub fn audit_asked(&mut self) {
        self.audit = None;
    }

    /// The audit journal's lines arrived.
    pub fn audit_read(&mut self, lines: Audit) {
        self.audit = Some(lines);
    }

    /// The proposals asked for: none shown until they are read, the first one selected.
    pub fn proposals_asked(&mut self) {
        self.proposals = None;
        self.fetched_scroll = 0;
    }

    /// The proposals arrived.
    pub fn proposals_read(&mut self, list: Proposals) {
        self.proposals = Some(list);
    }

    /// The history since `since` asked for `:history`: none shown until it is read, from its
    /// first line.
    pub fn history_asked(&mut self, since: Timestamp) {
        self.history = None;
        self.history_since = Some(since);
        self.fetched_scroll = 0;
    }

    /// The history since `since` asked for the matrix's ring headers: none until it is read.
    pub fn deliveries_asked(&mut self, since: Timestamp) {
        self.deliveries.clear();
        self.history_since = Some(since);
    }

    /// The history arrived for `:history` (`own`: what this session saw itself).
    pub fn history_read(&mut self, history: History, own: bool) {
        self.history_own = own;
        self.history = Some(history);
    }

    /// The history arrived for the matrix, worked out into how each ring delivered: the history
    /// itself is not kept (`own`: what this session saw itself).
    pub fn delivered(&mut self, deliveries: Vec<RingDelivery>, own: bool) {
        self.history_own = own;
        self.deliveries = deliveries;
        self.history = None;
    }

    /// Drift asked of `key` in `scope`: its copies are being read.
    pub fn drift_asked(&mut self, scope: ListScope, key: ObjectKey) {
        self.drift = Some(AskedDrift {
            scope,
            key,
            drift: None,
        });
    }

    /// The copies of `key` in `scope` were read: kept if that is still the drift asked for
    /// (an answer to an earlier question is dropped); whether it was.
    pub fn drift_read(&mut self, (scope, key): (ListScope, ObjectKey), drift: Box<Drift>) -> bool {
        match self.drift.as_mut() {
            Some(asked) if asked.scope == scope && asked.key == key => {
                asked.drift = Some(drift);
                true
            }
            _ => false,
        }
    }
}
