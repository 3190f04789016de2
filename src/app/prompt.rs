//! The `:` prompt: editing its line, completing commands and their arguments, running them.

use crossterm::event::{KeyCode, KeyEvent};

use super::command::{Argument, Command};
use super::flux_action::{ask, mark_all, mark_stuck};
use super::message::Effect;
use super::model::Model;
use super::view::View;
use crate::fleet::ClusterId;

/// A key typed at the `:` prompt: edit the line, complete it (Tab), run it (Enter).
pub(super) fn edit_command(model: &mut Model, mut line: String, key: &KeyEvent) -> Vec<Effect> {
    match key.code {
        KeyCode::Esc => model.close_input(),
        KeyCode::Enter => {
            model.close_input();
            return run_command(model, line.trim());
        }
        KeyCode::Backspace => {
            line.pop();
            model.prompt(line);
        }
        KeyCode::Tab => {
            let choices = completions(model, &line);
            if let Some(first) = choices.first() {
                line = first.clone();
            }
            model.prompt(line);
        }
        KeyCode::Char(c) => {
            line.push(c);
            model.prompt(line);
        }
        _ => {}
    }
    Vec::new()
}

/// Commands and arguments that complete `line`, shortest first.
pub fn completions(model: &Model, line: &str) -> Vec<String> {
    let mut out: Vec<String> = match line.split_once(' ') {
        Some((cmd, arg)) => {
            let names: Vec<&str> = match Command::argument(cmd) {
                Some(Argument::Workspace) => model
                    .index()
                    .workspaces()
                    .iter()
                    .map(|w| w.name.as_str())
                    .collect(),
                Some(Argument::Cluster) => model
                    .index()
                    .clusters()
                    .iter()
                    .filter(|c| !c.retired)
                    .map(|c| c.info.name.as_str())
                    .collect(),
                _ => Vec::new(),
            };
            names
                .into_iter()
                .filter(|n| n.starts_with(arg))
                .map(|n| format!("{cmd} {n}"))
                .collect()
        }
        None => Command::words()
            .into_iter()
            .filter(|w| w.starts_with(line))
            .collect(),
    };
    out.sort_by_key(|s| (s.len(), s.clone()));
    out.dedup();
    out
}

fn run_command(model: &mut Model, line: &str) -> Vec<Effect> {
    let command = match Command::parse(line) {
        Ok(Some(command)) => command,
        Ok(None) => return Vec::new(),
        Err(e) => {
            model.say(e.to_string());
            return Vec::new();
        }
    };
    let scope = model.screen().view.scope();
    match command {
        Command::Quit => model.quit(),
        Command::Help => model.toggle_help(),
        Command::Fleet => model.home(),
        Command::All => model.push(View::Objects { scope, kind: None }),
        Command::Triage => model.push(View::Triage { scope }),
        Command::Rollout(kind) => model.push(View::Rollout { scope, kind }),
        Command::Drift => model.push(View::Drift { scope, key: None }),
        Command::Mark => mark_all(model),
        Command::MarkStuck => mark_stuck(model),
        Command::Unmark => {
            let n = model.marks_mut().clear();
            model.say(format!("{n} marks cleared"));
        }
        Command::Results => match model.run() {
            Some(_) => model.push(View::Results),
            None => model.say("no action yet in this session"),
        },
        Command::History(within) => {
            let since = jiff::SignedDuration::try_from(within)
                .ok()
                .and_then(|d| model.now().checked_sub(d).ok())
                .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            model.reads_mut().history_asked(since);
            model.push(View::History { scope, since });
            return vec![Effect::ReadHistory(since)];
        }
        Command::Audit => {
            model.reads_mut().audit_asked();
            model.push(View::Audit);
            return vec![Effect::ReadAudit];
        }
        Command::Proposals => {
            // Typed in the view itself: read again, in place.
            if model.screen().view != View::Proposals {
                model.reads_mut().proposals_asked();
                model.push(View::Proposals);
            }
            return vec![Effect::ReadProposals];
        }
        Command::Reject(reason) => return super::proposal_action::reject(model, &reason),
        Command::Act(verb) => ask(model, verb),
        Command::Workspace(name) => match model.index().workspace_id(&name) {
            Some(w) => model.push(View::Workspace(w)),
            None => model.say(format!("no workspace {name:?}")),
        },
        Command::Cluster(name) => match model
            .index()
            .clusters()
            .iter()
            .position(|c| c.info.name == name && !c.retired)
        {
            Some(i) => model.push(View::Cluster(ClusterId(i as u32))),
            None => model.say(format!("no cluster {name:?}")),
        },
        Command::Kind(kind) => model.push(View::Objects {
            scope,
            kind: Some(kind),
        }),
    }
    Vec::new()
}
