//! `update(model, msg) → effects`: every key and every batch of fleet events goes through here.
//! No terminal, no channels, no clock: tests drive it with messages and look at the model.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::flux_action::{acted, ask, confirming, halt, mark, notice_handled, retry};
use super::key_action::Action;
use super::keymap::{Bound, Key};
pub use super::message::{Effect, Msg};
use super::model::Model;
use super::view::MapMode;
use super::view::{Fetched, Input, RowId, View};

pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    let before = model.opened_cluster();
    let mut effects = step(model, msg);
    // The rollout the map's rollout mode follows: the one last selected or opened.
    let followed = match (&model.screen().view, &model.screen().selected) {
        (View::Matrix { key, .. }, _) | (View::Rollout { .. }, Some(RowId::Rollout(key))) => {
            Some(key.clone())
        }
        _ => None,
    };
    if let Some(followed) = followed {
        model.follow_rollout(followed);
    }
    let after = model.opened_cluster();
    if after != before
        && let Some(cluster) = after.and_then(|c| model.index().cluster(c))
    {
        effects.push(Effect::Open(cluster.info.clone()));
    }
    effects
}

fn step(model: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Fleet(events) => {
            model.apply(events);
            notice_handled(model)
        }
        Msg::Acted {
            run,
            cluster,
            key,
            outcome,
        } => acted(model, run, cluster, key, outcome),
        Msg::Audit(lines) => {
            model.reads_mut().audit_read(lines);
            Vec::new()
        }
        Msg::Proposals(list) => {
            model.reads_mut().proposals_read(list);
            Vec::new()
        }
        Msg::Decided(result) => super::proposal_action::decided(model, result),
        Msg::Fetched {
            cluster,
            key,
            fetched,
        } => {
            // An answer for an object the user has left since is dropped.
            if model.screen().view == (View::Detail { cluster, key }) {
                model.set_fetched(Some(fetched));
            }
            Vec::new()
        }
        Msg::Workloads {
            key,
            clusters,
            folded,
        } => {
            super::evidence::arrived(model, key, clusters, folded);
            Vec::new()
        }
        Msg::Traced { asked, trace } => {
            super::trace::arrived(model, asked, trace);
            Vec::new()
        }
        Msg::Grown { root, tree } => {
            super::trace::grown(model, root, tree);
            Vec::new()
        }
        Msg::Drift { scope, key, drift } => {
            super::drift::arrived(model, (scope, key), drift);
            Vec::new()
        }
        Msg::Key(key) if key.kind == KeyEventKind::Release => Vec::new(),
        Msg::History(changes) => {
            // No collector keeps one: what this session saw itself.
            let own = matches!(changes, Err(crate::fleet::read::ReadError::NoHistory));
            let changes = match changes {
                Err(crate::fleet::read::ReadError::NoHistory) => {
                    let since = model.reads().history_since();
                    Ok(model
                        .recorded()
                        .since(since.unwrap_or(jiff::Timestamp::UNIX_EPOCH)))
                }
                other => other,
            };
            if let (View::Matrix { key, .. }, Ok(history)) = (&model.screen().view, &changes) {
                let deliveries = super::delivered::of(model, key, history);
                // Read for the ring headers' figures: not kept once they are worked out (a week
                // of a large fleet's changes); `:history` reads its own.
                model.reads_mut().delivered(deliveries, own);
                model.rows_changed();
                return Vec::new();
            }
            model.reads_mut().history_read(changes, own);
            Vec::new()
        }
        Msg::Plugin(ended) => {
            model.say(ended.describe());
            Vec::new()
        }
        Msg::Key(key) if model.confirming().is_some() => {
            model.quiet();
            confirming(model, &key)
        }
        Msg::Key(key) if model.plugin_waiting().is_some() => {
            model.quiet();
            plugin_confirming(model, &key)
        }
        Msg::Key(key) => {
            model.quiet();
            pressed(model, &key)
        }
    }
}

/// A key while a plugin waits for its confirmation: enter or `y` runs it, esc or `n` cancels.
fn plugin_confirming(model: &mut Model, key: &KeyEvent) -> Vec<Effect> {
    let launch = model.take_plugin();
    match (key.code, launch) {
        (KeyCode::Enter | KeyCode::Char('y'), Some(launch)) => {
            vec![Effect::Plugin(launch)]
        }
        (KeyCode::Esc | KeyCode::Char('n'), Some(launch)) => {
            model.say(format!("{} cancelled: nothing was run", launch.plugin));
            Vec::new()
        }
        (_, launch) => {
            if let Some(launch) = launch {
                model.confirm_plugin(launch);
            }
            Vec::new()
        }
    }
}

