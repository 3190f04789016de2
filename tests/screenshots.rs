//! The screenshots in `screenshots/`: the main views of the demo's simulated fleet (its story, at
//! 96 clusters in 8 workspaces), drawn by the real render code into a test buffer and written as SVG.
//!
//! `cargo test` draws them into a temporary directory and checks what they show; to refresh the
//! committed images run `FLUXFLEET_SCREENSHOTS=1 cargo test --test local screenshots::`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
/// Only the screenshots need frames as SVG: built here, not in fluxfleet.
mod svg;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::{Fetched, Model, RowId, View};
use fluxfleet::app::update::{Effect, Msg, update};
use fluxfleet::config::Config;
use fluxfleet::config::theme::Theme;
use fluxfleet::fleet::{FluxKind, Index};
use fluxfleet::inventory;
use fluxfleet::session::Reader;
use fluxfleet::session::Session;
use fluxfleet::session::evidence::{Gather, gather};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 24;

struct Camera {
    dir: PathBuf,
    theme: Theme,
    taken: Vec<(String, String)>,
}

impl Camera {
    /// Draws the model as the event loop would and keeps the frame as `<name>.svg`.
    fn shoot(&mut self, model: &mut Model, name: &str) -> String {
        let area = Rect::new(0, 0, WIDTH, HEIGHT);
        fluxfleet::tui::lay_out(model, &self.theme, area);
        let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
        terminal
            .draw(|f| fluxfleet::ui::render(f, model, &self.theme))
            .unwrap();
        let buffer = terminal.backend().buffer();
        let svg = svg::to_svg(buffer);
        std::fs::write(self.dir.join(format!("{name}.svg")), &svg).unwrap();
        let text = terminal.backend().to_string();
        self.taken.push((name.to_string(), text.clone()));
        text
    }
}

