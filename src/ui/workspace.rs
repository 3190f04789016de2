//! One workspace: a row per cluster with its connection state, freshness, counts and the worst
//! message.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use super::widgets::{Columns, count_cell, highlighted, list};
use crate::app::model::{Model, RowId, SortBy};
use crate::config::theme::{Slot, Theme};
use crate::fleet::{ClusterEntry, Health, WorkspaceId};
use crate::units::age;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, w: WorkspaceId) {
    let index = &model.index;
    let filter = &model.screen().filter;
    let title = format!("Clusters of {}", super::ws_name(index, w));
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &[
                "CLUSTER", "STATE", "FRESH", "OBJECTS", "FAILING", "SUSP", "PROG", "MESSAGE",
            ],
            widths: &[
                Constraint::Max(24),
                Constraint::Length(12),
                Constraint::Length(5),
                Constraint::Length(7),
                Constraint::Length(7),
                Constraint::Length(5),
                Constraint::Length(5),
                Constraint::Fill(1),
            ],
        },
        |id| {
            let RowId::Cluster(c) = id else {
                return Vec::new();
            };
            let Some(cluster) = index.cluster(*c) else {
                return Vec::new();
            };
            let phase = cluster.connection.phase;
            let (mut message, slot) = message(cluster);
            // Grouped by management path: say which group each row is in.
            if model.screen().sort_by() == Some(SortBy::Management)
                && !cluster.info.management.is_empty()
            {
                message = format!("via {} · {message}", cluster.info.management.join(" ▸ "));
            }
            vec![
                Cell::from(highlighted(
                    &cluster.info.name,
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                Cell::from(Span::styled(
                    phase.as_str(),
                    theme.style(Slot::of_phase(phase)),
                )),
                Cell::from(age(cluster.last_event, model.now)),
                Cell::from(cluster.health.total().to_string()),
                count_cell(cluster.health.failing(), Health::Failed, theme),
                count_cell(
                    cluster.health.get(Health::Suspended),
                    Health::Suspended,
                    theme,
                ),
                count_cell(
                    cluster.health.get(Health::Progressing),
                    Health::Progressing,
                    theme,
                ),
                Cell::from(Span::styled(message, theme.style(slot))),
            ]
        },
    );
}

/// The connection's error, else the worst object's message.
pub fn message(cluster: &ClusterEntry) -> (String, Slot) {
    let conn = &cluster.connection;
    if let Some(error) = &conn.error {
        let slot = if conn.phase.is_failure() {
            Slot::Down
        } else {
            Slot::Warning
        };
        return (error.to_string(), slot);
    }
    if cluster.health.failing() == 0 {
        return (String::new(), Slot::Dim);
    }
    match cluster.objects.values().min_by_key(|o| o.health) {
        Some(o) => (
            format!(
                "{} {}: {}",
                o.key.kind,
                o.key.name,
                o.message.as_deref().or(o.reason.as_deref()).unwrap_or("")
            ),
            Slot::of_health(o.health),
        ),
        None => (String::new(), Slot::Dim),
    }
}
