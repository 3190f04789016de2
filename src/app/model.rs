//! What the TUI knows: the index, where the user is (a stack of screens, each with its own
//! selection, filter and sort), what is being typed, and the warnings to show.

use jiff::Timestamp;

use super::keymap::Keymap;
use super::marks::MarkedObjects;
pub use super::reads::{AskedDrift, Audit, History, Proposals, Reads};
use super::rows::Rows;
pub use super::settings::{Fit, Settings};
pub use super::view::{
    Fetched, Input, ListScope, RowId, Run, RunRow, RunState, Screen, SortBy, Stage, Unconfirmed,
    View,
};
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterId, Index, ObjectKey};

/// Changes a session keeps of what it saw (about 20 MiB at most).
pub const RECORDED: usize = 100_000;

/// Everything the TUI knows, by concern: the fleet (`index`), what the user looks at (`stack`,
/// `input`, the map's mode), what this session may do (`settings`), what was read on demand
/// (`reads`), the action in hand (`marks`, `confirm`, `run`), caches of what is derived from
/// the index, and what the last frame measured (`fit`).
pub struct Model {
    /// The fleet as the events applied by [`Model::apply`] left it.
    index: Index,
    /// The keys of each view, and the plugins bound to keys.
    keymap: Keymap,
    /// The screens open, the fleet view first: changed by [`Model::push`], [`Model::back`],
    /// [`Model::home`].
    stack: Vec<Screen>,
    /// What the bottom line takes keys for: set through [`Model::prompt`],
    /// [`Model::start_filter`], [`Model::close_input`].
    input: Input,
    /// Config, theme and keymap problems: shown, never fatal.
    warnings: Vec<String>,
    /// A one-off message (an unknown command, a cluster not found): said through [`Model::say`],
    /// cleared by [`Model::quiet`], read by [`Model::flash`].
    flash: Option<String>,
    /// The clock of the last render; pinned in tests.
    now: Timestamp,
    /// What this session may do and how: given by [`Model::with_settings`], read through
    /// [`Model::settings`].
    settings: Settings,
    /// What was read when asked: read through [`Model::reads`], changed through
    /// [`Model::reads_mut`] and what [`Reads`] does.
    reads: Reads,
    /// What the last frame measured (the page size for page up / down, the map's room for
    /// moving over it), applied by [`Model::apply_fit`].
    fit: Fit,
    /// Rows of the top screen, rebuilt by [`Model::refresh_rows`] when the data or the screen
    /// changed.
    rows: Rows,
    /// The rows are made again before the next frame: set through [`Model::rows_changed`].
    rows_stale: bool,
    /// What the fleet map shows of each cluster.
    map_mode: super::view::MapMode,
    /// The rollout last selected in the rollout view: what the map's rollout mode follows.
    map_rollout: Option<ObjectKey>,
    /// What this session saw change: the history where no collector keeps one.
    recorded: crate::fleet::history::recorder::Recorder,
    /// Objects marked as the targets of the next action: changed through
    /// [`Model::marks_mut`] and what [`MarkedObjects`] does.
    marks: MarkedObjects,
    /// An action waiting for the user's confirmation.
    confirm: Option<Unconfirmed>,
    /// A plugin run waiting for the user's confirmation.
    plugin_confirm: Option<super::plugins::Launch>,
    /// The last action sent, target by target.
    run: Option<Run>,
    /// The rollout view's spreads, recomputed for what changed.
    spreads: super::spreads::SpreadCache,
    /// Triage's part of each cluster, worked out again for the clusters that changed.
    triage: super::triage::TriageCache,
    /// The last reconcile token written: the next one must differ.
    last_token: Option<Timestamp>,
    /// The user asked to leave: set through [`Model::quit`], read by [`Model::quitting`].
    quit: bool,
}

impl Model {
    /// How many screens are open (the fleet view is the first).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// The screens open, the fleet view first.
    pub fn screens(&self) -> &[Screen] {
        &self.stack
    }

    /// Back to the fleet view, every other screen closed.
    pub fn home(&mut self) {
        self.stack.truncate(1);
        self.rows_stale = true;
    }

    /// What the fleet map shows of each cluster.
    pub fn map_mode(&self) -> super::view::MapMode {
        self.map_mode
    }

    /// The map shows the next of what it can show of each cluster.
    pub fn next_map_mode(&mut self) -> super::view::MapMode {
        self.map_mode = self.map_mode.next();
        self.map_mode
    }

    /// The rollout the map's rollout mode follows: the one last selected in the rollout view.
    pub fn map_rollout(&self) -> Option<&ObjectKey> {
        self.map_rollout.as_ref()
    }

    /// The map's rollout mode follows `rollout` from now on.
    pub fn follow_rollout(&mut self, rollout: ObjectKey) {
        self.map_rollout = Some(rollout);
    }

    /// The clock of the last frame (pinned in tests).
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The clock moves on to `now`, before a frame is drawn.
    pub fn tick(&mut self, now: Timestamp) {
        self.now = now;
    }