fn key(model: &mut Model, code: KeyCode) -> Vec<Effect> {
    update(model, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn command(model: &mut Model, line: &str) {
    key(model, KeyCode::Char(':'));
    for c in line.chars() {
        key(model, KeyCode::Char(c));
    }
    key(model, KeyCode::Enter);
}

/// Runs a fetch effect the way the TUI's fetcher does.
async fn fetch(model: &mut Model, reader: &Reader, effects: Vec<Effect>) {
    for effect in effects {
        if let Effect::FetchWorkloads {
            key,
            clusters,
            infos,
        } = effect
        {
            let infos: Vec<_> = infos.iter().map(|i| (**i).clone()).collect();
            let folded = gather(reader, &infos, &key, Gather::default()).await;
            let folded = Box::new(folded);
            update(
                model,
                Msg::Workloads {
                    key,
                    clusters,
                    folded,
                },
            );
            continue;
        }
        let Effect::FetchEvents {
            cluster,
            info,
            key,
            told,
        } = effect
        else {
            continue;
        };
        let fetched = match reader.events(&info, &told).await {
            Ok(events) => Fetched::Events(events),
            Err(e) => Fetched::Failed("events", e.to_string()),
        };
        update(
            model,
            Msg::Fetched {
                cluster,
                key,
                fetched,
            },
        );
    }
}

/// The workspace, and the live cluster in it, with the most failing objects.
fn worst(index: &Index) -> (String, String) {
    let ws = index
        .workspaces()
        .iter()
        .max_by_key(|w| (w.health.failing(), std::cmp::Reverse(w.name.clone())))
        .unwrap();
    let cluster = ws
        .clusters
        .iter()
        .filter_map(|id| index.cluster(*id))
        .filter(|c| !c.connection.phase.is_failure())
        .max_by_key(|c| (c.health.failing(), std::cmp::Reverse(c.info.name.clone())))
        .unwrap();
    (ws.name.clone(), cluster.info.name.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_of_the_main_views() {
    // The demo's story, smaller: a bad revision on some of the dev and staging clusters, a few
    // long-standing misconfigurations, suspensions, two clusters nobody reaches.
    let sim = common::start_with(|c| {
        c.clusters = 96;
        c.workspaces = 8;
        c.scenario = fluxfleet_sim::Scenario::Story;
        c.faults = fluxfleet_sim::faults::Spec::parse("old-flux=5%").unwrap();
    })
    .await;
    let request = inventory::Lookup {
        dirs: vec![sim.dir.path().join("kubeconfigs")],
        ..inventory::Lookup::default()
    };
    let mut config = Config::defaults();
    config.engine.connect_timeout = Duration::from_secs(5);
    config.engine.max_backoff = Duration::from_secs(2);
    let inventory = inventory::load(&request, &config);
    let mut live = Session::kube(&inventory, &config.engine);
    assert!(
        live.settle(Duration::from_secs(60)).await,
        "the fleet settles"
    );
    let reader = live.reader();
    let index = std::mem::take(&mut live.index);
    let (ws, cluster) = worst(&index);

    let (keymap, warnings) = Keymap::from_config(&config.keymap);
    assert_eq!(warnings, Vec::<String>::new());
    // The simulator's clock (its epoch is pinned), so that ages read as the story tells them.
    let now = jiff::Timestamp::from_second(1_790_000_000 + 60).unwrap();
    let mut model = Model::new(index, keymap, Vec::new(), now);
    let scratch = tempfile::tempdir().unwrap();
    let dir = if std::env::var_os("FLUXFLEET_SCREENSHOTS").is_some() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("screenshots")
    } else {
        scratch.path().to_path_buf()
    };
    std::fs::create_dir_all(&dir).unwrap();
    let mut camera = Camera {
        dir,
        theme: Theme::dark(),
        taken: Vec::new(),
    };

    let fleet = camera.shoot(&mut model, "fleet");
    assert!(fleet.contains(&ws), "{fleet}");
    assert!(fleet.contains("Fleet map · 96 clusters"), "{fleet}");

    // The cursor on the map: the status line names the cluster under it.
    key(&mut model, KeyCode::Tab);
    key(&mut model, KeyCode::Char('l'));
    key(&mut model, KeyCode::Char('l'));
    let shot = camera.shoot(&mut model, "fleet_map");
    assert!(shot.contains(" objects"), "{shot}");
    key(&mut model, KeyCode::Esc);

    command(&mut model, &format!("ws {ws}"));
    let shot = camera.shoot(&mut model, "workspace");
    assert!(shot.contains(&cluster), "{shot}");

    command(&mut model, &format!("cluster {cluster}"));
    let shot = camera.shoot(&mut model, "cluster");
    assert!(
        shot.contains(&format!("Flux objects on {cluster}")),
        "{shot}"
    );

    // Failing only, the first one, its events.
    key(&mut model, KeyCode::Char('!'));
    key(&mut model, KeyCode::Enter);
    assert!(matches!(model.screen().view, View::Detail { .. }));
    let effects = key(&mut model, KeyCode::Char('e'));
    fetch(&mut model, &reader, effects).await;
    let shot = camera.shoot(&mut model, "detail");
    assert!(shot.contains("Warning"), "{shot}");

    command(&mut model, "fleet");
    key(&mut model, KeyCode::Char('t'));
    key(&mut model, KeyCode::Char('j'));
    key(&mut model, KeyCode::Char(' '));
    let shot = camera.shoot(&mut model, "triage");
    // The second root cause, expanded: its members listed under it by workspace and cluster.
    assert!(shot.contains("Root causes in the fleet"), "{shot}");
    let RowId::Group(group) = &model.rows().ids[1] else {
        panic!("triage rows are groups: {:?}", model.rows().ids)
    };
    let first = &model.rows().groups[group].members[0];
    let RowId::Object(member, _) = first else {
        panic!("a group's members are objects: {first:?}")
    };
    let member = &model.index().cluster(*member).unwrap().info;
    let line = format!("└ {} / {}", member.workspace, member.name);
    assert!(shot.contains(&line), "{line} in {shot}");
    // Every failure alike: the objects waiting on a dependency are groups of their own.
    key(&mut model, KeyCode::Char('c'));
    let shot = camera.shoot(&mut model, "triage_flat");
    assert!(shot.contains("Not ready in the fleet"), "{shot}");

    // What broke inside triage's first root cause, on all its clusters; then on one of them.
    command(&mut model, "fleet");
    key(&mut model, KeyCode::Char('t'));
    let effects = key(&mut model, KeyCode::Char('w'));
    fetch(&mut model, &reader, effects).await;
    // Folded as the simulator means it: one line per cause, on exactly the clusters it breaks.
    let Some(Fetched::Workloads(folded)) = model.reads().fetched() else {
        panic!("{:?}", model.reads().fetched())
    };
    let truth = common::workloads(&sim);
    for (cause, fault) in [("imagePull", "image-not-found"), ("crash", "oom-killed")] {
        let meant: BTreeSet<&str> = truth
            .iter()
            .filter(|c| {
                c.objects.iter().any(|o| {
                    o.name == "infra-controllers"
                        && o.workload.as_ref().is_some_and(|w| w.fault == fault)
                })
            })
            .map(|c| c.name.as_str())
            .collect();
        let shown: Vec<BTreeSet<&str>> = folded
            .lines
            .iter()
            .filter(|l| serde_json::to_value(&l.verdict).unwrap()["cause"] == cause)
            .map(|l| l.clusters.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(shown, [meant], "{cause}");
    }
    let shot = camera.shoot(&mut model, "workloads");
    assert!(
        shot.contains("what broke inside Kustomization flux-system/infra-controllers"),
        "{shot}"
    );
    assert!(shot.contains("ImagePullBackOff"), "{shot}");
    key(&mut model, KeyCode::Esc);
    key(&mut model, KeyCode::Char(' '));
    key(&mut model, KeyCode::Char('j'));
    key(&mut model, KeyCode::Enter);
    let effects = key(&mut model, KeyCode::Char('w'));
    fetch(&mut model, &reader, effects).await;
    let shot = camera.shoot(&mut model, "detail_workloads");
    assert!(shot.contains("workloads · what broke inside"), "{shot}");
    assert!(shot.contains("1 of 1 cluster read"), "{shot}");

    command(&mut model, "fleet");
    command(&mut model, FluxKind::HelmRelease.short_names()[0]);
    let shot = camera.shoot(&mut model, "helmreleases");
    assert!(shot.contains("HelmRelease"), "{shot}");

    key(&mut model, KeyCode::Char('?'));
    let shot = camera.shoot(&mut model, "help");
    // The keys of the view it was opened from, with what each does.
    assert!(shot.contains("keys: objects view"), "{shot}");
    assert!(shot.contains("reverse the sort"), "{shot}");

    // Which revision runs where: the Kustomizations' spread, then one of them ring by ring.
    command(&mut model, "fleet");
    command(&mut model, "rollout ks");
    let shot = camera.shoot(&mut model, "rollout");
    assert!(shot.contains("kustomizations in the fleet"), "{shot}");
    assert!(shot.contains("flux-system/apps"), "{shot}");
    key(&mut model, KeyCode::Char('/'));
    for c in "system/apps".chars() {
        key(&mut model, KeyCode::Char(c));
    }
    key(&mut model, KeyCode::Enter);
    key(&mut model, KeyCode::Enter);
    assert!(matches!(model.screen().view, View::Matrix { .. }));
    let shot = camera.shoot(&mut model, "matrix");
    assert!(
        shot.contains("Kustomization flux-system/apps in the fleet: newest"),
        "{shot}"
    );
    assert!(shot.contains("▾ ring"), "{shot}");

    for (name, _) in &camera.taken {
        let svg = std::fs::read_to_string(camera.dir.join(format!("{name}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    }
    drop(live);
    sim.handle.shutdown().await;
}
