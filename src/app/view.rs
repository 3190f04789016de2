//! Where the user is and what the TUI shows: the views, a screen's selection, filter and sort,
//! what is being typed, a confirmation and an action's run. Plain data; the [`super::model::Model`]
//! holds them.

use std::collections::HashSet;

use jiff::Timestamp;

use super::keymap::Context;
use crate::fleet::verbs::{Outcome, Verb};
use crate::fleet::{ClusterEntry, ClusterId, FluxKind, Index, ObjectEvent, ObjectKey, WorkspaceId};

/// Where a list of objects is drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListScope {
    Fleet,
    Workspace(WorkspaceId),
    Cluster(ClusterId),
}

/// What the map shows of each cluster: one key (`map_mode`) cycles through them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MapMode {
    /// How bad it is: the share of its objects failing, not watched, progressing, ready.
    #[default]
    Health,
    /// Its copy of the rollout last selected in the rollout view: on the newest revision,
    /// behind, failing on it, stuck, suspended.
    Rollout,
    /// How long since the cluster's last event or report: how old what the map shows is.
    Freshness,
}

impl MapMode {
    pub fn next(self) -> MapMode {
        match self {
            MapMode::Health => MapMode::Rollout,
            MapMode::Rollout => MapMode::Freshness,
            MapMode::Freshness => MapMode::Health,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MapMode::Health => "health",
            MapMode::Rollout => "rollout",
            MapMode::Freshness => "freshness",
        }
    }
}

/// One screen of the TUI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    /// One row per workspace.
    Fleet,
    /// One row per cluster of a workspace.
    Workspace(WorkspaceId),
    /// One row per Flux object of a cluster.
    Cluster(ClusterId),
    /// Objects of every cluster in the scope, of one kind or all.
    Objects {
        scope: ListScope,
        kind: Option<FluxKind>,
    },
    /// Everything not ready in the scope, identical failures grouped.
    Triage { scope: ListScope },
    /// Which revision runs where: one row per deployed thing in the scope (of one kind or all).
    Rollout {
        scope: ListScope,
        kind: Option<FluxKind>,
    },
    /// One deployed thing on every cluster of the scope, ring by ring.
    Matrix { scope: ListScope, key: ObjectKey },
    /// One object.
    Detail { cluster: ClusterId, key: ObjectKey },
    /// The keys of the view below.
    Help { of: Context },
    /// The targets of the last action and how each one ended.
    Results,
    /// The audit journal, newest first.
    Audit,
    /// What changed in the scope since a time, newest first (the collectors' history).
    History { scope: ListScope, since: Timestamp },
    /// What broke inside a Kustomization or HelmRelease on these clusters: its workloads'
    /// verdicts, folded (`w` on a triage group).
    Workloads {
        key: ObjectKey,
        clusters: std::sync::Arc<[ClusterId]>,
    },
    /// What assistants proposed (`fluxfleet mcp --propose`), newest first, for a person to
    /// approve or reject.
    Proposals,
    /// Where an object comes from on every cluster (`T`): each copy's chain, folded.
    Trace(Box<crate::fleet::trace::Asked>),
    /// A Kustomization's or HelmRelease's tree on every cluster.
    Tree(Box<ObjectKey>),
    /// Same revision, different result: the copies in the scope that applied something other
    /// than most copies on their revision, and the releases drifted live; of one object, or all
    /// (`:drift`, `D` on a rollout matrix or an object).
    Drift {
        scope: ListScope,
        key: Option<ObjectKey>,
    },
}

impl View {
    pub fn context(&self) -> Context {
        match self {
            View::Fleet => Context::Fleet,
            View::Workspace(_) => Context::Workspace,
            View::Cluster(_) => Context::Cluster,
            View::Objects { .. } => Context::Objects,
            View::Triage { .. } => Context::Triage,
            View::Rollout { .. } => Context::Rollout,
            View::Matrix { .. } => Context::Matrix,
            View::Detail { .. } => Context::Detail,
            View::Help { .. } => Context::Help,
            View::Results => Context::Results,
            View::Proposals => Context::Proposals,
            View::Workloads { .. } => Context::Workloads,
            View::Tree(_) => Context::Tree,
            View::Audit | View::History { .. } | View::Drift { .. } | View::Trace(_) => {
                Context::Global
            }
        }
    }

