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
use std::time::Duration;

use crate::units::{format_duration, span, truncate_hex};

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let index = model.index();
    let rows = model.rows();
    let title = match &rows.drift {
        Some(d) => {
            let odd = d.reconciles.iter().filter(|r| r.is_odd()).count();
            let runs = format!(
                "{odd} of {} objects with slow, flapping or stuck copies",
                d.reconciles.len()
            );
            match d.is_clean() {
                true => format!(
                    "drift: every copy on a revision applied the same ({} compared, {} not \
                     recorded); {runs}",
                    d.agree, d.unrecorded
                ),
                false => format!(
                    "drift: {} objects with copies off their revision's norm, {} releases drifted \
                     live; {runs}",
                    d.differ.len(),
                    d.live.len()
                ),
            }
        }
        None => "drift".to_string(),
    };
    // Asked of one object: its copies are read, and what was read said.
    let view = &model.screen().view;
    let asked = model.reads().drift().filter(|a| a.is_for(view));
    let title = match asked.map(|a| a.drift()) {
        None => title,
        Some(None) => format!("{title} — reading its copies…"),
        Some(Some(read)) => match &read.reads {
            Some(r) => {
                let mut said = format!(
                    "{title} — copies read: {} summarized, {} for events, {} inventories",
                    r.summarized, r.events, r.inventories
                );
                if !r.not_read.is_empty() {
                    let clusters = crate::units::count(r.not_read.len(), "cluster", "clusters");
                    said.push_str(&format!(", not read on {clusters}"));
                }
                said
            }
            None => title,
        },
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
            let mut revision = "-".to_string();
            let mut slot = Slot::Progressing;
            let said: Vec<String> = differs
                .iter()
                .map(|d| {
                    let (what, worst) = said(d, &mut revision);
                    if worst == Slot::Error {
                        slot = worst;
                    }
                    what
                })
                .collect();
            let what = said.join("; ");
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

/// What a row says of one way its copy differs, and the colour it deserves; an applied digest
/// also names the revision it was on.
fn said(d: &Differs, revision: &mut String) -> (String, Slot) {
    match d {
        Differs::Applied {
            revision: on,
            digest,
            norm,
            objects,
        } => {
            *revision = truncate_hex(on);
            let mut what = format!(
                "applied {} where most applied {}",
                truncate_hex(digest),
                truncate_hex(norm)
            );
            if let Some(objects) = objects {
                what.push_str(&format!(" ({objects})"));
            }
            (what, Slot::Progressing)
        }
        Differs::Live(message) => (format!("live: {message}"), Slot::Error),
        Differs::Stuck {
            since_s,
            interval_s,
        } => {
            let what = format!(
                "not reconciled for {} (interval {})",
                span(*since_s),
                span(i64::from(*interval_s))
            );
            (what, Slot::Error)
        }
        Differs::Flapping => (
            "flapping: its runs go back and forth between success and failure".into(),
            Slot::Error,
        ),
        Differs::Slow { took_ms, median_ms } => {
            let took = |ms: u32| format_duration(Duration::from_millis(u64::from(ms)));
            let what = format!(
                "slow: its last run took {} (median {})",
                took(*took_ms),
                took(*median_ms)
            );
            (what, Slot::Progressing)
        }
    }
}
