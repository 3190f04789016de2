//! One cluster: its Flux objects, like `flux get all`, under a line about its connection.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph};

use super::widgets::{Columns, health_cell, highlighted, list, message_cell};
use crate::app::model::{Model, RowId};
use crate::config::theme::{Slot, Theme};
use crate::fleet::ClusterId;
use crate::fleet::report::Report;
use crate::units::age;

/// What the Flux Operator reports: the Flux version and who manages it, its controllers, the
/// cluster's own sync, and how old the report is.
fn report_line<'a>(report: &'a Report, now: jiff::Timestamp, theme: &Theme) -> Line<'a> {
    let (ready, all) = report.components_ready();
    let mut spans = vec![Span::styled(
        format!(" Flux {} ", report.flux_version().unwrap_or("?")),
        theme.style(if report.healthy() {
            Slot::Ready
        } else {
            Slot::Failed
        }),
    )];
    if let Some(trouble) = report.trouble() {
        spans.push(Span::styled(
            format!(" {trouble} ·"),
            theme.style(Slot::Error),
        ));
    }
    // Most telling first: a narrow terminal cuts the end.
    let mut facts = vec![format!("{ready}/{all} controllers ready")];
    if let Some(sync) = &report.sync {
        let state = if sync.ready { "ready" } else { "not ready" };
        facts.push(format!("sync {} {state}", sync.id));
    }
    facts.push(format!("report {} old", age(Some(report.read_at), now)));
    if let Some(by) = &report.managed_by {
        facts.push(match &report.operator {
            Some(v) => format!("{by} {v}"),
            None => by.to_string(),
        });
    }
    if let Some(k) = &report.kubernetes {
        facts.push(format!("Kubernetes {k}"));
    }
    spans.push(Span::styled(
        format!(" {}", facts.join(" · ")),
        theme.style(Slot::Dim),
    ));
    Line::from(spans)
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, c: ClusterId) {
    let index = model.index();
    let Some(cluster) = index.cluster(c) else {
        return;
    };
    let filter = &model.screen().filter;
    let report_lines = u16::from(cluster.report.is_some());
    let [state, flux, table] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(report_lines),
        Constraint::Min(3),
    ]));
    if let Some(report) = &cluster.report {
        frame.render_widget(
            Paragraph::new(report_line(report, model.now(), theme)),
            flux,
        );
    }
    let conn = &cluster.connection;
    let mut spans = vec![
        Span::styled(
            format!(" {} ", conn.phase),
            theme.style(Slot::of_phase(conn.phase)),
        ),
        Span::styled(
            format!(
                " {} · {}{} · last event {} ago",
                cluster.info.server,
                conn.protocol.unwrap_or("-"),
                conn.lists.map(lists_said).unwrap_or_default(),
                age(cluster.last_event, model.now())
            ),
            theme.style(Slot::Dim),
        ),
    ];
    if !cluster.info.management.is_empty() {
        spans.push(Span::styled(
            format!(" · via {}", cluster.info.management.join(" ▸ ")),
            theme.style(Slot::Dim),
        ));
    }
    if let Some(error) = &conn.error {
        spans.push(Span::styled(
            format!(" · {error}"),
            theme.style(Slot::Error),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), state);
    let title = format!("Flux objects on {}", cluster.info.name);
    list(
        frame,
        table,
        model,
        theme,
        Columns {
            title: &title,
            header: &[
                "KIND",
                "NAMESPACE",
                "NAME",
                "HEALTH",
                "SUSP",
                "REVISION",
                "AGE",
                "MESSAGE",
            ],
            widths: &[
                Constraint::Max(14),
                Constraint::Max(14),
                Constraint::Max(24),
                Constraint::Length(11),
                Constraint::Length(4),
                Constraint::Max(22),
                Constraint::Length(4),
                Constraint::Fill(1),
            ],
        },
        |id| {
            let RowId::Object(_, key) = id else {
                return Vec::new();
            };
            let Some(o) = cluster.objects.get(key) else {
                return Vec::new();
            };
            vec![
                Cell::from(key.kind.as_str()),
                Cell::from(key.namespace.to_string()),
                Cell::from(highlighted(
                    &key.name,
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                health_cell(o.health, theme),
                Cell::from(if o.suspended { "yes" } else { "" }),
                Cell::from(o.shown_revision()),
                Cell::from(age(o.since, model.now())),
                message_cell(o, theme),
            ]
        },
    );
}

/// " · streaming lists", or " · paged lists (why)".
fn lists_said(lists: crate::fleet::Lists) -> String {
    match lists.why() {
        Some(why) => format!(" · {} lists ({why})", lists.as_str()),
        None => format!(" · {} lists", lists.as_str()),
    }
}
