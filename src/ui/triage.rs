//! The on-call view: root causes first, each with what it holds back ("Kustomization
//! flux-system/infra-controllers BuildFailed (blocks apps, infra-configs) — 51 clusters in 7
//! workspaces, 4 on each"), since when, and how many clusters joined in the last hour; or every
//! failure alike (`c`). Each group expands to its clusters; causes sharing an endpoint's failure
//! stand under an incident ("incident: ghcr.io is rate limiting — 3 root causes"), which expands
//! to them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Span;
use ratatui::widgets::Cell;

use super::widgets::{Columns, health_cell, highlighted, list};
use crate::app::model::{ListScope, Model, RowId};
use crate::app::triage::{Group, GroupOf, headline};
use crate::app::view::{View, clusters_in};
use crate::config::theme::{Slot, Theme};
use crate::fleet::Counted;
use crate::units::age;

/// Names of what is held back shown in a row, before "+N".
const NAMES: usize = 4;

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, scope: ListScope) {
    let index = model.index();
    let screen = model.screen();
    let mut title = if screen.flat {
        format!("Not ready in {}", super::names::scope_name(index, scope))
    } else {
        format!("Root causes in {}", super::names::scope_name(index, scope))
    };
    // Summarized clusters whose failures could not be listed count them without their
    // objects: say they are not here.
    let (failing, clusters) = crate::app::view::clusters_in(index, scope)
        .into_iter()
        .filter(|(_, c)| c.counted == Counted::Report && !c.held && c.health.failing() > 0)
        .fold((0, 0), |(f, n), (_, c)| (f + c.health.failing(), n + 1));
    if clusters > 0 {
        title.push_str(&format!(
            " · and {failing} failing on {} counted by their FluxReports (open one to see its objects)",
            crate::units::count(clusters, "cluster", "clusters")
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
                "", "HEALTH", "WHAT", "BLOCKS", "CLUSTERS", "WS", "SINCE", "1H", "SUSPECT",
            ],
            widths: &[
                Constraint::Length(2),
                Constraint::Length(11),
                Constraint::Fill(1),
                Constraint::Length(8),
                Constraint::Length(8),
                Constraint::Length(3),
                Constraint::Length(5),
                Constraint::Length(4),
                Constraint::Length(18),
            ],
        },
        |id| match id {
            RowId::Group(key) => match model.rows().groups.get(key) {
                Some(group) => group_cells(model, theme, group, screen.expanded.contains(key)),
                None => Vec::new(),
            },
            RowId::Object(c, key) => {
                let Some(cluster) = index.cluster(*c) else {
                    return Vec::new();
                };
                let since = cluster.objects.get(key).and_then(|o| o.since);
                let mut text = format!("since {}", age(since, model.now()));
                if !screen.flat {
                    let held = cluster.graph.held_back(key);
                    if !held.is_empty() {
                        text.push_str("  blocks ");
                        text.push_str(&names(held.iter().map(|k| &*k.name)));
                    }
                }
                member(model, theme, *c, text)
            }
            RowId::Cluster(c) => {
                let since = index.cluster(*c).and_then(|c| c.connection.since);
                member(
                    model,
                    theme,
                    *c,
                    format!("since {}", age(since, model.now())),
                )
            }
            RowId::Workspace(_) | RowId::Rollout(_) | RowId::Ring(_) => Vec::new(),
        },
    );
}

