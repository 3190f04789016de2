//! Home: one row per workspace with its clusters, objects by health, a bar and the worst problem;
//! under it the fleet map, every cluster as one cell.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Cell};

use super::widgets::{Columns, count_cell, health_bar, highlighted, list};
use crate::app::map::{self, Age, Copy, Mark, Stall};
use crate::app::model::{Model, RowId};
use crate::app::view::MapMode;
use crate::config::theme::{Slot, Theme};
use crate::fleet::report::Skew;
use crate::fleet::{FluxSummary, Health, Index, WorkspaceEntry, WorkspaceId};

pub fn draw(
    frame: &mut Frame,
    body: Rect,
    model: &Model,
    theme: &Theme,
    shading: Option<&map::Shading>,
) {
    let (area, map_area) = split(model, body);
    if let (Some(map_area), Some(shading)) = (map_area, shading) {
        draw_map(frame, map_area, model, theme, shading);
    }
    let index = model.index();
    let filter = &model.screen().filter;
    let bar_width = 10;
    let skew = Skew::of(index.entries().map(|(_, c)| c.report.as_deref()));
    // The FLUX column only where some cluster reports a version and the problem column keeps
    // its room.
    let flux = !skew.versions.is_empty() && area.width >= 100;
    let mut header = vec!["WORKSPACE", "CLUSTERS"];
    let mut widths = vec![Constraint::Max(18), Constraint::Length(9)];
    if flux {
        header.push("FLUX");
        widths.push(Constraint::Length(11));
    }
    header.extend([
        "OBJECTS",
        "FAILING",
        "SUSP",
        "PROG",
        "HEALTH",
        "WORST PROBLEM",
    ]);
    widths.extend([
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(5),
        Constraint::Length(5),
        Constraint::Length(bar_width as u16),
        Constraint::Fill(1),
    ]);
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: "Workspaces",
            header: &header,
            widths: &widths,
        },
        |id| {
            let RowId::Workspace(w) = id else {
                return Vec::new();
            };
            let Some(ws) = index.workspace(*w) else {
                return Vec::new();
            };
            let live = ws.phases.up();
            let total = ws.phases.total();
            let clusters_style = if live == total {
                theme.style(Slot::Live)
            } else {
                theme.style(Slot::Down)
            };
            let (problem, slot) = worst_problem(index, *w);
            let mut cells = vec![
                Cell::from(highlighted(
                    &ws.name,
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                Cell::from(Span::styled(format!("{live}/{total}"), clusters_style)),
            ];
            if flux {
                cells.push(flux_cell(index, ws, theme));
            }
            cells.extend([
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
            ]);
            cells
        },
    );
    draw_skew(frame, area, &skew, theme);
}

/// The fleet's Flux versions on the right of the table's top border, when any cluster reports
/// one: version skew at a glance. Versions are left out from the rarest until it fits.
fn draw_skew(frame: &mut Frame, area: Rect, skew: &Skew, theme: &Theme) {
    if skew.versions.is_empty() {
        return;
    }
    // The table's own title keeps its room on the left.
    let room = usize::from(area.width).saturating_sub(36);
    let mut shown = skew.versions.len();
    let text = loop {
        let mut parts: Vec<String> = skew.versions[..shown]
            .iter()
            .map(|(v, n)| format!("{v} on {n}"))
            .collect();
        let more = skew.versions.len() - shown;
        if more > 0 {
            parts.push(format!("{more} more"));
        }
        if skew.unreported > 0 {
            parts.push(format!("{} without a report", skew.unreported));
        }
        let text = format!(" Flux {} ", parts.join(" · "));
        if text.chars().count() <= room || shown <= 1 {
            break text;
        }
        shown -= 1;
    };
    let width = u16::try_from(text.chars().count()).unwrap_or(u16::MAX);
    if usize::from(width) > room {
        return;
    }
    let at = Rect {
        x: area.x + area.width.saturating_sub(width + 2),
        y: area.y,
        width,
        height: 1,
    };
    let slot = if skew.skewed() {
        Slot::Warning
    } else {
        Slot::Title
    };
    frame.render_widget(Span::styled(text, theme.style(slot)), at);
}

/// The version most of a workspace's clusters run, and how many others run there (`+2`).
fn flux_cell<'a>(index: &'a Index, ws: &WorkspaceEntry, theme: &Theme) -> Cell<'a> {
    let clusters = ws.clusters.iter().filter_map(|c| index.cluster(*c));
    let skew = Skew::of(clusters.map(|c| c.report.as_deref()));
    let Some(main) = skew.main() else {
        return Cell::from(Span::styled("—", theme.style(Slot::Dim)));
    };
    if !skew.skewed() {
        return Cell::from(main);
    }
    let others = skew.versions.len() - 1;
    Cell::from(Span::styled(
        format!("{main} +{others}"),
        theme.style(Slot::Warning),
    ))
}

