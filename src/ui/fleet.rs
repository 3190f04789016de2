//! Home: one row per workspace with its clusters, objects by health, a bar and the worst problem.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use super::widgets::{Columns, count_cell, health_bar, highlighted, list};
use crate::app::model::{Model, RowId};
use crate::config::theme::{Slot, Theme};
use crate::fleet::{Health, Index, Phase, WorkspaceId};

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let index = &model.index;
    let filter = &model.screen().filter;
    let bar_width = 10;
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: "Workspaces",
            header: &[
                "WORKSPACE",
                "CLUSTERS",
                "OBJECTS",
                "FAILING",
                "SUSP",
                "PROG",
                "HEALTH",
                "WORST PROBLEM",
            ],
            widths: &[
                Constraint::Max(18),
                Constraint::Length(9),
                Constraint::Length(7),
                Constraint::Length(7),
                Constraint::Length(5),
                Constraint::Length(5),
                Constraint::Length(bar_width as u16),
                Constraint::Fill(1),
            ],
        },
        |id| {
            let RowId::Workspace(w) = id else {
                return Vec::new();
            };
            let Some(ws) = index.workspace(*w) else {
                return Vec::new();
            };
            let live = ws.phases.get(Phase::Live);
            let total = ws.phases.total();
            let clusters_style = if live == total {
                theme.style(Slot::Live)
            } else {
                theme.style(Slot::Down)
            };
            let (problem, slot) = worst_problem(index, *w);
            vec![
                Cell::from(highlighted(
                    &ws.name,
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                Cell::from(Span::styled(format!("{live}/{total}"), clusters_style)),
                Cell::from(ws.health.total().to_string()),
                count_cell(ws.health.failing(), Health::Failed, theme),
                count_cell(ws.health.get(Health::Suspended), Health::Suspended, theme),
                count_cell(
                    ws.health.get(Health::Progressing),
                    Health::Progressing,
                    theme,
                ),
                Cell::from(health_bar(&ws.health, bar_width, theme)),
                Cell::from(Span::styled(problem, theme.style(slot))),
            ]
        },
    );
}

/// The worst thing in a workspace in one line: clusters that cannot be watched first, then the
/// worst object of the cluster with the most failures. Looks at one cluster's objects only.
fn worst_problem(index: &Index, w: WorkspaceId) -> (String, Slot) {
    let Some(ws) = index.workspace(w) else {
        return (String::new(), Slot::Dim);
    };
    let failed = ws.phases.failed();
    if failed > 0 {
        let example = ws
            .clusters
            .iter()
            .filter_map(|c| index.cluster(*c))
            .find(|c| c.connection.phase.is_failure());
        let what = example.map_or(String::new(), |c| {
            format!(": {} {}", c.info.name, c.connection.phase)
        });
        let s = if failed == 1 { "" } else { "s" };
        return (format!("{failed} cluster{s} not watched{what}"), Slot::Down);
    }
    let worst = ws
        .clusters
        .iter()
        .filter_map(|c| index.cluster(*c))
        .max_by_key(|c| (c.health.get(Health::Stalled), c.health.failing()));
    let Some(cluster) = worst.filter(|c| c.health.failing() > 0) else {
        let pending = ws.phases.pending();
        return if pending > 0 {
            (format!("{pending} connecting"), Slot::Pending)
        } else {
            ("—".into(), Slot::Dim)
        };
    };
    let object = cluster.objects.values().min_by_key(|o| o.health);
    match object {
        Some(o) => (
            format!(
                "{} {}/{} on {}: {}",
                o.key.kind,
                o.key.namespace,
                o.key.name,
                cluster.info.name,
                o.message.as_deref().or(o.reason.as_deref()).unwrap_or("")
            ),
            Slot::of_health(o.health),
        ),
        None => (String::new(), Slot::Dim),
    }
}