/// A group's row: its health, what it is, what it holds back, where and since when.
fn group_cells<'a>(
    model: &'a Model,
    theme: &Theme,
    group: &'a Group,
    expanded: bool,
) -> Vec<Cell<'a>> {
    let filter = &model.screen().filter;
    let marker = if expanded { "▾" } else { "▸" };
    let health = match (&group.what, group.what.health()) {
        (GroupOf::Connection { phase, .. }, _) => Cell::from(Span::styled(
            phase.as_str(),
            theme.style(Slot::of_phase(*phase)),
        )),
        (GroupOf::Cycle { .. }, _) => Cell::from(Span::styled("Cycle", theme.style(Slot::Failed))),
        (GroupOf::Incident { .. }, _) => {
            Cell::from(Span::styled("Incident", theme.style(Slot::Failed)))
        }
        (_, Some(h)) => health_cell(h, theme),
        (_, None) => Cell::from(""),
    };
    let blocks = group.holds.text();
    let held =
        (!group.holds.names.is_empty()).then(|| names(group.holds.names.iter().map(|n| &**n)));
    // A cause under an incident stands one step in.
    let what = match group.incident {
        Some(_) => format!("  {}", headline(group, held.as_deref())),
        None => headline(group, held.as_deref()),
    };
    let clusters = match &group.what {
        GroupOf::Incident { clusters, .. } => *clusters,
        _ => group.members.len(),
    };
    vec![
        Cell::from(marker),
        health,
        Cell::from(highlighted(&what, filter, theme.style(Slot::Text), theme)),
        Cell::from(blocks),
        Cell::from(clusters.to_string()),
        Cell::from(group.workspaces.to_string()),
        Cell::from(age(group.since, model.now())),
        Cell::from(match group.recent {
            0 => String::new(),
            n => format!("+{n}"),
        }),
        // The change it began after, where one is likely; the status line gives the evidence.
        Cell::from(match (&group.suspect, &group.what) {
            (Some(s), _) if s.likely => s.short(),
            (Some(_), _) | (None, GroupOf::Object { .. }) => "no change".to_string(),
            (None, _) => String::new(),
        }),
    ]
}

/// What the status line says of the triage group under the cursor: why it broke.
pub fn triage_status(model: &Model) -> Option<String> {
    let Some(RowId::Group(key)) = &model.screen().selected else {
        return None;
    };
    let group = model.rows().groups.get(key)?;
    if let GroupOf::Incident {
        shared,
        clusters,
        causes,
    } = &group.what
    {
        return Some(format!(
            " {} {} on {}: one outage under {} (space lists them)",
            shared.endpoint,
            shared.class.says(),
            crate::units::count(*clusters, "cluster", "clusters"),
            crate::units::count(*causes, "root cause", "root causes"),
        ));
    }
    let Some(suspect) = group.suspect.clone() else {
        return matches!(group.what, GroupOf::Object { .. }).then(|| {
            " no change it records came before it failed: the cause is outside the GitOps change \
             (infrastructure, credentials, an upstream registry)"
                .to_string()
        });
    };
    // Weighed against every copy of the object in the triage's scope, for this group only.
    let key = group.members.iter().find_map(|m| match m {
        RowId::Object(_, k) => Some(k),
        _ => None,
    })?;
    let View::Triage { scope } = model.screen().view else {
        return None;
    };
    let all = clusters_in(model.index(), scope)
        .into_iter()
        .filter_map(|(_, c)| c.objects.get(key));
    Some(format!(" {}", suspect.weigh(all).evidence))
}

/// The first few names, and how many more.
fn names<'a>(all: impl ExactSizeIterator<Item = &'a str>) -> String {
    let count = all.len();
    let mut out: Vec<&str> = all.take(NAMES).collect();
    let more = format!("+{}", count.saturating_sub(NAMES));
    if count > NAMES {
        out.push(&more);
    }
    out.join(", ")
}

fn member<'a>(
    model: &'a Model,
    theme: &Theme,
    c: crate::fleet::ClusterId,
    text: String,
) -> Vec<Cell<'a>> {
    let index = model.index();
    let Some(cluster) = index.cluster(c) else {
        return Vec::new();
    };
    vec![
        Cell::from(""),
        Cell::from(""),
        Cell::from(Span::styled(
            format!(
                "└ {} / {}  {text}",
                super::names::ws_name(index, cluster.workspace),
                cluster.info.name
            ),
            theme.style(Slot::Breadcrumb),
        )),
    ]
}