/// A key pressed: to the line being edited, else to its action or plugin in this view.
fn pressed(model: &mut Model, key: &KeyEvent) -> Vec<Effect> {
    // Typing goes to the line being edited.
    match model.input().clone() {
        Input::Filter => {
            edit_filter(model, key);
            return Vec::new();
        }
        Input::Command(line) => return super::prompt::edit_command(model, line, key),
        Input::None => {}
    }
    let context = model.screen().view.context();
    match model.keymap().bound(context, Key::from_event(key)) {
        Some(Bound::Action(action)) => act(model, action),
        Some(Bound::Plugin(i)) => run_plugin(model, i),
        None => {
            // A plugin whose program is missing has no key, but says why.
            let pressed = Key::from_event(key);
            let missing = model
                .settings()
                .plugins
                .iter()
                .find(|p| p.key == pressed && p.contexts.contains(&context))
                .and_then(|p| {
                    Some(format!(
                        "{}: {} is not on PATH",
                        p.name,
                        p.missing.as_ref()?
                    ))
                });
            match missing {
                Some(said) => model.say(said),
                None => model.quiet(),
            }
            Vec::new()
        }
    }
}

/// A plugin's key: planned on the selection, then confirmed where it asks, then run.
fn run_plugin(model: &mut Model, i: usize) -> Vec<Effect> {
    model.refresh_rows();
    let Some(plugin) = model.settings().plugins.get(i) else {
        return Vec::new();
    };
    match super::launch::plan(model, plugin) {
        Err(why) => {
            model.say(why.to_string());
            Vec::new()
        }
        Ok(launch) if plugin.confirm => {
            model.confirm_plugin(launch);
            Vec::new()
        }
        Ok(launch) => {
            if launch.background {
                model.say(format!("{} started", launch.describe()));
            }
            vec![Effect::Plugin(launch)]
        }
    }
}

fn edit_filter(model: &mut Model, key: &KeyEvent) {
    let screen = model.screen_mut();
    match key.code {
        KeyCode::Esc => {
            screen.filter.clear();
            model.close_input();
        }
        KeyCode::Enter => model.close_input(),
        KeyCode::Backspace => {
            screen.filter.pop();
        }
        KeyCode::Char(c) => screen.filter.push(c),
        _ => return,
    }
    model.rows_changed();
}

fn act(model: &mut Model, action: Action) -> Vec<Effect> {
    model.refresh_rows();
    let len = model.rows().ids.len();
    let page = model.fit().body_rows;
    let moved = |model: &mut Model, to: usize| {
        let selected = model.rows().ids.get(to).cloned();
        let screen = model.screen_mut();
        screen.cursor = to;
        screen.selected = selected;
    };
    let cursor = model.screen().cursor;
    // The detail view's arrows scroll its events or YAML once they are shown, and move through
    // the objects it links to before.
    // Where what was read is a list of items, the arrows pick one.
    if pick(model, action) {
        return Vec::new();
    }
    let scrolls = match model.screen().view {
        View::Detail { .. } => model.reads().fetched().is_some(),
        View::Audit
        | View::Proposals
        | View::History { .. }
        | View::Workloads { .. }
        | View::Trace(_)
        | View::Tree(_) => true,
        _ => false,
    };
    if scrolls && scroll_fetched(model, action) {
        return Vec::new();
    }
    if model.screen().view == View::Fleet && super::map::navigate(model, action) {
        return Vec::new();
    }
    match action {
        Action::Quit => model.quit(),
        Action::Help => model.toggle_help(),
        Action::Command => model.prompt(String::new()),
        Action::Filter => model.start_filter(),
        Action::Back => model.back(),
        Action::Up => moved(model, cursor.saturating_sub(1)),
        Action::Down => moved(model, (cursor + 1).min(len.saturating_sub(1))),
        Action::Top => moved(model, 0),
        Action::Bottom => moved(model, len.saturating_sub(1)),
        Action::PageUp => moved(model, cursor.saturating_sub(page)),
        Action::PageDown => moved(model, (cursor + page).min(len.saturating_sub(1))),
        Action::Open if matches!(model.screen().view, View::Trace(_) | View::Tree(_)) => {
            return super::trace::open_copy(model);
        }
        Action::Open => return open(model),
        Action::FailingOnly
        | Action::SuspendedOnly
        | Action::SortNext
        | Action::SortReverse
        | Action::RootCauses => rearrange(model, action),
        Action::Triage => {
            let scope = model.screen().view.scope();
            model.push(View::Triage { scope });
        }
        Action::Rollout => {
            let scope = model.screen().view.scope();
            model.push(View::Rollout { scope, kind: None });
        }
        Action::AllObjects => {
            let scope = model.screen().view.scope();
            model.push(View::Objects { scope, kind: None });
        }
        // The fleet map's own keys (see map::navigate).
        Action::Map | Action::Left | Action::Right => {}
        Action::MapMode => {
            if model.next_map_mode() == MapMode::Rollout && model.map_rollout().is_none() {
                model.say("the map follows the rollout selected in the rollout view (v): none yet");
            }
        }
        Action::Expand => {
            if let Some(RowId::Group(g)) = model.screen().selected.clone() {
                toggle(model, g);
            }
        }
        Action::Mark => mark(model),
        Action::Retry => retry(model),
        Action::Suspend
        | Action::Resume
        | Action::Reconcile
        | Action::ReconcileWithSource
        | Action::Force
        | Action::Reset => {
            if let Some(verb) = action.verb() {
                ask(model, verb);
            }
        }
        Action::Events | Action::Yaml | Action::Runs => return fetch(model, action),
        Action::Workloads => return super::evidence::ask(model),
        Action::Trace => return super::trace::ask(model),
        Action::Tree => return super::trace::tree(model),
        Action::Approve => return super::proposal_action::approve(model),
        Action::Reject if model.screen().view == View::Proposals => {
            model.prompt("reject ".into());
        }
        Action::Reject => {}
        Action::Halt => halt(model, false),
        Action::ResumeHalted => halt(model, true),
        Action::Drift => return super::drift::ask(model),
    }
    Vec::new()
}

