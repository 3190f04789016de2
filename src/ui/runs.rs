//! An object's last runs in the detail view, as its controller records them (`status.history`),
//! newest first: for a Kustomization what it applied (revision and digest), how it ended, how
//! long the last run took and how often it ran so; for a HelmRelease the Helm action, chart,
//! release number, status and values digest.

use jiff::Timestamp;
use ratatui::text::{Line, Span};

use crate::config::theme::{Slot, Theme};
use crate::fleet::FluxKind;
use crate::fleet::runs::{ControllerRun, Runs};
use crate::units::{age, truncate_hex};

/// The lines of the runs pane; `now` dates them.
pub fn lines(kind: FluxKind, runs: &Runs, now: Timestamp, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Slot::Dim);
    let runs = match runs {
        Runs::NotRecorded { why } => {
            return vec![Line::from(Span::styled(
                format!("not recorded: {why}"),
                dim,
            ))];
        }
        Runs::Recorded { runs } if runs.is_empty() => {
            return vec![Line::from(Span::styled(
                "no run recorded yet: its controller has not reconciled it",
                dim,
            ))];
        }
        Runs::Recorded { runs } => runs,
    };
    let header = match kind {
        FluxKind::HelmRelease => format!(
            "{:>5}  {:<12} {:<24} {:>3}  {:<11} {}",
            "LAST", "ACTION", "CHART", "#", "STATUS", "VALUES"
        ),
        _ => format!(
            "{:>5}  {:<28} {:<15} {:<24} {:>12} {:>5}  {}",
            "LAST", "REVISION", "DIGEST", "STATUS", "DURATION", "RUNS", "FIRST"
        ),
    };
    let mut out = vec![Line::from(Span::styled(header, theme.style(Slot::Header)))];
    out.extend(runs.iter().map(|r| line(kind, r, now, theme)));
    out
}

fn line(kind: FluxKind, r: &ControllerRun, now: Timestamp, theme: &Theme) -> Line<'static> {
    let slot = if r.succeeded() {
        Slot::Text
    } else {
        Slot::Error
    };
    let or_dash = |t: &Option<String>| t.clone().unwrap_or_else(|| "-".into());
    let last = r.last.map_or("-".into(), |t| age(Some(t), now));
    let text = match kind {
        FluxKind::HelmRelease => format!(
            "{last:>5}  {:<12} {:<24} {:>3}  {:<11} {}",
            or_dash(&r.action),
            or_dash(&r.revision),
            r.version.map_or("-".into(), |v| v.to_string()),
            or_dash(&r.status),
            r.config_digest.as_deref().map_or("-".into(), truncate_hex),
        ),
        _ => format!(
            "{last:>5}  {:<28} {:<15} {:<24} {:>12} {:>5}  {} ago",
            r.revision.as_deref().map_or("-".into(), truncate_hex),
            r.digest.as_deref().map_or("-".into(), truncate_hex),
            or_dash(&r.status),
            or_dash(&r.duration),
            r.total.map_or("-".into(), |t| t.to_string()),
            r.first.map_or("-".into(), |t| age(Some(t), now)),
        ),
    };
    Line::from(Span::styled(text, theme.style(slot)))
}