    /// The scope a `:ks` or `:triage` typed here applies to.
    pub fn scope(&self) -> ListScope {
        match self {
            View::Workspace(w) => ListScope::Workspace(*w),
            View::Cluster(c) => ListScope::Cluster(*c),
            View::Detail { cluster, .. } => ListScope::Cluster(*cluster),
            View::Objects { scope, .. }
            | View::Triage { scope }
            | View::Rollout { scope, .. }
            | View::Matrix { scope, .. }
            | View::History { scope, .. }
            | View::Drift { scope, .. } => *scope,
            View::Fleet
            | View::Help { .. }
            | View::Results
            | View::Audit
            | View::Proposals
            | View::Workloads { .. }
            | View::Trace(_)
            | View::Tree(_) => ListScope::Fleet,
        }
    }

    /// The sortable columns, the first being the natural order.
    pub fn sort_columns(&self) -> &'static [SortBy] {
        use SortBy::*;
        match self {
            View::Fleet => &[Name, Failing, NotLive],
            View::Workspace(_) => &[Name, State, Failing, Fresh, Management],
            View::Cluster(_) => &[Kind, Health, Age, Name],
            View::Objects { .. } => &[Cluster, Health, Age, Name],
            View::Triage { .. } => &[Severity, Clusters, Name, Age],
            View::Rollout { .. } => &[Kind, Behind, Stuck, Age],
            View::Matrix { .. } => &[],
            View::Detail { .. }
            | View::Help { .. }
            | View::Results
            | View::Audit
            | View::Proposals
            | View::History { .. }
            | View::Workloads { .. }
            | View::Drift { .. }
            | View::Trace(_)
            | View::Tree(_) => &[],
        }
    }
}

/// A column rows can be sorted by (`s` cycles through a view's [`View::sort_columns`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    Name,
    Failing,
    NotLive,
    State,
    Fresh,
    /// Grouped by the management clusters they were found on.
    Management,
    Kind,
    Health,
    Age,
    Cluster,
    Severity,
    Clusters,
    Behind,
    Stuck,
}

impl SortBy {
    /// The column's header.
    pub fn header(self) -> &'static str {
        match self {
            SortBy::Name => "NAME",
            SortBy::Failing => "FAILING",
            SortBy::NotLive => "NOT-LIVE",
            SortBy::State => "STATE",
            SortBy::Fresh => "FRESH",
            SortBy::Management => "MANAGEMENT",
            SortBy::Kind => "KIND",
            SortBy::Health => "HEALTH",
            SortBy::Age => "AGE",
            SortBy::Cluster => "CLUSTER",
            SortBy::Severity => "SEVERITY",
            SortBy::Clusters => "CLUSTERS",
            SortBy::Behind => "BEHIND",
            SortBy::Stuck => "STUCK",
        }
    }
}

/// What a row stands for, so the selection follows the same thing while rows move around it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RowId {
    Workspace(WorkspaceId),
    Cluster(ClusterId),
    Object(ClusterId, ObjectKey),
    /// A triage group, by the hash of what its members share.
    Group(u64),
    /// A deployed thing across the clusters of a scope (the rollout view).
    Rollout(ObjectKey),
    /// A ring of the matrix, by its position.
    Ring(usize),
}

/// A screen on the stack, with its own state: going back finds it as it was left.
#[derive(Clone, Debug)]
pub struct Screen {
    pub view: View,
    pub selected: Option<RowId>,
    /// Position of the selection, used when the selected row disappears.
    pub cursor: usize,
    /// First visible row.
    pub offset: usize,
    pub filter: String,
    pub failing_only: bool,
    pub suspended_only: bool,
    /// Which of the view's sort columns orders the rows (0: the natural order).
    pub sort: usize,
    pub reverse: bool,
    /// Expanded triage groups.
    pub expanded: HashSet<u64>,
    /// Triage groups every not-ready object alike, instead of its root causes.
    pub flat: bool,
    /// The fleet view's selection is on the map, on this cell.
    pub map: Option<usize>,
}

