//! The fleet map under the workspace table: every cluster as one cell, grouped by workspace, in
//! the table's order. Workspaces flow one after another, each after its name; when the room is
//! too small for one cell per cluster, each cell stands for a few clusters and shows the worst.
//! Pure: the view draws a [`Map`], the update function moves over the same one.

mod mark;

pub use mark::{Age, Copy, Degree, Mark, Shading, Stall, legend};

use super::key_action::Action;
use super::model::Model;
use super::view::{RowId, View};
use crate::fleet::{ClusterId, Index, WorkspaceId};

/// The most characters of a workspace name written before its cells.
const LABEL: usize = 12;

/// One cell: where it is, and the clusters it stands for (a run of [`Map::clusters`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub x: u16,
    pub y: u16,
    start: u32,
    len: u32,
}

/// A workspace's name, written before its first cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub x: u16,
    pub y: u16,
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Map {
    /// Every cluster, by workspace and then by name.
    pub clusters: Vec<ClusterId>,
    pub cells: Vec<Cell>,
    pub labels: Vec<Label>,
    /// Clusters per cell: 1 when every cluster has its own.
    pub per_cell: usize,
    /// Workspaces left out for want of room (each needs at least its name and a cell).
    pub left_out: usize,
}

impl Map {
    /// The clusters a cell stands for.
    pub fn clusters_of(&self, cell: usize) -> &[ClusterId] {
        self.cells.get(cell).map_or(&[], |c| {
            let start = c.start as usize;
            &self.clusters[start..start + c.len as usize]
        })
    }

    /// The worst of a cell's clusters (the one `enter` opens) and its mark in the map's mode.
    pub fn worst(
        &self,
        shading: &Shading,
        index: &Index,
        cell: usize,
    ) -> Option<(ClusterId, Mark)> {
        self.clusters_of(cell)
            .iter()
            .filter_map(|id| Some((*id, shading.mark(*id, index.cluster(*id)?))))
            .min_by_key(|(_, mark)| *mark)
    }

    /// The cell on the line above (`up`) or below `cell` nearest to its column.
    pub fn vertical(&self, cell: usize, up: bool) -> Option<usize> {
        let at = self.cells.get(cell)?;
        let y = if up { at.y.checked_sub(1)? } else { at.y + 1 };
        // Lines are filled in order: the wanted line's cells are one run.
        self.cells
            .iter()
            .enumerate()
            .filter(|(_, c)| c.y == y)
            .min_by_key(|(_, c)| c.x.abs_diff(at.x))
            .map(|(i, _)| i)
    }
}

/// The lines a map of `rows` needs at `width` with a cell for every cluster (reads no cluster).
pub fn lines_needed(index: &Index, rows: &[RowId], width: u16) -> u16 {
    let sizes: Vec<(String, usize)> = rows
        .iter()
        .filter_map(|r| match r {
            RowId::Workspace(w) => index.workspace(*w),
            _ => None,
        })
        .map(|ws| (label(&ws.name, width), ws.clusters.len()))
        .collect();
    u16::try_from(flow_lines(&sizes, width.max(4), 1)).unwrap_or(u16::MAX)
}

/// The lines workspaces of these names and sizes take at `width`, `per_cell` clusters a cell.
fn flow_lines(sizes: &[(String, usize)], width: u16, per_cell: usize) -> usize {
    let mut flow = Flow::new(width);
    for (name, clusters) in sizes {
        flow.workspace(name, clusters.div_ceil(per_cell), |_, _| {});
    }
    flow.lines()
}

/// A workspace's name as the map writes it.
fn label(name: &str, width: u16) -> String {
    crate::units::truncate(name, LABEL.min(usize::from(width) / 3))
}

