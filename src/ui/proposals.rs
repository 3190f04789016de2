//! `:proposals`: what assistants proposed through `fluxfleet mcp --propose`, newest first, and the
//! selected one whole — who asked, for whom and why, each target with its exact patches (as the
//! confirmation will send them), the decision and each target's outcome. `a` approves, `x`
//! rejects.

use jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use crate::app::model::Model;
use crate::config::theme::{Slot, Theme};
use crate::fleet::workload::visible;
use crate::proposals::{Decision, Proposal, ProposalStatus};
use crate::units::age;

/// Text from an assistant or a cluster, on one line with its controls made visible.
fn shown(text: &str) -> String {
    visible(&text.replace(['\t', '\n'], " ")).into_owned()
}

pub fn draw(frame: &mut Frame, area: Rect, model: &Model, theme: &Theme) {
    let list = match model.reads().proposals() {
        None => return message(frame, area, theme, "reading the proposals…", Slot::Dim),
        Some(Err(e)) => return message(frame, area, theme, &e.to_string(), Slot::Error),
        Some(Ok(list)) if list.is_empty() => {
            let none = "no proposal yet: assistants propose through `fluxfleet mcp --propose`";
            return message(frame, area, theme, none, Slot::Dim);
        }
        Some(Ok(list)) => list,
    };
    let selected = model.reads().fetched_scroll().min(list.len() - 1);
    let rows = u16::try_from(list.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let [top, bottom] = Layout::vertical([
        Constraint::Max(rows.min(area.height / 2)),
        Constraint::Fill(1),
    ])
    .areas(area);
    let room = usize::from(top.height.saturating_sub(2)).max(1);
    let first = selected.saturating_sub(room - 1);
    let lines: Vec<Line> = list
        .iter()
        .enumerate()
        .skip(first)
        .take(room)
        .map(|(i, p)| row(p, model.now(), i == selected, theme))
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(framed(
            " proposals, newest first · a approve · x reject ",
            theme,
        )),
        top,
    );
    let p = &list[selected];
    let title = format!(" {} · {} ", p.id, p.action);
    // Wrapped: a person approves the patches whole, as they will be sent.
    frame.render_widget(
        Paragraph::new(detail(p, model.now(), theme))
            .wrap(Wrap { trim: false })
            .block(framed(&title, theme)),
        bottom,
    );
}

fn framed<'a>(title: &str, theme: &Theme) -> Block<'a> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.style(Slot::BorderFocused))
        .title(Span::styled(title.to_string(), theme.style(Slot::Title)))
}

fn message(frame: &mut Frame, area: Rect, theme: &Theme, text: &str, slot: Slot) {
    let line = Line::from(Span::styled(text.to_string(), theme.style(slot)));
    frame.render_widget(
        Paragraph::new(line).block(framed(" proposals ", theme)),
        area,
    );
}

/// `▶ p-3f9a21c4  pending   suspend 6 objects  mcp:claude-code  5m ago  expires in 55m  why…`
fn row(p: &Proposal, now: Timestamp, selected: bool, theme: &Theme) -> Line<'static> {
    let status = p.status(now);
    let slot = match status {
        ProposalStatus::Pending => Slot::Warning,
        ProposalStatus::Approved => Slot::Text,
        ProposalStatus::Rejected | ProposalStatus::Refused | ProposalStatus::Expired => Slot::Dim,
    };
    let mut style = theme.style(slot);
    if selected {
        style = theme.style(Slot::Selected);
    }
    let expires = match status {
        ProposalStatus::Pending => format!("expires in {}", age(Some(now), p.expires)),
        _ => String::new(),
    };
    let text = format!(
        "{} {}  {:<9} {} {}  {}  {} ago  {}  {}",
        if selected { "▶" } else { " " },
        p.id,
        status.as_str(),
        p.action,
        objects(p),
        shown(&p.proposed_by),
        age(Some(p.created), now),
        expires,
        shown(p.why.as_deref().unwrap_or_default()),
    );
    Line::from(Span::styled(text, style))
}

/// "6 objects", "6 objects (1 refused)".
fn objects(p: &Proposal) -> String {
    let n = crate::units::count(p.sends, "object", "objects");
    match p.refused {
        0 => n,
        refused => format!("{n} ({refused} refused)"),
    }
}

/// Who asked and why, the decision, then every target: its patches and how it ended.
fn detail(p: &Proposal, now: Timestamp, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Slot::Dim);
    let text = theme.style(Slot::Text);
    let mut lines = vec![Line::from(vec![
        Span::styled("proposed by ", dim),
        Span::styled(shown(&p.proposed_by), text),
        Span::styled(" for ", dim),
        Span::styled(shown(&p.user), text),
        Span::styled(
            format!(", {} ago · {}", age(Some(p.created), now), p.status(now)),
            dim,
        ),
    ])];
    if let Some(why) = &p.why {
        lines.push(Line::from(vec![
            Span::styled("why: ", dim),
            Span::styled(shown(why), text),
        ]));
    }
    if let Some(reason) = &p.reason {
        lines.push(Line::from(vec![
            Span::styled("reason recorded on the objects: ", dim),
            Span::styled(shown(reason), text),
        ]));
    }
    let decided = match &p.decision {
        None => None,
        Some(Decision::Approved { by, at }) => Some(format!("approved by {by} at {at}")),
        Some(Decision::Rejected { by, at, reason }) => {
            Some(format!("rejected by {by} at {at}: {}", shown(reason)))
        }
        Some(Decision::Refused { by, at, changed }) => Some(format!(
            "refused when {by} approved it at {at}, the fleet had changed: {}",
            shown(&changed.join("; "))
        )),
    };
    if let Some(decided) = decided {
        lines.push(Line::from(Span::styled(decided, theme.style(Slot::Header))));
    }
    for t in &p.targets {
        let outcome = p.outcomes.iter().flatten().find(|o| {
            (&o.cluster, &o.kind, &o.namespace, &o.name)
                == (&t.cluster, &t.kind, &t.namespace, &t.name)
        });
        let mut spans = vec![
            Span::styled(
                shown(&format!(
                    "{}/{} {} {}/{} ",
                    t.workspace, t.cluster, t.kind, t.namespace, t.name
                )),
                theme.style(Slot::Header),
            ),
            Span::styled(shown(&t.would), text),
        ];
        if let Some(o) = outcome {
            let slot = if o.outcome == "done" {
                Slot::Text
            } else {
                Slot::Warning
            };
            spans.push(Span::styled(
                shown(&format!(" → {} {}", o.outcome, o.message)),
                theme.style(slot),
            ));
        }
        lines.push(Line::from(spans));
    }
    lines
}
