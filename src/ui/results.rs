//! The last action, target by target: sending, requested (waiting for the controller), handled,
//! or how it ended — live, as the outcomes and the watch come in.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use super::widgets::{Columns, health_cell, list};
use crate::app::model::{Model, RowId, RunState};
use crate::config::theme::{Slot, Theme};
use crate::fleet::verbs::Outcome;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let Some(run) = model.run() else {
        return;
    };
    let index = model.index();
    // The counts the headless progress line shows.
    let count = |f: fn(&RunState) -> bool| run.rows.iter().filter(|r| f(&r.state)).count();
    let progress = crate::actions::Progress {
        total: run.rows.len(),
        sent: count(|s| !matches!(s, RunState::Sending)),
        requested: count(|s| matches!(s, RunState::Requested)),
        done: count(|s| matches!(s, RunState::Handled | RunState::Ended(Outcome::Done))),
        failed: count(RunState::failed),
        refused: count(|s| matches!(s, RunState::Ended(Outcome::Refused(_)))),
    };
    let title = format!(
        "{}{}",
        progress.line(run.verb),
        run.reason
            .as_deref()
            .map(|r| format!(" — reason: {r}"))
            .unwrap_or_default()
    );
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &[
                "OUTCOME",
                "WORKSPACE",
                "CLUSTER",
                "KIND",
                "NAME",
                "HEALTH",
                "MESSAGE",
            ],
            widths: &[
                Constraint::Length(12),
                Constraint::Max(12),
                Constraint::Max(20),
                Constraint::Max(14),
                Constraint::Max(28),
                Constraint::Length(11),
                Constraint::Fill(1),
            ],
        },
        |id| {
            let RowId::Object(c, key) = id else {
                return Vec::new();
            };
            let Some(row) = run.rows.iter().find(|r| r.cluster == *c && &r.key == key) else {
                return Vec::new();
            };
            let cluster = index.cluster(*c);
            let object = cluster.and_then(|cl| cl.objects.get(key));
            let (state, slot, message) = match &row.state {
                RunState::Sending => ("sending", Slot::Dim, String::new()),
                RunState::Requested => (
                    "requested",
                    Slot::Progressing,
                    "waiting for the controller to handle the request".to_string(),
                ),
                RunState::Handled => (
                    "handled",
                    Slot::Ready,
                    object
                        .and_then(|o| o.message.as_deref())
                        .unwrap_or_default()
                        .to_string(),
                ),
                RunState::Ended(o) => (
                    o.name(),
                    if o.is_done() {
                        Slot::Ready
                    } else {
                        Slot::Error
                    },
                    o.message().to_string(),
                ),
            };
            vec![
                Cell::from(Span::styled(state, theme.style(slot))),
                Cell::from(
                    cluster
                        .map(|cl| super::names::ws_name(index, cl.workspace).to_string())
                        .unwrap_or_default(),
                ),
                Cell::from(cluster.map(|cl| cl.info.name.clone()).unwrap_or_default()),
                Cell::from(key.kind.as_str()),
                Cell::from(format!("{}/{}", key.namespace, key.name)),
                object.map_or(Cell::from("-"), |o| health_cell(o.health, theme)),
                Cell::from(Span::styled(message, theme.style(Slot::Text))),
            ]
        },
    );
}