impl Screen {
    /// The column the rows are sorted by; None for views without sorting.
    pub fn sort_by(&self) -> Option<SortBy> {
        self.view.sort_columns().get(self.sort).copied()
    }

    pub fn new(view: View) -> Screen {
        Screen {
            view,
            selected: None,
            cursor: 0,
            offset: 0,
            filter: String::new(),
            failing_only: false,
            suspended_only: false,
            sort: 0,
            reverse: false,
            expanded: HashSet::new(),
            flat: false,
            map: None,
        }
    }

    /// Scrolls so that the selection is within `height` visible rows.
    pub fn scroll_to_selection(&mut self, height: usize) {
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + height {
            self.offset = self.cursor + 1 - height.max(1);
        }
    }

    /// The rows are now `ids`: the selection kept on the same row, else at the same place.
    pub fn select_among(&mut self, ids: &[RowId]) {
        let position = self
            .selected
            .as_ref()
            .and_then(|id| ids.iter().position(|r| r == id));
        self.cursor = match position {
            Some(p) => p,
            None => self.cursor.min(ids.len().saturating_sub(1)),
        };
        self.selected = ids.get(self.cursor).cloned();
    }
}

/// What the bottom line is collecting, if anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    None,
    Filter,
    Command(String),
}

/// An action the user has asked for and not yet confirmed.
#[derive(Clone, Debug, PartialEq)]
pub struct Unconfirmed {
    pub verb: Verb,
    pub targets: Vec<(ClusterId, ObjectKey)>,
    /// What would be sent and what is refused, as planned when the confirmation opened.
    pub tally: crate::actions::Tally,
    /// How the one door said it is confirmed: `y`, or the count typed.
    pub confirmation: crate::actions::Confirmation,
    /// Suspend: the reason being typed.
    pub reason: String,
    /// Above the threshold: the number of targets, typed.
    pub typed: String,
    pub stage: Stage,
    /// Approving a proposal: it is sent with the proposal's own intent (its token, reason and
    /// suspender), and only if planned again it is still what was proposed.
    pub proposal: Option<Box<crate::proposals::Proposal>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Suspend asks why first.
    Reason,
    /// Enter (or `y`) confirms.
    Yes,
    /// Typing the number of targets confirms.
    Count,
}

/// One action on its way, target by target.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub id: u64,
    pub verb: Verb,
    pub token: String,
    pub reason: Option<String>,
    pub rows: Vec<RunRow>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    pub cluster: ClusterId,
    pub key: ObjectKey,
    pub state: RunState,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RunState {
    Sending,
    /// Accepted; waiting for the controller to handle the token (seen in the watch).
    Requested,
    /// The controller handled it.
    Handled,
    Ended(Outcome),
}

impl RunState {
    /// Whether a retry should send it again.
    pub fn failed(&self) -> bool {
        matches!(self, RunState::Ended(o) if !o.is_done() && !matches!(o, Outcome::Refused(_)))
    }
}

/// Fetched on demand for the detail view.
#[derive(Clone, Debug, PartialEq)]
pub enum Fetched {
    Loading(&'static str),
    Events(Vec<ObjectEvent>),
    Yaml(String),
    /// Its last runs, as its controller records them.
    Runs(crate::fleet::runs::Runs),
    /// What broke inside, folded over the clusters read.
    Workloads(Box<crate::fleet::workload::fold::Folded>),
    /// Where an object comes from, its copies' chains folded.
    Trace(Box<crate::fleet::trace::Trace>),
    /// A tree, the clusters' folded into one.
    Tree(Box<crate::fleet::tree::Tree>),
    Failed(&'static str, String),
}

/// The clusters a scope covers, in index order.
pub fn clusters_in(index: &Index, scope: ListScope) -> Vec<(ClusterId, &ClusterEntry)> {
    match scope {
        ListScope::Fleet => index.entries().collect(),
        ListScope::Workspace(w) => index
            .workspace(w)
            .map(|ws| {
                ws.clusters
                    .iter()
                    .filter_map(|id| Some((*id, index.cluster(*id)?)))
                    .collect()
            })
            .unwrap_or_default(),
        ListScope::Cluster(id) => index.cluster(id).map(|c| vec![(id, c)]).unwrap_or_default(),
    }
}
