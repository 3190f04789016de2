//! Rendering: a pure function of the model and the theme. Nothing here mutates or waits (what a
//! frame learns of the model, such as its page size, is returned by [`measure`]); list views
//! build only the rows that are visible.

mod audit;
mod cluster;
mod detail;
mod drift;
mod fleet;
mod help;
mod history;
mod names;
mod objects;
mod proposals;
mod results;
mod rollout;
mod runs;
mod trace;
mod triage;
mod widgets;
mod workloads;
mod workspace;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::model::{Input, Model, View};
use crate::config::theme::{Slot, Theme};
use crate::fleet::Health;
use names::{cluster_name, scope_name, ws_name};

/// What a frame of `area` holds of the model: the body's rows (for paging and scrolling), how
/// far the fetched pane can scroll, and the room of the fleet map (the update function moves
/// over it). Read only: the loop applies it to the model (`Model::fit`) before drawing.
pub fn measure(model: &Model, theme: &Theme, area: Rect) -> crate::app::Fit {
    crate::app::Fit {
        body_rows: body_rows(area),
        fetched_max_scroll: fetched_max_scroll(model, theme, area),
        // Only the fleet view has a map; the others' rows are not workspaces to lay out.
        map_room: match model.screen().view {
            View::Fleet => fleet::map_room(model, area.layout::<4>(&screen())[1]),
            _ => (0, 0),
        },
    }
}

/// Rows of the body a list can use at this terminal size (for paging and scrolling).
pub fn body_rows(area: Rect) -> usize {
    // Header, status line and footer take one row each; the table's border and heading three.
    usize::from(area.height.saturating_sub(6)).max(1)
}

/// How far the detail view's events or YAML can scroll at this terminal size.
pub fn fetched_max_scroll(model: &Model, theme: &Theme, area: Rect) -> usize {
    let [_, body, _, _] = area.layout(&screen());
    let entries = match &model.screen().view {
        View::Audit => match model.reads().audit() {
            Some(Ok(entries)) => Some(entries.len()),
            _ => Some(0),
        },
        // The cursor, not a scroll: at most the last proposal.
        View::Proposals => {
            let listed = match model.reads().proposals() {
                Some(Ok(list)) => list.len(),
                _ => 0,
            };
            return listed.saturating_sub(1);
        }
        View::History { scope, .. } => Some(history::in_scope(model, *scope).len()),
        _ => None,
    };
    if let Some(entries) = entries {
        return entries.saturating_sub(usize::from(body.height.saturating_sub(2)));
    }
    if let View::Workloads { .. } = model.screen().view {
        return workloads::max_scroll(model, theme, body);
    }
    if let View::Trace(_) = model.screen().view {
        return trace::max_scroll(model, theme, body);
    }
    if let View::Tree(_) = model.screen().view {
        return trace::tree_max_scroll(model, theme, body);
    }
    detail::fetched_max_scroll(model, theme, body)
}

/// Header, body, footer, status line.
fn screen() -> Layout {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
}

pub fn render(frame: &mut Frame, model: &Model, theme: &Theme) {
    let [header, body, footer, status] = frame.area().layout(&screen());
    draw_header(frame, header, model, theme);
    // What the fleet map marks each cluster with, worked out once for the map and its status.
    let shading = (model.screen().view == View::Fleet).then(|| crate::app::map::Shading::of(model));
    match &model.screen().view {
        View::Fleet => fleet::draw(frame, body, model, theme, shading.as_ref()),
        View::Workspace(w) => workspace::draw(frame, body, model, theme, *w),
        View::Cluster(c) => cluster::draw(frame, body, model, theme, *c),
        View::Objects { scope, kind } => objects::draw(frame, body, model, theme, *scope, *kind),
        View::Triage { scope } => triage::draw(frame, body, model, theme, *scope),
        View::Rollout { scope, kind } => rollout::draw(frame, body, model, theme, *scope, *kind),
        View::Matrix { scope, key } => rollout::draw_matrix(frame, body, model, theme, *scope, key),
        View::Detail { cluster, key } => detail::draw(frame, body, model, theme, *cluster, key),
        View::Help { of } => help::draw(frame, body, model, theme, *of),
        View::Results => results::draw(frame, body, model, theme),
        View::Audit => audit::draw(frame, body, model, theme),
        View::Proposals => proposals::draw(frame, body, model, theme),
        View::History { scope, since } => history::draw(frame, body, model, theme, *scope, *since),
        View::Workloads { key, clusters } => {
            workloads::draw(frame, body, model, theme, key, clusters.len())
        }
        View::Drift { .. } => drift::draw(frame, body, model, theme),
        View::Trace(asked) => trace::draw(frame, body, model, theme, asked),
        View::Tree(root) => trace::draw_tree(frame, body, model, theme, root),
    }
    if let Some(confirm) = model.confirming() {
        draw_confirm(frame, body, model, theme, confirm);
    }
    draw_footer(frame, footer, model, theme);
    draw_status(frame, status, model, theme, shading.as_ref());
}

