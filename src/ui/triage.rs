//! The on-call view: everything not ready, worst first, identical failures grouped ("HealthCheck
//! failed … — 143 clusters in 3 workspaces"), each group expandable to its clusters.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use super::widgets::{Columns, health_cell, highlighted, list};
use crate::app::model::{Model, RowId, Scope};
use crate::app::rows::{GroupOf, group_text};
use crate::config::theme::{Slot, Theme};
use crate::units::age;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, scope: Scope) {
    let index = &model.index;
    let screen = model.screen();
    let filter = &screen.filter;
    let title = format!("Not ready in {}", super::scope_name(index, scope));
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &["", "HEALTH", "WHAT", "CLUSTERS", "WS"],
            widths: &[
                Constraint::Length(2),
                Constraint::Length(11),
                Constraint::Fill(1),
                Constraint::Length(8),
                Constraint::Length(3),
            ],
        },
        |id| match id {
            RowId::Group(key) => {
                let Some(group) = model.rows.groups.get(key) else {
                    return Vec::new();
                };
                let marker = if screen.expanded.contains(key) {
                    "▾"
                } else {
                    "▸"
                };
                let health = match &group.what {
                    GroupOf::Object { health, .. } => health_cell(*health, theme),
                    GroupOf::Connection { phase, .. } => Cell::from(Span::styled(
                        phase.as_str(),
                        theme.style(Slot::of_phase(*phase)),
                    )),
                };
                vec![
                    Cell::from(marker),
                    health,
                    Cell::from(highlighted(
                        &group_text(group),
                        filter,
                        theme.style(Slot::Text),
                        theme,
                    )),
                    Cell::from(group.members.len().to_string()),
                    Cell::from(group.workspaces.to_string()),
                ]
            }
            RowId::Object(c, key) => {
                let Some(cluster) = index.cluster(*c) else {
                    return Vec::new();
                };
                let since = cluster.objects.get(key).and_then(|o| o.last_transition);
                member(model, theme, *c, format!("since {}", age(since, model.now)))
            }
            RowId::Cluster(c) => {
                let since = index.cluster(*c).and_then(|c| c.connection.since);
                member(model, theme, *c, format!("since {}", age(since, model.now)))
            }
            RowId::Workspace(_) | RowId::Rollout(_) | RowId::Ring(_) => Vec::new(),
        },
    );
}

fn member<'a>(
    model: &'a Model,
    theme: &Theme,
    c: crate::fleet::ClusterId,
    since: String,
) -> Vec<Cell<'a>> {
    let index = &model.index;
    let Some(cluster) = index.cluster(c) else {
        return Vec::new();
    };
    vec![
        Cell::from(""),
        Cell::from(""),
        Cell::from(Span::styled(
            format!(
                "└ {} / {}  {since}",
                super::ws_name(index, cluster.workspace),
                cluster.info.name
            ),
            theme.style(Slot::Breadcrumb),
        )),
        Cell::from(""),
        Cell::from(""),
    ]
}
