//! One object: its health and why, revision and source, dependencies, reconcile requests; events
//! and YAML fetched from its cluster on demand.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use crate::app::links::{HELD_SHOWN, Role, links};
use crate::app::model::{Fetched, Model};
use crate::config::theme::{Slot, Theme};
use crate::fleet::suspect::How;
use crate::fleet::{ClusterEntry, ClusterId, FluxSummary, ObjectKey};
use crate::units::age;

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    c: ClusterId,
    key: &ObjectKey,
) {
    let Some(cluster) = model.index().cluster(c) else {
        return;
    };
    let facts = facts(model, theme, cluster, key);
    let [top, extra] = split(area, &facts);
    let block = |title: String| {
        Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(Slot::BorderFocused))
            .title(Span::styled(title, theme.style(Slot::Title)))
    };
    let title = format!(" {} {}/{} ", key.kind, key.namespace, key.name);
    frame.render_widget(facts.block(block(title)), top);
    let (title, pane) = fetched_pane(model, theme, &cluster.info.name);
    let max = last_first_line(&pane, extra);
    let pane = pane.block(block(title));
    let scroll = u16::try_from(model.reads().fetched_scroll().min(max)).unwrap_or(u16::MAX);
    frame.render_widget(pane.scroll((scroll, 0)), extra);
}

/// The facts pane above, as tall as its (wrapped) lines, and the events / YAML pane below, which
/// keeps at least three lines of text.
fn split(area: Rect, facts: &Paragraph) -> [Rect; 2] {
    let wanted = facts.line_count(area.width.saturating_sub(2)) + 2;
    let most = area.height.saturating_sub(5).max(3);
    let height = u16::try_from(wanted).unwrap_or(u16::MAX).min(most);
    area.layout(&Layout::vertical([
        Constraint::Length(height),
        Constraint::Min(0),
    ]))
}

/// What is known about the object from the watch: health and why, revision, source, ….
fn facts(
    model: &Model,
    theme: &Theme,
    cluster: &ClusterEntry,
    key: &ObjectKey,
) -> Paragraph<'static> {
    let index = model.index();
    let label = theme.style(Slot::Header);
    let field = |name: &str, value: Span<'static>| {
        Line::from(vec![Span::styled(format!("{name:<24}"), label), value])
    };
    let plain = |text: String| Span::styled(text, theme.style(Slot::Text));
    let mut lines = vec![field(
        "cluster",
        plain(format!(
            "{} / {}",
            super::names::ws_name(index, cluster.workspace),
            cluster.info.name
        )),
    )];
    match cluster.objects.get(key) {
        None => lines.push(Line::from(Span::styled(
            "this object is no longer on the cluster (or the cluster is not watched right now)",
            theme.style(Slot::Warning),
        ))),
        Some(o) => {
            let health = Span::styled(
                format!(
                    "{}{}",
                    o.health,
                    if o.suspended { " (suspended)" } else { "" }
                ),
                theme.style(Slot::of_health(o.health)),
            );
            lines.push(field("health", health));
            if let Some(suspension) = o.suspension() {
                lines.push(field(
                    "suspended",
                    Span::styled(suspension, theme.style(Slot::Suspended)),
                ));
            }
            let ready = o.ready.map_or("-".to_string(), |r| format!("{r:?}"));
            lines.push(field(
                "ready",
                plain(format!("{ready} since {} ago", age(o.since, model.now()))),
            ));
            lines.push(field(
                "reason",
                plain(o.reason.as_deref().unwrap_or("-").to_string()),
            ));
            lines.push(field(
                "message",
                Span::styled(
                    o.message.as_deref().unwrap_or("-").to_string(),
                    theme.style(if o.health.is_failing() {
                        Slot::of_health(o.health)
                    } else {
                        Slot::Text
                    }),
                ),
            ));
            lines.push(field(
                "revision",
                plain(o.revision.as_deref().unwrap_or("-").to_string()),
            ));
            // Live objects that differ from the release (helm-controller's drift detection).
            if let Some(drifted) = o.rollout.as_ref().and_then(|r| r.helm().drifted.as_deref()) {
                lines.push(field(
                    "drifted",
                    Span::styled(drifted.to_string(), theme.style(Slot::Warning)),
                ));
            }
            if o.health.is_not_ready() && !o.suspended {
                lines.push(field(
                    "changed before",
                    plain(change_text(model, cluster, o)),
                ));
            }
            lines.extend(link_lines(model, theme, cluster, key));
            let observed = o
                .observed_generation
                .map_or("-".to_string(), |g| g.to_string());
            lines.push(field(
                "inventory",
                plain(o.inventory().map_or("-".to_string(), |n| {
                    format!("{n} object{}", if n == 1 { "" } else { "s" })
                })),
            ));
            lines.push(field(
                "generation",
                plain(format!("{} (observed {observed})", o.generation)),
            ));
            lines.push(field(
                "reconcile requested",
                plain(o.requested_at().unwrap_or("-").to_string()),
            ));
            lines.push(field(
                "last handled reconcile",
                plain(o.last_handled_reconcile_at().unwrap_or("-").to_string()),
            ));
        }
    }
    Paragraph::new(lines).wrap(Wrap { trim: false })
}