/// `fleet ▸ core ▸ core-dev-004 ▸ Kustomization flux-system/apps`
fn breadcrumbs(model: &Model) -> Vec<String> {
    let index = model.index();
    model
        .screens()
        .iter()
        .map(|s| match &s.view {
            View::Fleet => "fleet".to_string(),
            View::Workspace(w) => ws_name(index, *w).to_string(),
            View::Cluster(c) => cluster_name(index, *c).to_string(),
            View::Objects { scope, kind } => format!(
                "{} in {}",
                kind.map_or("all objects".to_string(), |k| k.plural().to_string()),
                scope_name(index, *scope)
            ),
            View::Triage { scope } => format!("triage of {}", scope_name(index, *scope)),
            View::Rollout { scope, .. } => format!("rollouts in {}", scope_name(index, *scope)),
            View::Matrix { key, .. } => format!("{} {}/{}", key.kind, key.namespace, key.name),
            View::Detail { key, .. } => format!("{} {}/{}", key.kind, key.namespace, key.name),
            View::Help { .. } => "help".to_string(),
            View::Results => "results".to_string(),
            View::Audit => "audit".to_string(),
            View::Proposals => "proposals".to_string(),
            View::History { .. } => "history".to_string(),
            View::Workloads { key, .. } => format!("workloads of {} {}", key.kind, key.name),
            View::Drift { scope, key: None } => format!("drift in {}", scope_name(index, *scope)),
            View::Drift { key: Some(key), .. } => format!("drift of {} {}", key.kind, key.name),
            View::Trace(asked) => format!("trace of {} {}", asked.kind, asked.name),
            View::Tree(root) => format!("tree of {} {}", root.kind, root.name),
        })
        .collect()
}

