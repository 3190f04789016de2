//! Everything a key can do, as one typed enum. The config names actions by these snake_case names;
//! the help screen and the footer describe them with `describe`.

use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Quit,
    Help,
    Command,
    Filter,
    Back,
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    Open,
    FailingOnly,
    SuspendedOnly,
    SortNext,
    SortReverse,
    Triage,
    Rollout,
    AllObjects,
    Expand,
    RootCauses,
    Map,
    MapMode,
    Left,
    Right,
    Events,
    Yaml,
    Runs,
    Drift,
    Workloads,
    Trace,
    Tree,
    Mark,
    Suspend,
    Resume,
    Reconcile,
    ReconcileWithSource,
    Force,
    Reset,
    Halt,
    ResumeHalted,
    Retry,
    Approve,
    Reject,
}

impl Action {
    pub const ALL: [Action; 44] = [
        Action::Quit,
        Action::Help,
        Action::Command,
        Action::Filter,
        Action::Back,
        Action::Up,
        Action::Down,
        Action::Top,
        Action::Bottom,
        Action::PageUp,
        Action::PageDown,
        Action::Open,
        Action::FailingOnly,
        Action::SuspendedOnly,
        Action::SortNext,
        Action::SortReverse,
        Action::Triage,
        Action::Rollout,
        Action::AllObjects,
        Action::Expand,
        Action::RootCauses,
        Action::Map,
        Action::MapMode,
        Action::Left,
        Action::Right,
        Action::Events,
        Action::Yaml,
        Action::Runs,
        Action::Drift,
        Action::Workloads,
        Action::Trace,
        Action::Tree,
        Action::Mark,
        Action::Suspend,
        Action::Resume,
        Action::Reconcile,
        Action::ReconcileWithSource,
        Action::Force,
        Action::Reset,
        Action::Halt,
        Action::ResumeHalted,
        Action::Retry,
        Action::Approve,
        Action::Reject,
    ];

