//! Criterion benchmarks of the TUI at 60,000 objects (2,000 clusters × 30, 12 workspaces): one
//! frame of each list view after an object changed (the change applied, rows rebuilt, visible rows
//! drawn into a 200×50 buffer; the rollout view and its matrix computed from the index as well),
//! and one pass of the fuzzy filter. `fleet` draws the fleet map of the 2,000 clusters under the
//! workspaces; `triage` groups root causes (`triage_flat` every failure alike), working out again
//! the part of the cluster that changed (`triage_first`: every cluster's, as when it opens).
//! Issue 4's budget: a frame of the busiest view ≤ 5 ms, a filter pass ≤ 30 ms.
//!
//! `cargo bench --bench tui`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "common/sixty.rs"]
mod sixty;

use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::{ListScope, Model, Screen, View};
use fluxfleet::app::rows;
use fluxfleet::app::spreads::SpreadCache;
use fluxfleet::app::triage::TriageCache;
use fluxfleet::app::update::{Msg, update};
use fluxfleet::config::Config;
use fluxfleet::config::theme::Theme;
use fluxfleet::fleet::index::Event;
use fluxfleet::fleet::{ClusterId, WorkspaceId};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use sixty::{change, fleet};

const SIZE: (u16, u16) = (200, 50);

fn model(view: View) -> Model {
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let now = "2026-11-21T10:00:00Z".parse().unwrap();
    let mut model = Model::new(fleet(), keymap, Vec::new(), now);
    if view != View::Fleet {
        model.push(view);
    }
    model
}

/// One frame after an object changed: the change applied, rows rebuilt, scrolled, drawn.
fn frame(
    model: &mut Model,
    terminal: &mut Terminal<TestBackend>,
    theme: &Theme,
    changes: &[Event],
    n: &mut usize,
) {
    *n += 1;
    let event = changes[*n % changes.len()].clone();
    update(model, Msg::Fleet(vec![event]));
    fluxfleet::tui::lay_out(model, theme, Rect::new(0, 0, SIZE.0, SIZE.1));
    terminal
        .draw(|f| fluxfleet::ui::render(f, model, theme))
        .unwrap();
}

fn frames(c: &mut Criterion) {
    let theme = Theme::dark();
    let mut group = c.benchmark_group("frame_60k");
    for (name, view) in [
        ("fleet", View::Fleet),
        ("workspace", View::Workspace(WorkspaceId(0))),
        ("cluster", View::Cluster(ClusterId(0))),
        (
            "all_objects",
            View::Objects {
                scope: ListScope::Fleet,
                kind: None,
            },
        ),
        (
            "triage",
            View::Triage {
                scope: ListScope::Fleet,
            },
        ),
        (
            "rollout",
            View::Rollout {
                scope: ListScope::Fleet,
                kind: None,
            },
        ),
        (
            "triage_flat",
            View::Triage {
                scope: ListScope::Fleet,
            },
        ),
        (
            "matrix",
            View::Matrix {
                scope: ListScope::Fleet,
                key: fluxfleet::fleet::ObjectKey::new(
                    fluxfleet::fleet::FluxKind::Kustomization,
                    "flux-system",
                    "app-01",
                ),
            },
        ),
    ] {
        // Built only when this benchmark runs (`cargo bench --bench tui -- triage`).
        group.bench_function(name, |b| {
            let mut m = model(view.clone());
            m.screen_mut().flat = name == "triage_flat";
            let mut terminal = Terminal::new(TestBackend::new(SIZE.0, SIZE.1)).unwrap();
            let changes: Vec<Event> = (0..64).map(|i| change(i * 31, 4 + i % 2)).collect();
            let mut n = 0;
            b.iter(|| frame(&mut m, &mut terminal, &theme, &changes, &mut n))
        });
    }
    // The rollout view and triage when they open: every spread computed from the 60,000
    // objects, every cluster's part of triage worked out.
    for (name, view) in [
        (
            "rollout_first",
            View::Rollout {
                scope: ListScope::Fleet,
                kind: None,
            },
        ),
        (
            "triage_first",
            View::Triage {
                scope: ListScope::Fleet,
            },
        ),
    ] {
        group.bench_function(name, |b| {
            let mut m = model(view.clone());
            let mut terminal = Terminal::new(TestBackend::new(SIZE.0, SIZE.1)).unwrap();
            let changes = [change(0, 5)];
            let mut n = 0;
            b.iter(|| {
                m.clear_caches();
                frame(&mut m, &mut terminal, &theme, &changes, &mut n)
            })
        });
    }
    group.finish();
}

fn filter(c: &mut Criterion) {
    let index = std::sync::LazyLock::new(fleet);
    let mut group = c.benchmark_group("filter_60k");
    for (name, view, text) in [
        (
            "all_objects",
            View::Objects {
                scope: ListScope::Fleet,
                kind: None,
            },
            "cluster-0042 app-08",
        ),
        (
            "triage",
            View::Triage {
                scope: ListScope::Fleet,
            },
            "timeout",
        ),
    ] {
        let mut screen = Screen::new(view);
        screen.filter = text.to_string();
        group.bench_function(name, |b| {
            let rollout = Config::defaults().rollout;
            let now = "2026-11-21T10:00:00Z".parse().unwrap();
            let mut spreads = SpreadCache::default();
            let mut parts = TriageCache::default();
            b.iter(|| {
                let with = rows::With {
                    rollout: &rollout,
                    now,
                    spreads: &mut spreads,
                    triage: &mut parts,
                    asked: None,
                };
                black_box(rows::build(black_box(&index), &screen, with))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = frames, filter
}
criterion_main!(benches);
