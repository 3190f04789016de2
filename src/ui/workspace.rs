//! One workspace: a row per cluster with its connection state, freshness, counts and the worst
//! message.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use super::widgets::{Columns, count_cell, highlighted, list};
use crate::app::model::{Model, RowId, SortBy};
use crate::config::theme::{Slot, Theme};
use crate::fleet::{ClusterEntry, Counted, Health, WorkspaceId};
use crate::units::age;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, w: WorkspaceId) {
    let index = model.index();
    let filter = &model.screen().filter;
    let title = format!("Clusters of {}", super::names::ws_name(index, w));
    let members = || {
        let ws = index.workspace(w);
        let ids = ws.map(|ws| ws.clusters.as_slice()).unwrap_or_default();
        ids.iter().filter_map(|c| index.cluster(*c))
    };
    // The FLUX column only where some cluster of the workspace reports a version.
    let flux = members().any(|c| c.report.is_some());
    let mut header = vec!["CLUSTER", "STATE", "FRESH"];
    let mut widths = vec![
        Constraint::Max(24),
        Constraint::Length(12),
        Constraint::Length(5),
    ];
    if flux {
        header.push("FLUX");
        widths.push(Constraint::Length(8));
    }
    header.extend(["OBJECTS", "FAILING", "SUSP", "PROG", "MESSAGE"]);
    widths.extend([
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(5),
        Constraint::Length(5),
        Constraint::Fill(1),
    ]);
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &header,
            widths: &widths,
        },
        |id| {
            let RowId::Cluster(c) = id else {
                return Vec::new();
            };
            let Some(cluster) = index.cluster(*c) else {
                return Vec::new();
            };
            let (mut message, slot) = message(cluster);
            // Grouped by management path: say which group each row is in.
            if model.screen().sort_by() == Some(SortBy::Management)
                && !cluster.info.management.is_empty()
            {
                message = format!("via {} · {message}", cluster.info.management.join(" ▸ "));
            }
            let mut cells = vec![
                Cell::from(highlighted(
                    &cluster.info.name,
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                state_cell(cluster, theme),
                Cell::from(age(cluster.last_event, model.now())),
            ];
            if flux {
                cells.push(flux_cell(cluster, theme));
            }
            cells.extend([
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
            ]);
            cells
        },
    );
}

/// The Flux version its FluxReport names, in red when Flux itself is not healthy; a dash
/// without a report.
fn flux_cell<'a>(cluster: &'a ClusterEntry, theme: &Theme) -> Cell<'a> {
    let Some(report) = &cluster.report else {
        return Cell::from(Span::styled("—", theme.style(Slot::Dim)));
    };
    let slot = if report.healthy() {
        Slot::Text
    } else {
        Slot::Down
    };
    let version = report.flux_version().unwrap_or("?").to_string();
    Cell::from(Span::styled(version, theme.style(slot)))
}

/// The connection's state; a live cluster whose watches keep breaking marked `live ↻`.
fn state_cell<'a>(cluster: &ClusterEntry, theme: &Theme) -> Cell<'a> {
    let conn = &cluster.connection;
    if conn.is_flapping() {
        return Cell::from(Span::styled("live ↻", theme.style(Slot::Warning)));
    }
    Cell::from(Span::styled(
        conn.phase.as_str(),
        theme.style(Slot::of_phase(conn.phase)),
    ))
}

/// What is wrong, led by how often its watches restarted lately when they did.
pub fn message(cluster: &ClusterEntry) -> (String, Slot) {
    let (message, slot) = wrong(cluster);
    match cluster.connection.restarts_said() {
        Some(restarts) if message.is_empty() => (restarts, Slot::Warning),
        Some(restarts) => (format!("{restarts} · {message}"), slot),
        None => (message, slot),
    }
}

/// The connection's error, else what is wrong with Flux itself, else the worst object's
/// message.
fn wrong(cluster: &ClusterEntry) -> (String, Slot) {
    let conn = &cluster.connection;
    if let Some(error) = &conn.error {
        let slot = if conn.phase.is_failure() {
            Slot::Down
        } else {
            Slot::Warning
        };
        return (error.to_string(), slot);
    }
    if let Some(trouble) = cluster.report.as_ref().and_then(|r| r.trouble()) {
        return (trouble, Slot::Down);
    }
    if cluster.health.failing() == 0 {
        return (String::new(), Slot::Dim);
    }
    // Counted by its report with its failures unnamed (a look could not list them).
    if cluster.counted == Counted::Report && !cluster.held {
        let failing = cluster.health.failing();
        return (
            format!("{failing} failing, by its FluxReport (enter watches its objects)"),
            Slot::Failed,
        );
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
