//! The TUI on the bus: the fleet, a cluster's objects and their history; the history view's
//! scope and order.

use crate::common;

use fluxfleet::bus;
use fluxfleet::fleet::FluxKind;

use super::one_collector;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_on_the_bus_shows_the_fleet_its_clusters_and_their_history() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    use crossterm::event::KeyCode;
    let (_nats, options, sim, inventory, only) = one_collector().await;
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let clusters = inventory.clusters.len();
    let cluster = &inventory.clusters[0].name;
    let (mut person, app, _) = common::tui::session_of(fluxfleet::tui::Start {
        config: fluxfleet::config::Config::defaults(),
        config_path: None,
        warnings: Vec::new(),
        fleet: fluxfleet::session::open::Fleet::Bus(Box::new(bus)),
        theme: None,
        mode: Some(fluxfleet::config::Mode::ReadOnly),
        journal: None,
    });
    let drive = async {
        let all = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&all))
            .await;
        person.command(&format!("cluster {cluster}"));
        person
            .sees("the cluster's objects", |s| {
                s.contains(&format!("Flux objects on {cluster}")) && s.contains("Kustomization")
            })
            .await;
        person.command("history 1h");
        person
            .sees("its history", |s| {
                s.contains("history since 60m ago") && s.contains("connection syncing → live")
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}

#[test]
fn the_history_view_shows_the_changes_of_its_scope_newest_first() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use fluxfleet::app::model::{Model, View};
    use fluxfleet::app::update::{Effect, Msg, update};
    use fluxfleet::fleet::history::RecordedChange;
    use fluxfleet::fleet::{ClusterInfo, ClusterKey, Index};
    let now: jiff::Timestamp = "2026-11-24T10:00:00Z".parse().unwrap();
    let mut index = Index::new();
    for (name, ws) in [("pay-eu", "payments"), ("shop-1", "retail")] {
        index.add_cluster(ClusterInfo {
            key: ClusterKey::new(name),
            ..ClusterInfo::new(name, ws)
        });
    }
    let (keymap, _) =
        fluxfleet::app::keymap::Keymap::from_config(&fluxfleet::config::Config::defaults().keymap);
    let mut m = Model::new(index, keymap, Vec::new(), now);
    let payments = m.index().workspace_id("payments").unwrap();
    m.push(View::Workspace(payments));
    let mut effects = Vec::new();
    for c in ":history 2h"
        .chars()
        .map(KeyCode::Char)
        .chain([KeyCode::Enter])
    {
        effects = update(&mut m, Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    }
    let since = now - jiff::SignedDuration::from_secs(7200);
    assert_eq!(effects, [Effect::ReadHistory(since)]);
    let change = |minutes: i64, cluster: &str, ws: &str, what: &str, to: &str| RecordedChange {
        at: now - jiff::SignedDuration::from_mins(minutes),
        cluster: cluster.into(),
        workspace: ws.into(),
        what: what.into(),
        kind: Some(FluxKind::Kustomization),
        namespace: Some("flux-system".into()),
        name: Some("apps".into()),
        from: Some("ready".into()),
        to: Some(to.into()),
        message: None,
        happened: None,
    };
    update(
        &mut m,
        Msg::History(Ok(vec![
            change(90, "pay-eu", "payments", "health", "failed"),
            change(30, "shop-1", "retail", "health", "stalled"),
            change(10, "pay-eu", "payments", "health", "ready"),
        ])),
    );
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(110, 12)).unwrap();
    let theme = fluxfleet::config::theme::Theme::dark();
    terminal
        .draw(|f| fluxfleet::ui::render(f, &m, &theme))
        .unwrap();
    let screen = terminal.backend().to_string();
    assert!(screen.contains("history since 2h ago"), "{screen}");
    let failed = screen.find("health ready → failed").expect(&screen);
    let ready = screen.find("health ready → ready").expect(&screen);
    assert!(ready < failed, "newest first:\n{screen}");
    assert!(
        !screen.contains("shop-1"),
        "only the workspace's clusters:\n{screen}"
    );
}
