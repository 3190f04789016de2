//! One object: its health and why, revision and source, dependencies, reconcile requests; events
//! and YAML fetched from its cluster on demand.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use crate::app::model::{Fetched, Model};
use crate::config::theme::{Slot, Theme};
use crate::export::table::age;
use crate::fleet::{ClusterId, ObjectKey};

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    model: &Model,
    theme: &Theme,
    c: ClusterId,
    key: &ObjectKey,
) {
    let index = &model.index;
    let Some(cluster) = index.cluster(c) else {
        return;
    };
    let [facts, extra] = area.layout(&Layout::vertical([
        Constraint::Length(14),
        Constraint::Min(0),
    ]));
    let label = theme.style(Slot::Header);
    let field = |name: &str, value: Span<'static>| {
        Line::from(vec![Span::styled(format!("{name:<24}"), label), value])
    };
    let plain = |text: String| Span::styled(text, theme.style(Slot::Text));
    let mut lines = vec![field(
        "cluster",
        plain(format!(
            "{} / {}",
            super::ws_name(index, cluster.workspace),
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
            let ready = o.ready.map_or("-".to_string(), |r| format!("{r:?}"));
            lines.push(field(
                "ready",
                plain(format!(
                    "{ready} since {} ago",
                    age(o.last_transition, model.now)
                )),
            ));
            lines.push(field(
                "reason",
                plain(o.reason.as_deref().unwrap_or("-").to_string()),
            ));
            lines.push(field(
                "message",
                Span::styled(
                    o.message.as_deref().unwrap_or("-").to_string(),
                    theme.style(if o.health.is_problem() {
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
            let source = o.source.as_ref().map_or("-".to_string(), |s| {
                let ns = if s.namespace.is_empty() {
                    key.namespace.as_ref()
                } else {
                    s.namespace.as_ref()
                };
                format!("{} {ns}/{}", s.kind, s.name)
            });
            lines.push(field("source", plain(source)));
            let deps: Vec<String> = o
                .depends_on
                .iter()
                .map(|d| {
                    let ns = if d.namespace.is_empty() {
                        key.namespace.as_ref()
                    } else {
                        d.namespace.as_ref()
                    };
                    format!("{ns}/{}", d.name)
                })
                .collect();
            lines.push(field(
                "dependsOn",
                plain(if deps.is_empty() {
                    "-".into()
                } else {
                    deps.join(", ")
                }),
            ));
            let observed = o
                .observed_generation
                .map_or("-".to_string(), |g| g.to_string());
            lines.push(field(
                "generation",
                plain(format!("{} (observed {observed})", o.generation)),
            ));
            lines.push(field(
                "reconcile requested",
                plain(o.requested_at.as_deref().unwrap_or("-").to_string()),
            ));
            lines.push(field(
                "last handled reconcile",
                plain(
                    o.last_handled_reconcile_at
                        .as_deref()
                        .unwrap_or("-")
                        .to_string(),
                ),
            ));
        }
    }
    let block = |title: String| {
        Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(Slot::BorderFocused))
            .title(Span::styled(title, theme.style(Slot::Title)))
    };
    let title = format!(" {} {}/{} ", key.kind, key.namespace, key.name);
    frame.render_widget(
        Paragraph::new(lines)
            .block(block(title))
            .wrap(Wrap { trim: false }),
        facts,
    );
    let (title, body, slot) = match &model.fetched {
        None => (
            " events · yaml ".to_string(),
            "press e for events, y for the YAML (fetched from the cluster)".to_string(),
            Slot::Dim,
        ),
        Some(Fetched::Loading(what)) => (
            format!(" {what} "),
            format!("fetching {what} from {}…", cluster.info.name),
            Slot::Dim,
        ),
        Some(Fetched::Text(what, text)) => (format!(" {what} "), text.clone(), Slot::Text),
        Some(Fetched::Failed(what, error)) => (format!(" {what} "), error.clone(), Slot::Error),
    };
    frame.render_widget(
        Paragraph::new(body)
            .style(theme.style(slot))
            .block(block(title))
            .wrap(Wrap { trim: false }),
        extra,
    );
}