/// The clusters of `rows` (the fleet view's workspace rows), by name within each workspace.
fn workspaces<'a>(index: &'a Index, rows: &[RowId]) -> Vec<(WorkspaceId, Vec<ClusterId>)> {
    rows.iter()
        .filter_map(|r| match r {
            RowId::Workspace(w) => Some(*w),
            _ => None,
        })
        .filter_map(|w| {
            let ws = index.workspace(w)?;
            let mut clusters: Vec<(&'a str, ClusterId)> = ws
                .clusters
                .iter()
                .filter_map(|id| Some((index.cluster(*id)?.info.name.as_str(), *id)))
                .collect();
            clusters.sort_unstable();
            Some((w, clusters.into_iter().map(|(_, id)| id).collect()))
        })
        .collect()
}

/// The map of the workspaces in `rows` in a room `width` × `height` cells: one cell per
/// cluster where that fits, else as few clusters per cell as make it fit.
pub fn layout(index: &Index, rows: &[RowId], width: u16, height: u16) -> Map {
    let groups = workspaces(index, rows);
    let total: usize = groups.iter().map(|(_, c)| c.len()).sum();
    let mut map = Map {
        per_cell: 1,
        ..Map::default()
    };
    if width < 4 || height == 0 || total == 0 {
        return map;
    }
    let sizes: Vec<(String, usize)> = groups
        .iter()
        .map(|(w, clusters)| {
            let name = index.workspace(*w).map_or("", |ws| &ws.name);
            (label(name, width), clusters.len())
        })
        .collect();
    // The fewest clusters per cell that fit; a flow is cheap to try (no cluster is read).
    let lines = |per_cell: usize| flow_lines(&sizes, width, per_cell);
    let mut per_cell = 1;
    while lines(per_cell) > usize::from(height) && per_cell < total {
        per_cell = (per_cell * 2).min(total);
    }
    // Halving overshoots: step back down while it still fits.
    let mut low = per_cell / 2 + 1;
    while low < per_cell {
        let mid = (low + per_cell) / 2;
        if lines(mid) <= usize::from(height) {
            per_cell = mid;
        } else {
            low = mid + 1;
        }
    }
    map.per_cell = per_cell;
    let mut flow = Flow::new(width);
    for ((_, clusters), (name, _)) in groups.iter().zip(&sizes) {
        let start = map.clusters.len();
        map.clusters.extend_from_slice(clusters);
        let (labels, cells) = (&mut map.labels, &mut map.cells);
        let first = flow.workspace(name, clusters.len().div_ceil(per_cell), |i, (x, y)| {
            let from = i * per_cell;
            let len = per_cell.min(clusters.len() - from);
            cells.push(Cell {
                x,
                y,
                start: (start + from) as u32,
                len: len as u32,
            });
        });
        labels.push(Label {
            x: first.0,
            y: first.1,
            text: name.clone(),
        });
    }
    // What does not fit (many workspaces in a small room) is left out, and said.
    let before = map.labels.len();
    map.labels.retain(|l| l.y < height);
    map.left_out = before - map.labels.len();
    map.cells.retain(|c| c.y < height);
    map
}

/// Places workspaces one after another: a name, a space, its cells (wrapping), then a space.
struct Flow {
    width: u16,
    x: u16,
    y: u16,
}

impl Flow {
    fn new(width: u16) -> Flow {
        Flow { width, x: 0, y: 0 }
    }

    /// Places a workspace named `name` with `cells` cells; `place` gets each cell's number and
    /// position. Returns where the name goes.
    fn workspace(
        &mut self,
        name: &str,
        cells: usize,
        mut place: impl FnMut(usize, (u16, u16)),
    ) -> (u16, u16) {
        let name_width = name.chars().count() as u16;
        // A name and its first cell stay on one line.
        if self.x > 0 && self.x + name_width + 2 > self.width {
            self.x = 0;
            self.y += 1;
        }
        let at = (self.x, self.y);
        self.x += name_width + 1;
        for i in 0..cells {
            if self.x >= self.width {
                self.x = 0;
                self.y += 1;
            }
            place(i, (self.x, self.y));
            self.x += 1;
        }
        self.x += 1;
        at
    }

    fn lines(&self) -> usize {
        usize::from(self.y) + usize::from(self.x > 0)
    }
}

/// Moves over the fleet map, or onto it and off it; false when `action` is not the map's to
/// handle (the table's keys go on working while the map is not selected).
pub(super) fn navigate(model: &mut Model, action: Action) -> bool {
    let (width, height) = model.fit().map_room;
    let focus = model.screen().map;
    let on_last_row = model.screen().cursor + 1 >= model.rows().ids.len();
    let entering = match (focus, action) {
        (None, Action::Map) => true,
        (None, Action::Down) if on_last_row => true,
        (None, _) => return false,
        (Some(_), _) => false,
    };
    let map = layout(model.index(), &model.rows().ids, width, height);
    let last = map.cells.len().saturating_sub(1);
    if map.cells.is_empty() {
        model.screen_mut().map = None;
        return entering;
    }
    let Some(at) = focus.map(|i| i.min(last)) else {
        // Onto the map: the selected workspace's first cell, or the first.
        let ws = match &model.screen().selected {
            Some(RowId::Workspace(w)) if action == Action::Map => Some(*w),
            _ => None,
        };
        let cell = (0..map.cells.len())
            .find(|i| {
                map.clusters_of(*i)
                    .first()
                    .and_then(|c| model.index().cluster(*c))
                    .is_some_and(|c| Some(c.workspace) == ws)
            })
            .unwrap_or(0);
        model.screen_mut().map = Some(cell);
        return true;
    };
    let to = match action {
        Action::Up => match map.vertical(at, true) {
            Some(cell) => Some(cell),
            // Up from the first line: back to the table.
            None => return leave(model, None),
        },
        Action::Down => map.vertical(at, false).or(Some(at)),
        Action::Left => Some(at.saturating_sub(1)),
        Action::Right => Some((at + 1).min(last)),
        Action::Top => Some(0),
        Action::Bottom => Some(last),
        Action::Map | Action::Back => {
            let ws = map
                .clusters_of(at)
                .first()
                .and_then(|c| model.index().cluster(*c))
                .map(|c| c.workspace);
            return leave(model, ws);
        }
        Action::Open => {
            if let Some((cluster, _)) = map.worst(&Shading::of(model), model.index(), at) {
                model.push(View::Cluster(cluster));
            }
            return true;
        }
        _ => return false,
    };
    model.screen_mut().map = to;
    true
}

/// Off the map, onto the workspace table (on `ws`'s row when given).
fn leave(model: &mut Model, ws: Option<WorkspaceId>) -> bool {
    let row = ws.and_then(|w| {
        model
            .rows()
            .ids
            .iter()
            .position(|r| *r == RowId::Workspace(w))
    });
    let selected = row.and_then(|r| model.rows().ids.get(r).cloned());
    let screen = model.screen_mut();
    screen.map = None;
    if let (Some(row), Some(selected)) = (row, selected) {
        screen.cursor = row;
        screen.selected = Some(selected);
    }
    true
}