    /// What the bottom line takes keys for.
    pub fn input(&self) -> &Input {
        &self.input
    }

    /// The `:` prompt, holding `line`.
    pub fn prompt(&mut self, line: String) {
        self.input = Input::Command(line);
    }

    /// Keys go to the view's filter.
    pub fn start_filter(&mut self) {
        self.input = Input::Filter;
    }

    /// Keys go to the view again.
    pub fn close_input(&mut self) {
        self.input = Input::None;
    }

    /// The action waiting for the user's confirmation.
    pub fn confirming(&self) -> Option<&Unconfirmed> {
        self.confirm.as_ref()
    }

    /// `confirm` waits for the user: keys go to it until it is sent or cancelled.
    pub fn ask(&mut self, confirm: Unconfirmed) {
        self.confirm = Some(confirm);
    }

    /// The action that waited, no longer waiting.
    pub fn take_confirm(&mut self) -> Option<Unconfirmed> {
        self.confirm.take()
    }

    /// The last action sent, target by target.
    pub fn run(&self) -> Option<&Run> {
        self.run.as_ref()
    }

    /// The last action sent, its targets' states moving as their outcomes come.
    pub fn run_mut(&mut self) -> Option<&mut Run> {
        self.run.as_mut()
    }

    /// `run` is sent: the last action from now on.
    pub fn sent(&mut self, run: Run) {
        self.run = Some(run);
    }

    /// A plugin run waiting for the user's confirmation.
    pub fn plugin_waiting(&self) -> Option<&super::plugins::Launch> {
        self.plugin_confirm.as_ref()
    }

    /// `launch` waits for the user's confirmation.
    pub fn confirm_plugin(&mut self, launch: super::plugins::Launch) {
        self.plugin_confirm = Some(launch);
    }

    /// The plugin run that waited, no longer waiting.
    pub fn take_plugin(&mut self) -> Option<super::plugins::Launch> {
        self.plugin_confirm.take()
    }

    /// A reconcile token for now that differs from every one this session wrote (the
    /// controller sees no new request in a token it handled already).
    pub fn fresh_token(&mut self) -> Timestamp {
        let mut at = self.now;
        if let Some(last) = self.last_token
            && at <= last
        {
            at = last + jiff::SignedDuration::from_nanos(1);
        }
        self.last_token = Some(at);
        at
    }

    /// What the rows are made of changed (the data, the filter, the sort): they are made again
    /// before the next frame.
    pub fn rows_changed(&mut self) {
        self.rows_stale = true;
    }

    /// The user asked to leave: the loop ends after this change.
    pub fn quit(&mut self) {
        self.quit = true;
    }

    /// Whether the user asked to leave.
    pub fn quitting(&self) -> bool {
        self.quit
    }

    /// Says `text` on the status line until the next key: the one way a change tells the user
    /// what it did, or why it did nothing.
    pub fn say(&mut self, text: impl Into<String>) {
        self.flash = Some(text.into());
    }

    /// Clears what was said.
    pub fn quiet(&mut self) {
        self.flash = None;
    }

    /// What is said on the status line, if anything.
    pub fn flash(&self) -> Option<&str> {
        self.flash.as_deref()
    }

    /// What was said, cleared: read once.
    pub fn take_flash(&mut self) -> Option<String> {
        self.flash.take()
    }

    /// The fleet as the events applied left it.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The fleet, the model done with.
    pub fn into_index(self) -> Index {
        self.index
    }

    /// The fleet's `events` applied: to the index, to what this session saw change and to the
    /// rollout spreads they touch; the writable clusters counted again when one joined or left,
    /// and the rows made again.
    pub fn apply(&mut self, events: Vec<Event>) {
        let mut joined_or_left = false;
        for event in events {
            joined_or_left |= matches!(event.change, Change::Added(_) | Change::Retired);
            self.spreads.touched(&event.change);
            self.recorded.note(&self.index, &event);
            self.index.apply(event);
        }
        if joined_or_left {
            self.count_writable();
        }
        self.rows_stale = true;
    }

    /// The caches of what is derived from the index (the rollout spreads, triage's part of each
    /// cluster) emptied: worked out afresh for the next rows, as when their view first opens.
    pub fn clear_caches(&mut self) {
        self.spreads = Default::default();
        self.triage = Default::default();
    }

    /// What this session saw change: the history where no collector keeps one.
    pub fn recorded(&self) -> &crate::fleet::history::recorder::Recorder {
        &self.recorded
    }

    /// The keys of each view, and the plugins bound to keys.
    pub fn keymap(&self) -> &Keymap {
        &self.keymap
    }

    /// Config, theme and keymap problems, to show.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What the last frame measured.
    pub fn fit(&self) -> Fit {
        self.fit
    }

    /// Rows of the top screen, as [`Model::refresh_rows`] last made them.
    pub fn rows(&self) -> &Rows {
        &self.rows
    }

