//! The rollout view (one row per deployed thing: its newest revision, how far it has spread,
//! who is behind or stuck) and its matrix (one thing on every cluster, ring by ring).

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Cell;

use super::widgets::{Columns, count_cell, highlighted, list, split_bar};
use crate::app::model::{ListScope, Model, RowId};
use crate::config::theme::{Slot, Theme};
use crate::fleet::rollouts::metrics::RingDelivery;
use crate::fleet::rollouts::{self, Standing, StandingCounts};
use crate::fleet::{FluxKind, Health, ObjectKey};
use crate::units::age;

/// The spread bar's parts, in its order: on the newest, behind, failing on the newest,
/// suspended.
fn spread_bar(c: &StandingCounts, width: usize, theme: &Theme) -> Line<'static> {
    let parts: [(u32, Style); 4] = [
        (c.current, standing_style(Standing::Current, theme)),
        (c.behind, standing_style(Standing::Behind, theme)),
        (c.failing, standing_style(Standing::Failing, theme)),
        (c.suspended, standing_style(Standing::Suspended, theme)),
    ];
    split_bar(&parts, width, theme)
}

fn standing_style(standing: Standing, theme: &Theme) -> Style {
    theme.style(match standing {
        Standing::Current => Slot::of_health(Health::Ready),
        Standing::Behind => Slot::of_health(Health::Progressing),
        Standing::Failing => Slot::of_health(Health::Failed),
        Standing::Suspended => Slot::of_health(Health::Suspended),
    })
}

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    scope: ListScope,
    kind: Option<FluxKind>,
) {
    let index = model.index();
    let filter = &model.screen().filter;
    let what = kind.map_or("Rollouts", |k| k.plural());
    let title = format!("{what} in {}", super::names::scope_name(index, scope));
    let bar_width = 20;
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &[
                "KIND", "NAME", "NEWEST", "AGE", "SPREAD", "CURRENT", "BEHIND", "STUCK",
            ],
            widths: &[
                Constraint::Length(14),
                Constraint::Fill(1),
                Constraint::Max(30),
                Constraint::Length(4),
                Constraint::Length(bar_width as u16),
                Constraint::Length(9),
                Constraint::Length(6),
                Constraint::Length(5),
            ],
        },
        |id| {
            let RowId::Rollout(key) = id else {
                return Vec::new();
            };
            let Some(s) = model.rows().spreads.get(key) else {
                return Vec::new();
            };
            let c = &s.clusters;
            vec![
                Cell::from(key.kind.as_str()),
                Cell::from(highlighted(
                    &format!("{}/{}", key.namespace, key.name),
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                Cell::from(rollouts::shown(s.newest.as_ref())),
                Cell::from(age(s.newest_since, model.now())),
                Cell::from(spread_bar(c, bar_width, theme)),
                Cell::from(format!("{}/{}", c.current, c.total())),
                count_cell(s.behind, Health::Progressing, theme),
                count_cell(s.stuck, Health::Failed, theme),
            ]
        },
    );
}

pub fn draw_matrix(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    scope: ListScope,
    key: &ObjectKey,
) {
    let index = model.index();
    let filter = &model.screen().filter;
    let now = model.now();
    let mut title = format!(
        "{} {}/{} in {}",
        key.kind,
        key.namespace,
        key.name,
        super::names::scope_name(index, scope)
    );
    if let Some(s) = model.rows().matrix.as_ref().map(|m| &m.spread) {
        title.push_str(&format!(
            ": newest {} ({}), {} of {} clusters on it, {} stuck",
            rollouts::shown(s.newest.as_ref()),
            age(s.newest_since, now),
            s.on_newest(),
            s.clusters.total(),
            s.stuck
        ));
    }
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &[
                "CLUSTER",
                "WORKSPACE",
                "REVISION",
                "SINCE",
                "STATE",
                "REASON",
            ],
            widths: &[
                Constraint::Max(24),
                Constraint::Max(14),
                Constraint::Max(30),
                Constraint::Length(5),
                Constraint::Length(9),
                Constraint::Fill(1),
            ],
        },
        |id| {
            let Some(m) = &model.rows().matrix else {
                return Vec::new();
            };
            match id {
                RowId::Ring(i) => match m.rings.get(*i) {
                    Some(r) => {
                        let delivered =
                            model.reads().deliveries().iter().find(|d| d.ring == r.name);
                        ring_cells(r, delivered, theme, now)
                    }
                    None => Vec::new(),
                },
                RowId::Object(c, _) => {
                    let (Some(cluster), Some(p)) = (
                        index.cluster(*c),
                        model.rows().places.get(c).and_then(|i| m.places.get(*i)),
                    ) else {
                        return Vec::new();
                    };
                    let state_style = match p.stuck {
                        Some(_) => theme.style(Slot::of_health(Health::Stalled)),
                        None => standing_style(p.standing, theme),
                    };
                    let reason = p.reason(now);
                    vec![
                        Cell::from(highlighted(
                            &cluster.info.name,
                            filter,
                            theme.style(Slot::Text),
                            theme,
                        )),
                        Cell::from(super::names::ws_name(index, cluster.workspace).to_string()),
                        Cell::from(rollouts::shown(p.revision.as_ref())),
                        Cell::from(age(p.since, now)),
                        Cell::from(Span::styled(p.state(), state_style)),
                        Cell::from(Span::styled(reason, theme.style(Slot::Dim))),
                    ]
                }
                _ => Vec::new(),
            }
        },
    );
}

/// A ring's header across the matrix's columns: the ring, its share on the newest revision, how
/// long it took; and, where the history says, how it delivers (lead time to 50/90/100 % of the
/// ring, change failure rate, time to restore).
fn ring_cells(
    r: &rollouts::Ring,
    delivered: Option<&RingDelivery>,
    theme: &Theme,
    now: jiff::Timestamp,
) -> Vec<Cell<'static>> {
    let header = theme.style(Slot::Header);
    let mut stuck = if r.stuck > 0 {
        format!(" · {} stuck", r.stuck)
    } else {
        String::new()
    };
    if let Some(d) = delivered {
        stuck.push_str(&format!(" · {}", delivery_text(d)));
    }
    // Across the columns: the ring, its share on the newest, how long it took.
    vec![
        Cell::from(Span::styled(format!("▾ ring {}", r.name), header)),
        Cell::from(""),
        Cell::from(Span::styled(
            format!(
                "{}/{} on newest ({:.0}%)",
                r.on_newest,
                r.clusters,
                r.share() * 100.0
            ),
            header,
        )),
        Cell::from(""),
        Cell::from(""),
        Cell::from(Span::styled(
            format!("took {}{stuck}", r.took_text(now)),
            header,
        )),
    ]
}

/// "lead 64s/100s/2m over 9 · fails 11% · restore 14m": the medians over the revisions the
/// history shows.
fn delivery_text(d: &RingDelivery) -> String {
    let secs = crate::fleet::rollouts::metrics::shown;
    let [p50, p90, p100] = d.lead_seconds.map(secs);
    let mut text = format!("lead {p50}/{p90}/{p100} over {}", d.revisions.len());
    if let Some(rate) = d.change_failure_rate {
        text.push_str(&format!(" · fails {:.0}%", rate * 100.0));
    }
    if d.restore_seconds.is_some() {
        text.push_str(&format!(" · restore {}", secs(d.restore_seconds)));
    }
    text
}