/// The change before a not-ready object failed, as the detail view says it.
fn change_text(model: &Model, cluster: &ClusterEntry, o: &FluxSummary) -> String {
    let window = model.settings().rollout.rules.suspect_window;
    match crate::fleet::suspect::change_before(cluster, o, window) {
        None => "nothing it records: the cause is outside the GitOps change (infrastructure, \
                 credentials, an upstream registry)"
            .to_string(),
        Some(change) if !change.how.is_revision() => change.said(),
        Some(change) => {
            let how = match change.how {
                How::Tried => "tried",
                How::Applied => "applied",
                How::Source | How::Spec | How::Values => "its source produced",
            };
            let when = match (change.at, o.since) {
                (Some(at), Some(failed)) => {
                    format!(", {} before it failed", crate::units::age(Some(at), failed))
                }
                _ => String::new(),
            };
            format!("{how} {}{when}", change.revision)
        }
    }
}

/// The objects it links to — chart, source, dependencies, what holds it back and what it holds
/// back — each with its health; the selected one (enter opens it) highlighted.
fn link_lines(
    model: &Model,
    theme: &Theme,
    cluster: &ClusterEntry,
    key: &ObjectKey,
) -> Vec<Line<'static>> {
    let (links, held) = links(cluster, key);
    let label = theme.style(Slot::Header);
    let screen = model.screen();
    let mut lines = Vec::new();
    let mut last = None;
    let none = |role: Role| {
        Line::from(vec![
            Span::styled(format!("{:<24}", role.label()), label),
            Span::styled("-", theme.style(Slot::Text)),
        ])
    };
    for (i, link) in links.iter().enumerate() {
        // "dependsOn -" in its place when it depends on nothing, as before the links.
        if link.role > Role::DependsOn && last.is_none_or(|r| r < Role::DependsOn) {
            lines.push(none(Role::DependsOn));
        }
        let name = if last == Some(link.role) {
            String::new()
        } else {
            link.role.label().to_string()
        };
        last = Some(link.role);
        let k = &link.key;
        let mut text = Span::styled(
            format!("{} {}/{}", k.kind, k.namespace, k.name),
            theme.style(Slot::Text),
        );
        if i == screen.cursor && model.reads().fetched().is_none() {
            text = text.style(theme.style(Slot::Selected));
        }
        let state = match cluster.objects.get(k) {
            Some(o) => Span::styled(
                format!(
                    "  {}{}",
                    o.health,
                    o.reason
                        .as_deref()
                        .map(|r| format!(" {r}"))
                        .unwrap_or_default()
                ),
                theme.style(Slot::of_health(o.health)),
            ),
            None => Span::styled("  not on the cluster", theme.style(Slot::Dim)),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<24}"), label),
            text,
            state,
        ]));
    }
    if held > HELD_SHOWN {
        lines.push(Line::from(vec![
            Span::styled(format!("{:<24}", ""), label),
            Span::styled(
                format!("… and {} more", held - HELD_SHOWN),
                theme.style(Slot::Dim),
            ),
        ]));
    }
    if last.is_none_or(|r| r < Role::DependsOn) {
        lines.push(none(Role::DependsOn));
    }
    lines
}

/// How far the fetched pane can scroll in a body of `area`: its last first line.
pub fn fetched_max_scroll(model: &Model, theme: &Theme, area: Rect) -> usize {
    let crate::app::model::View::Detail { cluster, key } = &model.screen().view else {
        return 0;
    };
    let Some(cluster) = model.index().cluster(*cluster) else {
        return 0;
    };
    let [_, extra] = split(area, &facts(model, theme, cluster, key));
    let (_, pane) = fetched_pane(model, theme, &cluster.info.name);
    last_first_line(&pane, extra)
}