/// The worst thing in a workspace in one line: clusters that cannot be watched first, then the
/// worst object of the cluster with the most failures (a root cause before what it holds back).
/// Looks at one cluster's objects only.
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
        let mut flapping = ws
            .clusters
            .iter()
            .filter_map(|c| index.cluster(*c))
            .filter(|c| c.connection.is_flapping());
        if let Some(first) = flapping.next() {
            let n = 1 + flapping.count();
            let s = if n == 1 { "" } else { "s" };
            let said = first.connection.restarts_said().unwrap_or_default();
            return (
                format!("{n} cluster{s} live, flapping: {} {said}", first.info.name),
                Slot::Warning,
            );
        }
        return if pending > 0 {
            (format!("{pending} connecting"), Slot::Pending)
        } else {
            ("—".into(), Slot::Dim)
        };
    };
    // The worst object, a root cause before what it holds back.
    let held = |o: &FluxSummary| {
        cluster
            .graph
            .cause(&o.key)
            .is_some_and(|cause| !cause.held_by(&o.key).is_empty())
    };
    let object = cluster.objects.values().min_by_key(|o| (o.health, held(o)));
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
        // Counted by its report: the objects are not known until it is opened.
        None => (
            format!(
                "{} failing on {}, by its FluxReport",
                cluster.health.failing(),
                cluster.info.name
            ),
            Slot::Failed,
        ),
    }
}

/// The workspace table, and the fleet map under it: the table keeps at least a few rows, the map
/// takes what it needs of the rest (fewer clusters per cell when it has less). None: no room.
fn split(model: &Model, body: Rect) -> (Rect, Option<Rect>) {
    let rows = &model.rows().ids;
    let table_full = u16::try_from(rows.len() + 3).unwrap_or(u16::MAX);
    let inner = body.width.saturating_sub(2);
    let needed = map::lines_needed(model.index(), rows, inner).saturating_add(2);
    if needed <= 2 {
        return (body, None);
    }
    let table = if table_full.saturating_add(needed) <= body.height {
        table_full
    } else {
        body.height.saturating_sub(needed).max(table_full.min(6))
    }
    .min(body.height);
    let room = needed.min(body.height - table);
    if room < 3 {
        return (body, None);
    }
    let [table_area, map_area, _] = body.layout(&Layout::vertical([
        Constraint::Length(table),
        Constraint::Length(room),
        Constraint::Min(0),
    ]));
    (table_area, Some(map_area))
}

/// The fleet map's room inside its border, at this body size.
pub fn map_room(model: &Model, body: Rect) -> (u16, u16) {
    match split(model, body) {
        (_, Some(area)) => (area.width.saturating_sub(2), area.height.saturating_sub(2)),
        (_, None) => (0, 0),
    }
}

fn slot(mark: Mark) -> Slot {
    match mark {
        Mark::Unwatched(phase) => Slot::of_phase(phase),
        Mark::Failing(_, Stall::Yes) | Mark::Copy(Copy::Stuck) => Slot::Stalled,
        Mark::Failing(_, Stall::No) | Mark::Copy(Copy::Failing) | Mark::Age(Age::Old) => {
            Slot::Failed
        }
        Mark::Progressing | Mark::Copy(Copy::Behind) | Mark::Age(Age::Hour) => Slot::Progressing,
        Mark::Age(Age::Flapping) => Slot::Warning,
        Mark::Suspended | Mark::Copy(Copy::Suspended) => Slot::Suspended,
        Mark::Connecting | Mark::Age(Age::Never) => Slot::Pending,
        Mark::Ready | Mark::Copy(Copy::Current) | Mark::Age(Age::Now | Age::Minutes) => Slot::Ready,
        Mark::Empty | Mark::Copy(Copy::Absent) => Slot::NotApplicable,
    }
}