    /// The name used in the config file.
    pub fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Command => "command",
            Action::Filter => "filter",
            Action::Back => "back",
            Action::Up => "up",
            Action::Down => "down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::PageUp => "page_up",
            Action::PageDown => "page_down",
            Action::Open => "open",
            Action::FailingOnly => "failing_only",
            Action::SuspendedOnly => "suspended_only",
            Action::SortNext => "sort_next",
            Action::SortReverse => "sort_reverse",
            Action::Triage => "triage",
            Action::Rollout => "rollout",
            Action::AllObjects => "all_objects",
            Action::Expand => "expand",
            Action::RootCauses => "root_causes",
            Action::Map => "map",
            Action::MapMode => "map_mode",
            Action::Left => "left",
            Action::Right => "right",
            Action::Events => "events",
            Action::Yaml => "yaml",
            Action::Runs => "runs",
            Action::Drift => "drift",
            Action::Workloads => "workloads",
            Action::Trace => "trace",
            Action::Tree => "tree",
            Action::Mark => "mark",
            Action::Suspend => "suspend",
            Action::Resume => "resume",
            Action::Reconcile => "reconcile",
            Action::ReconcileWithSource => "reconcile_with_source",
            Action::Force => "force",
            Action::Reset => "reset",
            Action::Halt => "halt",
            Action::ResumeHalted => "resume_halted",
            Action::Retry => "retry",
            Action::Approve => "approve",
            Action::Reject => "reject",
        }
    }

    /// The verb this key starts, for the action keys.
    pub fn verb(self) -> Option<crate::fleet::verbs::Verb> {
        use crate::fleet::verbs::Verb;
        Some(match self {
            Action::Suspend => Verb::Suspend,
            Action::Resume => Verb::Resume,
            Action::Reconcile => Verb::Reconcile,
            Action::ReconcileWithSource => Verb::ReconcileWithSource,
            Action::Force => Verb::Force,
            Action::Reset => Verb::Reset,
            _ => return None,
        })
    }

    /// What the help screen says it does.
    pub fn describe(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "this help",
            Action::Command => {
                "commands: :ks :hr :all :triage :rollout :history :ws NAME :cluster NAME :q"
            }
            Action::Filter => "fuzzy filter the rows",
            Action::Back => "back (clear the filter first)",
            Action::Up => "up",
            Action::Down => "down",
            Action::Top => "first row",
            Action::Bottom => "last row",
            Action::PageUp => "page up",
            Action::PageDown => "page down",
            Action::Open => "open the selected row",
            Action::FailingOnly => "toggle: failing only",
            Action::SuspendedOnly => "toggle: suspended only",
            Action::SortNext => "sort by the next column",
            Action::SortReverse => "reverse the sort",
            Action::Triage => "triage: everything not ready, grouped",
            Action::Rollout => "rollout: which revision runs where, who is behind or stuck",
            Action::AllObjects => "every Flux object in this scope",
            Action::Expand => "expand or collapse a group",
            Action::RootCauses => "toggle: root causes first / every failure alike",
            Action::Map => "move between the workspaces and the fleet map",
            Action::MapMode => "the fleet map shows: health, a rollout, freshness",
            Action::Left => "on the map: the cluster before",
            Action::Right => "on the map: the next cluster",
            Action::Events => "events of this object",
            Action::Yaml => "YAML of this object",
            Action::Runs => "its last runs, as its controller records them (status.history)",
            Action::Drift => {
                "its copies that applied something other than most on their revision, and live drift"
            }
            Action::Workloads => {
                "what broke inside: its workloads' verdicts, pods, events and log tails (a group: on all its clusters, folded)"
            }
            Action::Trace => {
                "where it comes from on every cluster: the Kustomization or HelmRelease that applied it, its source and revision, and the copies that differ (of the workload shown first, once w has read them)"
            }
            Action::Tree => {
                "a Kustomization's or HelmRelease's tree on every cluster, as flux tree draws it: the nodes some clusters lack, and how many hold each ready"
            }
            Action::Mark => {
                "mark or unmark (:mark every row shown, :mark stuck the stuck ones, :unmark)"
            }
            Action::Suspend => {
                "suspend the marked objects, or the selected one (a group: its members)"
            }
            Action::Resume => "resume (and reconcile) the marked or selected objects",
            Action::Reconcile => "reconcile the marked or selected objects",
            Action::ReconcileWithSource => "reconcile their sources first, then them",
            Action::Force => "HelmRelease: force a one-off install or upgrade",
            Action::Reset => "HelmRelease: reset the failure counters",
            Action::Halt => {
                "halt the rollout: suspend it where the newest revision has not arrived yet"
            }
            Action::ResumeHalted => "resume exactly what halting this rollout suspended",
            Action::Retry => "run the last action again on the targets it did not reach",
            Action::Approve => {
                "approve the selected proposal: planned again on the fleet, then confirmed"
            }
            Action::Reject => "reject the selected proposal, saying why",
        }
    }

    /// A short label for the footer; None for actions the footer leaves to the help screen.
    pub fn hint(self) -> Option<&'static str> {
        Some(match self {
            Action::Help => "help",
            Action::Command => "cmd",
            Action::Filter => "filter",
            Action::Back => "back",
            Action::Open => "open",
            Action::FailingOnly => "failing",
            Action::Triage => "triage",
            Action::Rollout => "rollout",
            Action::AllObjects => "all",
            Action::Expand => "expand",
            Action::RootCauses => "roots",
            Action::Map => "map",
            Action::MapMode => "mode",
            Action::Events => "events",
            Action::Yaml => "yaml",
            Action::Runs => "runs",
            Action::Workloads => "workloads",
            Action::Trace => "trace",
            Action::Tree => "tree",
            Action::Mark => "mark",
            Action::Suspend => "suspend",
            Action::Resume => "resume",
            Action::Reconcile => "reconcile",
            Action::Retry => "retry",
            Action::Halt => "halt",
            Action::Approve => "approve",
            Action::Reject => "reject",
            Action::Quit => "quit",
            _ => return None,
        })
    }
}