fn draw_header(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    // The mode, always: whether a key here can change clusters.
    let mode = if model.settings().read_only {
        theme.style(Slot::Dim)
    } else {
        theme.style(Slot::Warning)
    };
    let mut spans = vec![
        Span::styled(" fluxfleet ", theme.style(Slot::Title)),
        Span::styled(format!("[{}] ", mode_text(model)), mode),
    ];
    for (i, crumb) in breadcrumbs(model).into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" ▸ ", theme.style(Slot::Dim)));
        }
        spans.push(Span::styled(crumb, theme.style(Slot::Breadcrumb)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `read-only`, `write`, or `write on 3/10 clusters`.
fn mode_text(model: &Model) -> String {
    let (writable, of) = model.settings().writable;
    if model.settings().read_only {
        "read-only".into()
    } else if writable > 0 && writable < of {
        format!("write on {writable}/{of} clusters")
    } else {
        "write".into()
    }
}

/// What is being typed, else a message, else the keys of this view.
fn draw_footer(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    if let Some(launch) = model.plugin_waiting() {
        let writes = if launch.writes { " (it may write)" } else { "" };
        let line = Line::from(vec![
            Span::styled(
                format!("run {}{writes}? ", launch.describe()),
                theme.style(Slot::Warning),
            ),
            Span::styled("<enter>/<y> run  <esc>/<n> cancel", theme.style(Slot::Key)),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let line = match (model.input(), model.flash()) {
        (Input::Command(text), _) => {
            let hint = crate::app::prompt::completions(model, text)
                .into_iter()
                .take(6)
                .collect::<Vec<_>>()
                .join("  ");
            Line::from(vec![
                Span::styled(format!(":{text}█"), theme.style(Slot::CommandLine)),
                Span::styled(format!("  {hint}"), theme.style(Slot::Dim)),
            ])
        }
        (Input::Filter, _) => Line::from(Span::styled(
            format!("/{}█", model.screen().filter),
            theme.style(Slot::CommandLine),
        )),
        (Input::None, Some(flash)) => {
            Line::from(Span::styled(flash.to_string(), theme.style(Slot::Warning)))
        }
        (Input::None, None) => hints(model, theme),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// `<enter> open  </> filter  <!> failing …` from the keymap in effect.
fn hints(model: &Model, theme: &Theme) -> Line<'static> {
    let context = model.screen().view.context();
    let mut spans = Vec::new();
    for (action, keys) in model.keymap().effective(context) {
        let Some(label) = action.hint() else { continue };
        // Read-only: the keys that would change something are not offered.
        let writes = action.verb().is_some()
            || matches!(
                action,
                crate::app::key_action::Action::Mark | crate::app::key_action::Action::Retry
            );
        if model.settings().read_only && writes {
            continue;
        }
        if let Some(key) = keys.first() {
            spans.push(Span::styled(format!("<{key}>"), theme.style(Slot::Key)));
            spans.push(Span::styled(format!(" {label}  "), theme.style(Slot::Dim)));
        }
    }
    for (i, key) in model.keymap().plugins_in(context) {
        let Some(plugin) = model.settings().plugins.get(i) else {
            continue;
        };
        // Read-only: a plugin that would write is not offered, one that can be told so is.
        if model.settings().read_only && plugin.writes && plugin.read_only_args.is_empty() {
            continue;
        }
        spans.push(Span::styled(format!("<{key}>"), theme.style(Slot::Key)));
        spans.push(Span::styled(
            format!(" {}  ", plugin.name),
            theme.style(Slot::Dim),
        ));
    }
    Line::from(spans)
}

/// Clusters live / connecting / failed, objects, failing, mode, warnings.
fn draw_status(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    shading: Option<&crate::app::map::Shading>,
) {
    let index = model.index();
    let phases = index.phases();
    let live = phases.up();
    let health = index.health();
    let bar = theme.style(Slot::StatusBar);
    // The mode, then warnings: on a narrow terminal the end of the line is cut off.
    let mut spans = vec![Span::styled(
        format!(" {} │", mode_text(model)),
        bar.patch(theme.style(Slot::Title)),
    )];
    if !model.marks().is_empty() {
        spans.push(Span::styled(
            format!(" {} marked │", model.marks().len()),
            bar.patch(theme.style(Slot::Match)),
        ));
    }
    if let Some(first) = model.warnings().first() {
        let more = match model.warnings().len() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        spans.push(Span::styled(
            format!(" ⚠ {first}{more} "),
            theme.style(Slot::Warning),
        ));
    }
    // On the fleet map: the cluster under the cursor instead of the fleet's counts; on a triage
    // group: why it broke.
    let instead = match model.screen().view {
        View::Fleet => shading.and_then(|shading| fleet::map_status(model, shading)),
        View::Triage { .. } => triage::triage_status(model),
        _ => None,
    };
    if let Some(text) = instead {
        spans.push(Span::styled(text, bar));
        frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
        return;
    }
    // Summarized clusters are seen, though not watched live.
    let summarized = phases.get(crate::fleet::Phase::Summary);
    let text = match summarized {
        0 => format!(" clusters {live}/{} live", phases.total()),
        n => {
            // How stale the summaries may be: the oldest report counted.
            let oldest = index
                .entries()
                .filter(|(_, c)| c.connection.phase == crate::fleet::Phase::Summary)
                .filter_map(|(_, c)| c.report.as_ref().map(|r| r.read_at))
                .min();
            let oldest = oldest.map_or(String::new(), |t| {
                format!(
                    ", oldest report {}",
                    crate::units::age(Some(t), model.now())
                )
            });
            format!(
                " clusters {live}/{} seen ({} live, {n} by summary{oldest})",
                phases.total(),
                live - n
            )
        }
    };
    spans.push(Span::styled(text, bar));
    if phases.pending() > 0 {
        spans.push(Span::styled(
            format!(" · {} connecting", phases.pending()),
            bar,
        ));
    }
    if phases.failed() > 0 {
        spans.push(Span::styled(
            format!(" · {} failed", phases.failed()),
            bar.patch(theme.style(Slot::Down)),
        ));
    }
    spans.push(Span::styled(
        format!(" │ objects {}", index.object_count()),
        bar,
    ));
    let failing = health.failing();
    if failing > 0 {
        spans.push(Span::styled(
            format!(" · {failing} failing"),
            bar.patch(theme.style(Slot::of_health(Health::Failed))),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}

/// The confirmation of an action: what, how many objects on how many clusters and workspaces,
/// the first targets, and what to type.
fn draw_confirm(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    c: &crate::app::model::Unconfirmed,
) {
    use crate::app::model::Stage;
    use ratatui::widgets::{Block, BorderType, Clear, Wrap};
    let index = model.index();
    let clusters: std::collections::HashSet<_> = c.targets.iter().map(|(id, _)| *id).collect();
    let workspaces: std::collections::HashSet<_> = clusters
        .iter()
        .filter_map(|id| index.cluster(*id).map(|cl| cl.workspace))
        .collect();
    let n = c.targets.len();
    let text = theme.style(Slot::Text);
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                "{} in {}",
                c.tally.describe(c.verb),
                crate::units::count(workspaces.len(), "workspace", "workspaces"),
            ),
            theme.style(Slot::Title),
        )),
        Line::default(),
    ];
    if let Some(p) = &c.proposal {
        let by = crate::fleet::workload::visible(&p.proposed_by).into_owned();
        lines.insert(
            1,
            Line::from(Span::styled(
                format!(
                    "approving proposal {} by {by}: exactly the patches it shows",
                    p.id
                ),
                text,
            )),
        );
    }
    let width = usize::from(area.width.saturating_sub(8));
    let preview = usize::from(area.height.saturating_sub(12)).clamp(1, 8);
    for (id, key) in c.targets.iter().take(preview) {
        let cluster = cluster_name(index, *id);
        let line = format!("  {cluster}  {} {}/{}", key.kind, key.namespace, key.name);
        lines.push(Line::from(Span::styled(
            line.chars().take(width).collect::<String>(),
            text,
        )));
    }
    if n > preview {
        lines.push(Line::from(Span::styled(
            format!("  … and {} more", n - preview),
            theme.style(Slot::Dim),
        )));
    }
    lines.push(Line::default());
    // A reason given already (a halted rollout's) is shown before it is recorded.
    if c.stage != Stage::Reason && !c.reason.is_empty() {
        lines.push(Line::from(Span::styled(
            format!("reason: {}", c.reason),
            text,
        )));
    }
    let key = theme.style(Slot::Key);
    match c.stage {
        Stage::Reason => {
            lines.push(Line::from(vec![
                Span::styled("reason (optional, recorded on the objects): ", text),
                Span::styled(format!("{}▏", c.reason), theme.style(Slot::CommandLine)),
            ]));
            lines.push(Line::from(Span::styled("<enter> next  <esc> cancel", key)));
        }
        Stage::Yes => lines.push(Line::from(Span::styled(
            "<enter> or <y> to confirm, <esc> or <n> to cancel",
            key,
        ))),
        Stage::Count => {
            lines.push(Line::from(vec![
                Span::styled(format!("type {} to confirm: ", c.tally.sent), text),
                Span::styled(format!("{}▏", c.typed), theme.style(Slot::CommandLine)),
            ]));
            lines.push(Line::from(Span::styled(
                "<enter> confirm  <esc> cancel",
                key,
            )));
        }
    }
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let width = area.width.saturating_sub(4).min(100);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Slot::Warning))
        .title(Span::styled(" confirm ", theme.style(Slot::Warning)));
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        popup,
    );
}
