//! Same revision, different result: each copy in the scope that applied something other than
//! most copies on its revision, and each release drifted live; enter opens the copy.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use super::widgets::{Columns, list};
use crate::app::model::{Model, RowId};
use crate::app::rows::Differs;
use crate::config::theme::{Slot, Theme};
use crate::units::truncate_hex;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let index = &model.index;
    let rows = &model.rows;
    let title = match &rows.drift {
        Some(d) if d.is_clean() => format!(
            "drift: every copy on a revision applied the same ({} compared, {} not recorded)",
            d.agree, d.unrecorded
        ),
        Some(d) => format!(
            "drift: {} objects with copies off their revision's norm, {} releases drifted live",
            d.differ.len(),
            d.live.len()
        ),
        None => "drift".to_string(),
    };
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &["CLUSTER", "KIND", "NAME", "REVISION", "WHAT DIFFERS"],
            widths: &[
                Constraint::Max(22),
                Constraint::Max(14),
                Constraint::Max(32),
                Constraint::Max(22),
                Constraint::Fill(1),
            ],
        },
        |id| {
            let RowId::Object(c, key) = id else {
                return Vec::new();
            };
            let Some(differs) = rows.differs.get(&(*c, key.clone())) else {
                return Vec::new();
            };
            let cluster = index.cluster(*c).map(|cl| cl.info.name.clone());
            let (revision, what, slot) = match differs {
                Differs::Applied {
                    revision,
                    digest,
                    norm,
                    ..
                } => (
                    truncate_hex(revision),
                    format!(
                        "applied {} where most applied {}",
                        truncate_hex(digest),
                        truncate_hex(norm)
                    ),
                    Slot::Progressing,
                ),
                Differs::Live(message) => {
                    ("-".to_string(), format!("live: {message}"), Slot::Error)
                }
            };
            vec![
                Cell::from(cluster.unwrap_or_default()),
                Cell::from(key.kind.as_str()),
                Cell::from(format!("{}/{}", key.namespace, key.name)),
                Cell::from(revision),
                Cell::from(Span::styled(what, theme.style(slot))),
            ]
        },
    );
}
