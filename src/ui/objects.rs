//! Objects of every cluster in a scope (`:ks`, `:hr`, `:all`), with WORKSPACE and CLUSTER columns.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::Cell;

use super::widgets::{Columns, health_cell, highlighted, list, message_cell};
use crate::app::model::{ListScope, Model, RowId};
use crate::config::theme::{Slot, Theme};
use crate::fleet::FluxKind;
use crate::units::age;

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
    let what = kind.map_or("Flux objects", |k| k.plural());
    let title = format!("{what} in {}", super::names::scope_name(index, scope));
    list(
        frame,
        area,
        model,
        theme,
        Columns {
            title: &title,
            header: &[
                "WORKSPACE",
                "CLUSTER",
                "KIND",
                "NAME",
                "HEALTH",
                "REVISION",
                "AGE",
                "MESSAGE",
            ],
            widths: &[
                Constraint::Max(12),
                Constraint::Max(20),
                Constraint::Max(14),
                Constraint::Max(28),
                Constraint::Length(11),
                Constraint::Max(20),
                Constraint::Length(4),
                Constraint::Fill(1),
            ],
        },
        |id| {
            let RowId::Object(c, key) = id else {
                return Vec::new();
            };
            let Some(cluster) = index.cluster(*c) else {
                return Vec::new();
            };
            let Some(o) = cluster.objects.get(key) else {
                return Vec::new();
            };
            vec![
                Cell::from(super::names::ws_name(index, cluster.workspace).to_string()),
                Cell::from(highlighted(
                    &cluster.info.name,
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                Cell::from(key.kind.as_str()),
                Cell::from(highlighted(
                    &format!("{}/{}", key.namespace, key.name),
                    filter,
                    theme.style(Slot::Text),
                    theme,
                )),
                health_cell(o.health, theme),
                Cell::from(o.shown_revision()),
                Cell::from(age(o.since, model.now())),
                message_cell(o, theme),
            ]
        },
    );
}