/// Every cluster as a glyph in its health's colour, grouped by workspace; the legend below.
fn draw_map(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme, shading: &map::Shading) {
    let index = model.index();
    let inner_width = area.width.saturating_sub(2);
    let map = map::layout(
        index,
        &model.rows().ids,
        inner_width,
        area.height.saturating_sub(2),
    );
    let focus = model.screen().map;
    let mut title = format!(" Fleet map · {} clusters", map.clusters.len());
    match (shading.mode, &shading.followed) {
        (MapMode::Health, _) => {}
        (MapMode::Rollout, Some((key, _))) => title.push_str(&format!(
            " · rollout of {} {}/{}",
            key.kind, key.namespace, key.name
        )),
        (MapMode::Rollout, None) => {
            title.push_str(" · rollout: select one in the rollout view (v)");
        }
        (MapMode::Freshness, _) => title.push_str(" · freshness: since its last event or report"),
    }
    if map.per_cell > 1 {
        title.push_str(&format!(
            " · a cell is up to {} (the worst shown)",
            map.per_cell
        ));
    }
    if map.left_out > 0 {
        title.push_str(&format!(" · {} workspaces not shown", map.left_out));
    }
    title.push(' ');
    let mut legend = vec![Span::raw(" ")];
    let failing = Mark::Failing(map::Degree::Few, Stall::No);
    for mark in map::legend(shading.mode) {
        let text = match mark {
            // The three degrees of failing in one entry, light to heavy.
            Mark::Failing(map::Degree::Few, _) => "░▒▓ failing <10% <50% more".to_string(),
            Mark::Failing(..) => continue,
            _ => format!("{} {}", mark.glyph(), mark.name()),
        };
        let style = if matches!(mark, Mark::Failing(..)) {
            slot(failing)
        } else {
            slot(*mark)
        };
        legend.push(Span::styled(text, theme.style(style)));
        legend.push(Span::raw("  "));
    }
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(if focus.is_some() {
            Slot::BorderFocused
        } else {
            Slot::Border
        }))
        .title(Span::styled(title, theme.style(Slot::Title)))
        .title_bottom(Line::from(legend));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let buffer = frame.buffer_mut();
    for label in &map.labels {
        buffer.set_string(
            inner.x + label.x,
            inner.y + label.y,
            &label.text,
            theme.style(Slot::Header),
        );
    }
    let selected = theme.style(Slot::Selected);
    for (i, cell) in map.cells.iter().enumerate() {
        let Some((_, mark)) = map.worst(shading, index, i) else {
            continue;
        };
        let mut style = theme.style(slot(mark));
        if focus == Some(i) {
            style = style.patch(selected);
        }
        let mut glyph = [0u8; 4];
        buffer.set_string(
            inner.x + cell.x,
            inner.y + cell.y,
            mark.glyph().encode_utf8(&mut glyph),
            style,
        );
    }
}

/// What the status line says of the cell under the map's cursor: its (worst) cluster and, in
/// the map's mode, its figures.
pub fn map_status(model: &Model, shading: &map::Shading) -> Option<String> {
    let at = model.screen().map?;
    let (width, height) = model.fit().map_room;
    let map = map::layout(model.index(), &model.rows().ids, width, height);
    let (id, mark) = map.worst(shading, model.index(), at)?;
    let cluster = model.index().cluster(id)?;
    let mut text = format!(" {} ({})", cluster.info.name, cluster.info.workspace);
    match mark {
        Mark::Unwatched(phase) => text.push_str(&format!(" · {}", phase.as_str())),
        Mark::Copy(copy) => {
            let place = shading.followed.as_ref().and_then(|(_, p)| p.get(&id));
            match place {
                Some(p) => {
                    let runs = p.revision.as_ref().map_or("nothing yet".to_string(), |r| {
                        crate::units::truncate_hex(&r.revision)
                    });
                    text.push_str(&format!(" · {} · runs {runs}", p.state()));
                    let why = p.reason(model.now());
                    if !why.is_empty() {
                        text.push_str(&format!(" · {why}"));
                    }
                }
                None if copy == Copy::Absent && shading.followed.is_some() => {
                    text.push_str(" · has no copy of it");
                }
                None => text.push_str(" · no rollout selected"),
            }
        }
        Mark::Age(_) => {
            let heard = shading
                .heard(cluster)
                .map_or("never".to_string(), |at| format!("{} ago", shading.ago(at)));
            text.push_str(&format!(
                " · last heard {heard} · {}",
                cluster.connection.phase.as_str()
            ));
        }
        other => text.push_str(&format!(" · {}", other.name())),
    }
    if let Some(restarts) = cluster.connection.restarts_said() {
        text.push_str(&format!(" · {restarts}"));
    }
    let h = &cluster.health;
    text.push_str(&format!(" · {} objects", h.total()));
    if h.failing() > 0 {
        text.push_str(&format!(" · {} failing", h.failing()));
    }
    for (n, what) in [
        (h.get(Health::Stalled), "stalled"),
        (h.get(Health::Progressing), "progressing"),
        (h.get(Health::Suspended), "suspended"),
    ] {
        if n > 0 {
            text.push_str(&format!(" · {n} {what}"));
        }
    }
    let more = map.clusters_of(at).len().saturating_sub(1);
    if more > 0 {
        text.push_str(&format!(" · and {more} more in this cell"));
    }
    Some(text)
}