/// The rows shown differently: failing or suspended only, sorted by the next column or the
/// other way, root causes grouped or flat.
fn rearrange(model: &mut Model, action: Action) {
    let s = model.screen_mut();
    match action {
        Action::FailingOnly => s.failing_only = !s.failing_only,
        Action::SuspendedOnly => s.suspended_only = !s.suspended_only,
        Action::SortNext => s.sort = (s.sort + 1) % s.view.sort_columns().len().max(1),
        Action::SortReverse => s.reverse = !s.reverse,
        Action::RootCauses => s.flat = !s.flat,
        _ => return,
    }
    model.rows_changed();
}

/// The detail view's object's events or YAML, read from its cluster.
fn fetch(model: &mut Model, action: Action) -> Vec<Effect> {
    let View::Detail { cluster, key } = model.screen().view.clone() else {
        return Vec::new();
    };
    let Some(entry) = model.index().cluster(cluster) else {
        return Vec::new();
    };
    let info = entry.info.clone();
    let (what, effect) = if action == Action::Events {
        let told = entry
            .objects
            .get(&key)
            .map_or_else(|| vec![key.clone()], crate::fleet::told_with);
        let effect = Effect::FetchEvents {
            cluster,
            info,
            key,
            told,
        };
        ("events", effect)
    } else if action == Action::Runs {
        ("runs", Effect::FetchRuns { cluster, info, key })
    } else {
        ("yaml", Effect::FetchYaml { cluster, info, key })
    };
    model.set_fetched(Some(Fetched::Loading(what)));
    vec![effect]
}

/// Moves through the events or YAML of the detail view; false when `action` is not a move.
/// In the workloads, trace and tree views, the arrows pick a workload, a chain or a node (`T`
/// traces the workload, `enter` opens a copy).
fn pick(model: &mut Model, action: Action) -> bool {
    let items = match (&model.screen().view, model.reads().fetched()) {
        (View::Workloads { .. }, Some(Fetched::Workloads(f))) => f.lines.len(),
        (View::Trace(_), Some(Fetched::Trace(t))) => t.shapes.len(),
        (View::Tree(_), Some(Fetched::Tree(t))) => t.nodes.len(),
        _ => return false,
    };
    // One item (a single workload with its log tails): the arrows scroll it.
    if items < 2 {
        return false;
    }
    let (at, last) = (model.reads().picked(), items.saturating_sub(1));
    let page = model.fit().body_rows.max(1) / 3;
    let picked = match action {
        Action::Up => at.saturating_sub(1),
        Action::Down => at.saturating_add(1).min(last),
        Action::PageUp => at.saturating_sub(page.max(1)),
        Action::PageDown => at.saturating_add(page.max(1)).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => return false,
    };
    model.reads_mut().pick(picked);
    true
}

fn scroll_fetched(model: &mut Model, action: Action) -> bool {
    let page = model.fit().body_rows.max(1);
    let at = model.reads().fetched_scroll();
    let to = match action {
        Action::Up => at.saturating_sub(1),
        Action::Down => at.saturating_add(1),
        Action::PageUp => at.saturating_sub(page),
        Action::PageDown => at.saturating_add(page),
        Action::Top => 0,
        // Clamped to the last screenful when drawn.
        Action::Bottom => usize::MAX,
        _ => return false,
    };
    model.reads_mut().scroll_to(to);
    true
}

fn toggle(model: &mut Model, group: u64) {
    let s = model.screen_mut();
    if !s.expanded.remove(&group) {
        s.expanded.insert(group);
    }
    model.rows_changed();
}

fn open(model: &mut Model) -> Vec<Effect> {
    let Some(selected) = model.screen().selected.clone() else {
        return Vec::new();
    };
    match selected {
        RowId::Workspace(w) => model.push(View::Workspace(w)),
        RowId::Cluster(c) => model.push(View::Cluster(c)),
        RowId::Object(cluster, key) => model.push(View::Detail { cluster, key }),
        RowId::Group(g) => toggle(model, g),
        RowId::Rollout(key) => {
            let scope = model.screen().view.scope();
            model.push(View::Matrix { scope, key });
            // How its rings delivered it: from the last week's history, where there is one.
            let week = jiff::SignedDuration::from_hours(7 * 24);
            let since = model
                .now()
                .checked_sub(week)
                .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            model.reads_mut().deliveries_asked(since);
            return vec![Effect::ReadHistory(since)];
        }
        RowId::Ring(_) => {}
    }
    Vec::new()
}
