//! `drift KIND NAME` and the TUI's `D`: the copies of one object read, whether every object is
//! watched or every cluster summarized.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use fluxfleet::session::Session;
use fluxfleet_sim::Scenario;

/// `fluxfleet drift KIND NAME` on the story fleet, as it reads it (all objects watched or every
/// cluster summarized, its objects read on demand).
async fn drift_asked(
    sim: &common::Sim,
    object: &[&str],
    mode: &str,
) -> (Option<i32>, serde_json::Value) {
    let out = common::fluxfleet()
        .arg("drift")
        .args(object)
        .args([
            "-o",
            "json",
            "--timeout",
            "60s",
            "--watch-mode",
            mode,
            "--kubeconfig-dir",
        ])
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), doc)
}

/// Asked of one object, `drift` reads its copies: a Kustomization whose controller keeps
/// correcting its objects is named from its events (on exactly the cluster the simulator edits
/// it on); the substituted copies are told apart by the object their inventory has that the
/// norm's has not; and where every cluster is summarized (FluxReport tier), the object is read
/// on each and the same variants are found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asked_of_one_object_drift_reads_its_copies() {
    let sim = common::start_with(|c| {
        c.clusters = 40;
        c.workspaces = 2;
        c.objects = 20;
        c.scenario = Scenario::Story;
        c.operator = 1.0;
        c.epoch = None;
    })
    .await;
    let truth = common::workloads(&sim);
    let reachable: BTreeSet<&str> = truth
        .iter()
        .filter(|c| c.faults.is_empty())
        .map(|c| c.name.as_str())
        .collect();
    let meant_of = |name: &str, how: &str| -> BTreeSet<String> {
        truth
            .iter()
            .filter(|c| reachable.contains(c.name.as_str()))
            .filter(|c| {
                c.objects.iter().any(|o| {
                    o.kind == "Kustomization" && o.name == name && o.drift.as_deref() == Some(how)
                })
            })
            .map(|c| c.name.clone())
            .collect()
    };
    let corrected = meant_of("flux-system", "corrected");
    assert_eq!(corrected.len(), 1, "the story edits one cluster's objects");

    let (code, doc) = drift_asked(&sim, &["ks", "flux-system"], "all").await;
    assert_eq!(code, Some(8), "{doc}");
    let live = doc["live"].as_array().unwrap();
    let named: BTreeSet<String> = live
        .iter()
        .filter(|l| l.get("correcting").is_some())
        .map(|l| l["cluster"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(named, corrected, "{doc}");
    let c = &live[0]["correcting"];
    assert_eq!(c["times"], 6, "{c}");
    assert!(
        c["objects"][0].as_str().unwrap().ends_with("/flux-system"),
        "{c}"
    );
    assert!(doc["reads"]["events"].as_u64().unwrap() > 30, "{doc}");

    let substituted = meant_of("apps", "substituted");
    assert!(!substituted.is_empty());
    let variants_of = |doc: &serde_json::Value| -> BTreeSet<String> {
        let apps = doc["differ"].as_array().unwrap().iter();
        let variants = apps.flat_map(|d| d["variants"].as_array().unwrap().iter());
        variants
            .flat_map(|v| v["clusters"].as_array().unwrap().iter())
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    };
    let (code, doc) = drift_asked(&sim, &["ks", "apps"], "all").await;
    assert_eq!(code, Some(8), "{doc}");
    assert_eq!(variants_of(&doc), substituted, "{doc}");
    for v in doc["differ"][0]["variants"].as_array().unwrap() {
        let objects = &v["objects"];
        assert_eq!(objects["onlyHereCount"], 1, "{v}");
        let extra = objects["onlyHere"][0].as_str().unwrap();
        assert!(
            extra.starts_with("Ingress/") && extra.ends_with("/apps-internal"),
            "{v}"
        );
        assert_eq!(objects["onlyNormCount"], 0, "{v}");
    }
    assert_eq!(doc["reads"]["summarized"], 0, "{doc}");

    // Every cluster summarized: the copies are read, and say the same.
    let (code, summarized) = drift_asked(&sim, &["ks", "apps"], "summary").await;
    assert_eq!(code, Some(8), "{summarized}");
    assert_eq!(variants_of(&summarized), substituted, "{summarized}");
    let read = summarized["reads"]["summarized"].as_u64().unwrap();
    assert!(read as usize >= reachable.len(), "{summarized}");

    // The TUI's `D` on a copy reads the copies as the command does and says the same.
    let mut live = Session::kube(&common::fleet_of(&sim), &common::engine_settings());
    live.settle(Duration::from_secs(60)).await;
    let flux_system = tui_drift(&mut live, "flux-system").await;
    assert!(
        flux_system.0.contains("copies read: 0 summarized"),
        "{}",
        flux_system.0
    );
    let live_rows: BTreeSet<String> = flux_system
        .1
        .iter()
        .filter(|(_, what)| what.contains("live: kustomize-controller"))
        .map(|(c, _)| c.clone())
        .collect();
    assert_eq!(live_rows, corrected, "{}", flux_system.0);
    let apps = tui_drift(&mut live, "apps").await;
    let applied = apps.1.iter().filter(|(_, w)| w.contains(" applied "));
    let rows: BTreeSet<String> = applied.clone().map(|(c, _)| c.clone()).collect();
    assert_eq!(rows, substituted, "{}", apps.0);
    for (cluster, what) in applied {
        assert!(
            what.contains("has Ingress/") && what.contains("apps-internal that the norm has not"),
            "{cluster}: {what}"
        );
    }
    live.shutdown().await;
}

/// The TUI's drift view of the Kustomization `name` opened with `D` on its detail view, its
/// copies read as the event loop reads them: the screen, and each row's cluster and what it
/// says differs.
async fn tui_drift(live: &mut Session, name: &str) -> (String, Vec<(String, String)>) {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use fluxfleet::app::message::Effect;
    use fluxfleet::app::model::{Model, RowId};
    use fluxfleet::app::update::{Msg, update};
    use fluxfleet::app::view::View;
    use fluxfleet::fleet::{FluxKind, ObjectKey};
    let (keymap, _) =
        fluxfleet::app::keymap::Keymap::from_config(&fluxfleet::config::Config::defaults().keymap);
    let now = jiff::Timestamp::now();
    let key = ObjectKey::new(FluxKind::Kustomization, "flux-system", name);
    let (cluster, _) = live
        .index
        .entries()
        .find(|(_, c)| c.objects.contains_key(&key))
        .expect("a copy");
    let mut model = Model::new(std::mem::take(&mut live.index), keymap, Vec::new(), now);
    model.push(View::Detail {
        cluster,
        key: key.clone(),
    });
    let effects = update(
        &mut model,
        Msg::Key(KeyEvent::new(KeyCode::Char('D'), KeyModifiers::NONE)),
    );
    let waiting = common::tui::screen(&mut model, 220, 60);
    assert!(waiting.contains("reading its copies"), "{waiting}");
    let [
        Effect::ReadDrift {
            scope,
            key: of,
            plan,
        },
    ] = &effects[..]
    else {
        panic!("{effects:?}")
    };
    let how = fluxfleet::session::evidence::Gather::default();
    let warm = fluxfleet::config::Config::defaults().engine.warm_clusters;
    let drift = fluxfleet::session::drift::asked(plan, &live.reader(), now, (how, warm)).await;
    let msg = Msg::Drift {
        scope: *scope,
        key: of.clone(),
        drift: Box::new(drift),
    };
    update(&mut model, msg);
    let shot = common::tui::screen(&mut model, 220, 60);
    let mut rows = Vec::new();
    for id in &model.rows().ids {
        let RowId::Object(c, k) = id else {
            panic!("{id:?}")
        };
        assert_eq!(*k, key);
        let name = model.index().cluster(*c).unwrap().info.name.clone();
        let line = shot
            .lines()
            .find(|l| l.contains(&format!("│{name} ")))
            .unwrap_or_else(|| panic!("{name} not on screen: {shot}"));
        rows.push((name, line.to_string()));
    }
    live.index = model.into_index();
    (shot, rows)
}
