//! What the TUI knows: the index, where the user is (a stack of screens, each with its own
//! selection, filter and sort), what is being typed, and the warnings to show.

use std::collections::HashSet;

use jiff::Timestamp;

use super::keymap::{Context, Keymap};
use super::rows::Rows;
use crate::fleet::actions::{Outcome, Verb};
use crate::fleet::{ClusterId, FluxKind, Index, ObjectEvent, ObjectKey, WorkspaceId};

/// Where a list of objects is drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Fleet,
    Workspace(WorkspaceId),
    Cluster(ClusterId),
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
        scope: Scope,
        kind: Option<FluxKind>,
    },
    /// Everything not ready in the scope, identical failures grouped.
    Triage { scope: Scope },
    /// Which revision runs where: one row per deployed thing in the scope (of one kind or all).
    Rollout {
        scope: Scope,
        kind: Option<FluxKind>,
    },
    /// One deployed thing on every cluster of the scope, ring by ring.
    Matrix { scope: Scope, key: ObjectKey },
    /// One object.
    Detail { cluster: ClusterId, key: ObjectKey },
    /// The keys of the view below.
    Help { of: Context },
    /// The targets of the last action and how each one ended.
    Results,
    /// The audit journal, newest first.
    Audit,
    /// What changed in the scope since a time, newest first (the collectors' history).
    History { scope: Scope, since: Timestamp },
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
            View::Audit | View::History { .. } => Context::Global,
        }
    }

    /// The scope a `:ks` or `:triage` typed here applies to.
    pub fn scope(&self) -> Scope {
        match self {
            View::Workspace(w) => Scope::Workspace(*w),
            View::Cluster(c) => Scope::Cluster(*c),
            View::Detail { cluster, .. } => Scope::Cluster(*cluster),
            View::Objects { scope, .. }
            | View::Triage { scope }
            | View::Rollout { scope, .. }
            | View::Matrix { scope, .. }
            | View::History { scope, .. } => *scope,
            View::Fleet | View::Help { .. } | View::Results | View::Audit => Scope::Fleet,
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
            | View::History { .. } => &[],
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
pub struct Confirm {
    pub verb: Verb,
    pub targets: Vec<(ClusterId, ObjectKey)>,
    /// What would be sent and what is refused, as planned when the confirmation opened.
    pub tally: crate::actions::Tally,
    /// Suspend: the reason being typed.
    pub reason: String,
    /// Above the threshold: the number of targets, typed.
    pub typed: String,
    pub stage: Stage,
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
    Failed(&'static str, String),
}

pub struct Model {
    pub index: Index,
    pub keymap: Keymap,
    pub stack: Vec<Screen>,
    pub input: Input,
    /// Config, theme and keymap problems: shown, never fatal.
    pub warnings: Vec<String>,
    /// A one-off message (an unknown command, a cluster not found).
    pub flash: Option<String>,
    pub read_only: bool,
    /// Why writes are refused even with --write (guardrails that cannot be read exactly).
    pub writes_refused: Option<String>,
    /// The clock of the last render; pinned in tests.
    pub now: Timestamp,
    /// Rows of the top screen, rebuilt when the data or the screen changed.
    pub rows: Rows,
    pub rows_stale: bool,
    /// Rows that fit in the body, known from the last render (for page up / down).
    pub page: usize,
    /// Width and height of the fleet map, known from the last render (for moving over it).
    pub map_room: (u16, u16),
    pub fetched: Option<Fetched>,
    /// Objects marked as the targets of the next action.
    pub marks: HashSet<(ClusterId, ObjectKey)>,
    /// An action waiting for the user's confirmation.
    pub confirm: Option<Confirm>,
    /// The plugins of the config, as the keymap numbers them.
    pub plugins: Vec<super::plugins::Plugin>,
    /// A plugin run waiting for the user's confirmation.
    pub plugin_confirm: Option<super::plugins::Launch>,
    /// The last action sent, target by target.
    pub run: Option<Run>,
    /// The audit journal's last lines, newest first (read when `:audit` opens).
    pub audit: Option<Result<Vec<String>, String>>,
    /// The history read when `:history` opened, oldest first.
    pub history: Option<Result<Vec<crate::fleet::history::Change>, String>>,
    /// First line of the fetched pane shown.
    pub fetched_scroll: usize,
    /// Which clusters' modes allow writes (None: every cluster, as in tests).
    pub permissions: Option<crate::config::Permissions>,
    /// How many clusters of the fleet are writable, of how many (see [`Model::count_writable`]).
    pub writable: (usize, usize),
    /// Confirmation threshold, bulk limit and deny rules.
    pub actions: crate::config::Actions,
    /// Rings and stuck rules for the rollout view.
    pub rollout: crate::config::Rollout,
    /// The rollout view's spreads, recomputed for what changed.
    pub spreads: super::spreads::SpreadCache,
    /// Triage's part of each cluster, worked out again for the clusters that changed.
    pub triage: super::triage::TriageCache,
    /// The local user, recorded as the suspender.
    pub user: String,
    /// The last reconcile token written: the next one must differ.
    pub last_token: Option<Timestamp>,
    pub quit: bool,
}

impl Model {
    /// The cluster the user looks into: the one of the cluster or detail view on top.
    pub fn opened_cluster(&self) -> Option<ClusterId> {
        match &self.screen().view {
            View::Cluster(c) | View::Detail { cluster: c, .. } => Some(*c),
            _ => None,
        }
    }

    pub fn new(index: Index, keymap: Keymap, warnings: Vec<String>, now: Timestamp) -> Model {
        Model {
            index,
            keymap,
            stack: vec![Screen::new(View::Fleet)],
            input: Input::None,
            warnings,
            flash: None,
            read_only: false,
            writes_refused: None,
            now,
            rows: Rows::default(),
            rows_stale: true,
            page: 20,
            map_room: (0, 0),
            fetched: None,
            marks: HashSet::new(),
            confirm: None,
            plugins: Vec::new(),
            plugin_confirm: None,
            run: None,
            audit: None,
            history: None,
            fetched_scroll: 0,
            permissions: None,
            writable: (0, 0),
            actions: crate::config::Config::defaults().actions,
            rollout: crate::config::Config::defaults().rollout,
            spreads: Default::default(),
            triage: Default::default(),
            user: "unknown".into(),
            last_token: None,
            quit: false,
        }
    }

    /// Counts the writable clusters again (when clusters join or leave).
    pub fn count_writable(&mut self) {
        let Some(permissions) = &self.permissions else {
            return;
        };
        let clusters = self.index.clusters().iter().filter(|c| !c.retired);
        let (writable, all) = clusters.fold((0, 0), |(w, n), c| {
            (w + usize::from(permissions.writable(&c.info)), n + 1)
        });
        self.writable = (writable, all);
    }

    pub fn screen(&self) -> &Screen {
        // The stack never empties: `back` stops at the fleet view.
        &self.stack[self.stack.len() - 1]
    }

    pub fn screen_mut(&mut self) -> &mut Screen {
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    /// Opens `view` on top of the current one.
    pub fn push(&mut self, view: View) {
        self.stack.push(Screen::new(view));
        self.set_fetched(None);
        self.rows_stale = true;
    }

    /// Replaces what the detail view shows below the facts, from its first line.
    pub fn set_fetched(&mut self, fetched: Option<Fetched>) {
        self.fetched = fetched;
        self.fetched_scroll = 0;
    }

    /// Keeps the fetched pane's scroll within what there is to show (`max`: its last first line).
    pub fn clamp_fetched(&mut self, max: usize) {
        self.fetched_scroll = self.fetched_scroll.min(max);
    }

    /// Scrolls the top screen so that its selection is within `height` visible rows.
    pub fn scroll(&mut self, height: usize) {
        self.page = height.max(1);
        let screen = self.screen_mut();
        if screen.cursor < screen.offset {
            screen.offset = screen.cursor;
        } else if screen.cursor >= screen.offset + height {
            screen.offset = screen.cursor + 1 - height.max(1);
        }
    }

    /// Rebuilds the top screen's rows if needed and keeps the selection on the same thing.
    pub fn refresh_rows(&mut self) {
        if !self.rows_stale {
            return;
        }
        self.rows_stale = false;
        let rows = match (&self.screen().view, &self.run) {
            (View::Results, Some(run)) => super::rows::Rows {
                ids: run
                    .rows
                    .iter()
                    .map(|r| RowId::Object(r.cluster, r.key.clone()))
                    .collect(),
                ..Default::default()
            },
            _ => super::rows::build(
                &self.index,
                &self.stack[self.stack.len() - 1],
                super::rows::With {
                    rollout: &self.rollout,
                    now: self.now,
                    spreads: &mut self.spreads,
                    triage: &mut self.triage,
                },
            ),
        };
        let screen = self.screen_mut();
        let position = screen
            .selected
            .as_ref()
            .and_then(|id| rows.ids.iter().position(|r| r == id));
        screen.cursor = match position {
            Some(p) => p,
            None => screen.cursor.min(rows.ids.len().saturating_sub(1)),
        };
        screen.selected = rows.ids.get(screen.cursor).cloned();
        self.rows = rows;
    }
}