/// The first line to show so that the last one is at the bottom of `area` (a bordered pane).
fn last_first_line(pane: &Paragraph, area: Rect) -> usize {
    // The border takes a line above and below, a column on each side.
    pane.line_count(area.width.saturating_sub(2))
        .saturating_sub(usize::from(area.height.saturating_sub(2)))
}

/// The events or YAML below the facts, with its title.
fn fetched_pane(model: &Model, theme: &Theme, cluster: &str) -> (String, Paragraph<'static>) {
    let dim = theme.style(Slot::Dim);
    let message = |text: String, slot: Slot| {
        Paragraph::new(text)
            .style(theme.style(slot))
            .wrap(Wrap { trim: false })
    };
    match model.reads().fetched() {
        None => (
            " events · yaml · runs · workloads ".into(),
            message(
                "press e for the events, y for the YAML, h for its last runs, w for what broke \
                 inside: its workloads, pods, Warning events and log tails (read from the cluster), \
                 T for where it comes from on every cluster, i for its tree on every cluster"
                    .into(),
                Slot::Dim,
            ),
        ),
        Some(Fetched::Workloads(folded)) => (
            " workloads · what broke inside ".into(),
            Paragraph::new(super::workloads::lines(folded, theme)).wrap(Wrap { trim: false }),
        ),
        // A trace has a view of its own; shown here only if it was left there.
        Some(Fetched::Trace(trace)) => (
            " trace ".into(),
            Paragraph::new(super::trace::lines(trace, theme)).wrap(Wrap { trim: false }),
        ),
        Some(Fetched::Tree(tree)) => (
            " tree ".into(),
            Paragraph::new(super::trace::tree_lines(tree, theme)).wrap(Wrap { trim: false }),
        ),
        Some(Fetched::Loading(what)) => (
            format!(" {what} "),
            message(format!("reading {what} from {cluster}…"), Slot::Dim),
        ),
        Some(Fetched::Failed(what, error)) => {
            (format!(" {what} "), message(error.clone(), Slot::Error))
        }
        Some(Fetched::Events(events)) if events.is_empty() => (
            " events ".into(),
            message(
                "no events for this object (the API server keeps them for about an hour)".into(),
                Slot::Dim,
            ),
        ),
        Some(Fetched::Events(events)) => {
            let own = match &model.screen().view {
                crate::app::model::View::Detail { key, .. } => format!("{}/{}", key.kind, key.name),
                _ => String::new(),
            };
            let lines: Vec<Line<'static>> = events
                .iter()
                .map(|e| {
                    let (kind, slot) = if e.warning {
                        ("Warning", Slot::Error)
                    } else {
                        ("Normal", Slot::Dim)
                    };
                    let count = if e.count > 1 {
                        format!(" (×{})", e.count)
                    } else {
                        String::new()
                    };
                    // Its source's events say whose they are, as `flux events` does.
                    let whose = match e.object == own {
                        true => String::new(),
                        false => format!("{} ", e.object),
                    };
                    Line::from(vec![
                        Span::styled(
                            format!(
                                "{:>5} ",
                                e.last_seen.map_or("-".into(), |t| age(Some(t), model.now()))
                            ),
                            dim,
                        ),
                        Span::styled(format!("{kind:<8}"), theme.style(slot)),
                        Span::styled(whose, dim),
                        Span::styled(format!("{}{count} ", e.reason), theme.style(Slot::Header)),
                        Span::styled(e.message.clone(), theme.style(Slot::Text)),
                    ])
                })
                .collect();
            (
                format!(" events · {} · newest first ", events.len()),
                Paragraph::new(lines).wrap(Wrap { trim: false }),
            )
        }
        Some(Fetched::Runs(runs)) => {
            let kind = match &model.screen().view {
                crate::app::model::View::Detail { key, .. } => key.kind,
                _ => crate::fleet::FluxKind::Kustomization,
            };
            (
                " runs · status.history · newest first ".into(),
                Paragraph::new(super::runs::lines(kind, runs, model.now(), theme)),
            )
        }
        Some(Fetched::Yaml(yaml)) => (
            " yaml (managedFields removed) ".into(),
            Paragraph::new(yaml.clone()).style(theme.style(Slot::Text)),
        ),
    }
}