    /// Objects marked as the targets of the next action.
    pub fn marks(&self) -> &MarkedObjects {
        &self.marks
    }

    /// Objects marked as the targets of the next action, to change through what
    /// [`MarkedObjects`] does.
    pub fn marks_mut(&mut self) -> &mut MarkedObjects {
        &mut self.marks
    }

    /// What was read when asked.
    pub fn reads(&self) -> &Reads {
        &self.reads
    }

    /// What was read when asked, to change through what [`Reads`] does.
    pub fn reads_mut(&mut self) -> &mut Reads {
        &mut self.reads
    }

    /// The cluster the user looks into: the one of the cluster or detail view on top.
    pub fn opened_cluster(&self) -> Option<ClusterId> {
        match &self.screen().view {
            View::Cluster(c) | View::Detail { cluster: c, .. } => Some(*c),
            _ => None,
        }
    }

    /// The model of a session on the fleet view, at `now`, with the default settings (see
    /// [`Model::with_settings`]).
    pub fn new(index: Index, keymap: Keymap, warnings: Vec<String>, now: Timestamp) -> Model {
        Model {
            index,
            keymap,
            stack: vec![Screen::new(View::Fleet)],
            input: Input::None,
            warnings,
            flash: None,
            now,
            settings: Settings::default(),
            reads: Reads::default(),
            fit: Fit {
                body_rows: 20,
                ..Fit::default()
            },
            rows: Rows::default(),
            rows_stale: true,
            map_mode: super::view::MapMode::default(),
            map_rollout: None,
            recorded: crate::fleet::history::recorder::Recorder::new(RECORDED),
            marks: Default::default(),
            confirm: None,
            plugin_confirm: None,
            run: None,
            spreads: Default::default(),
            triage: Default::default(),
            last_token: None,
            quit: false,
        }
    }

    /// The model of a session that may do what `settings` say, the writable clusters counted.
    pub fn with_settings(mut self, settings: Settings) -> Model {
        self.settings = settings;
        self.count_writable();
        self
    }

    /// What this session may do and how.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Counts the writable clusters again (when clusters join or leave).
    fn count_writable(&mut self) {
        let Some(permissions) = &self.settings.permissions else {
            return;
        };
        let clusters = self.index.clusters().iter().filter(|c| !c.retired);
        let (writable, all) = clusters.fold((0, 0), |(w, n), c| {
            (w + usize::from(permissions.writable(&c.info)), n + 1)
        });
        self.settings.writable = (writable, all);
    }

    pub fn screen(&self) -> &Screen {
        // The stack never empties: `back` stops at the fleet view.
        &self.stack[self.stack.len() - 1]
    }

    pub fn screen_mut(&mut self) -> &mut Screen {
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    /// Opens `view` on top of the current one, keeping what the current one read (a trace, a
    /// tree) to show again when the user comes back.
    pub fn push_keeping(&mut self, view: View) {
        let left = self.screen().view.clone();
        self.reads.park(left);
        self.push(view);
    }

    /// Opens `view` on top of the current one.
    pub fn push(&mut self, view: View) {
        self.stack.push(Screen::new(view));
        self.set_fetched(None);
        self.rows_stale = true;
    }

    /// Replaces what the detail view shows below the facts, from its first line.
    pub fn set_fetched(&mut self, fetched: Option<Fetched>) {
        self.reads.show(fetched);
    }

    /// What the view measured of the screen (see [`Fit`]), applied: kept (the page size, the
    /// map's room), the selection scrolled into the page, the fetched pane's scroll bounded.
    pub fn apply_fit(&mut self, fit: Fit) {
        self.fit = Fit {
            body_rows: fit.body_rows.max(1),
            ..fit
        };
        let page = self.fit.body_rows;
        self.screen_mut().scroll_to_selection(page);
        self.reads.clamp_scroll(fit.fetched_max_scroll);
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
                    rollout: &self.settings.rollout,
                    now: self.now,
                    spreads: &mut self.spreads,
                    asked: self
                        .reads
                        .drift()
                        .and_then(|a| a.of(&self.stack[self.stack.len() - 1].view)),
                    triage: &mut self.triage,
                },
            ),
        };
        self.screen_mut().select_among(&rows.ids);
        self.rows = rows;
    }
}

impl Model {
    /// Opens the help of the view on top, or closes the help if it is on top.
    pub fn toggle_help(&mut self) {
        let view = &self.screen().view;
        if let View::Help { .. } = view {
            self.back();
        } else {
            let of = view.context();
            self.push(View::Help { of });
        }
    }

    /// Clears the top screen's filter, else goes back to the screen below.
    pub fn back(&mut self) {
        if !self.screen().filter.is_empty() {
            self.screen_mut().filter.clear();
        } else if self.stack.len() > 1 {
            self.stack.pop();
            let view = self.screen().view.clone();
            self.reads.back_to(&view);
        }
        self.rows_stale = true;
    }
}
