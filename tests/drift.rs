//! Same revision, different result, on the simulator's story fleet at 2,000 clusters: `drift`
//! names exactly the copies the simulator made differ — a Kustomization's substitutions on a
//! few prod clusters, a HelmRelease's values on one, a release changed by hand on one — and no
//! others.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use fluxfleet::export::Filter;
use fluxfleet::session::Session;
use fluxfleet_sim::{Scenario, TruthCluster};

/// (cluster, kind/namespace/name, how it differs) as the simulator means it.
type Copy = (String, String, String);

fn meant(truth: &[TruthCluster], reachable: &BTreeSet<&str>) -> BTreeSet<Copy> {
    let mut out = BTreeSet::new();
    for c in truth.iter().filter(|c| reachable.contains(c.name.as_str())) {
        for o in &c.objects {
            let what = format!("{}/{}/{}", o.kind, o.namespace, o.name);
            let seen = [&o.drift, &o.runs].into_iter().flatten();
            for how in seen {
                out.insert((c.name.clone(), what.clone(), how.clone()));
            }
        }
    }
    out
}

/// What `drift` found, in the same terms (through its JSON, as the command and the MCP tool
/// give it).
fn found(drift: &fluxfleet::fleet::drift::Drift) -> BTreeSet<Copy> {
    let doc = serde_json::to_value(drift).unwrap();
    found_in(&doc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_names_exactly_the_copies_the_simulator_made_differ() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 2_000;
        c.workspaces = 8;
        c.objects = 20;
        c.scenario = Scenario::Story;
    })
    .await;
    let truth: Vec<TruthCluster> = common::workloads(&sim);
    let reachable: BTreeSet<&str> = truth
        .iter()
        .filter(|c| c.faults.is_empty())
        .map(|c| c.name.as_str())
        .collect();
    let counts: BTreeMap<&str, usize> = truth
        .iter()
        .map(|c| (c.name.as_str(), c.objects.len()))
        .collect();
    let mut engine = common::engine_settings();
    engine.kinds = vec![
        fluxfleet::fleet::FluxKind::Kustomization,
        fluxfleet::fleet::FluxKind::HelmRelease,
    ];
    engine.list_only = true;
    let mut live = Session::kube(&common::fleet_of(&sim), &engine);
    let appliers = |c: &TruthCluster| {
        c.objects
            .iter()
            .filter(|o| o.kind == "Kustomization" || o.kind == "HelmRelease")
            .count()
    };
    let wanted: BTreeMap<&str, usize> = truth
        .iter()
        .map(|c| (c.name.as_str(), appliers(c)))
        .collect();
    assert_eq!(counts.len(), wanted.len());
    common::until(&mut live, Duration::from_secs(300), |live| {
        let listed = reachable
            .iter()
            .filter(|name| {
                live.index
                    .cluster_named(name)
                    .is_some_and(|c| c.objects.len() == wanted[*name])
            })
            .count();
        (listed < reachable.len())
            .then(|| format!("{listed} of {} clusters listed", reachable.len()))
    })
    .await;
    let meant = meant(&truth, &reachable);
    let kinds: BTreeSet<&str> = meant.iter().map(|m| m.2.as_str()).collect();
    let every = [
        "live",
        "corrected",
        "substituted",
        "values",
        "slow",
        "flapping",
        "stale",
    ];
    assert_eq!(kinds, BTreeSet::from(every));
    // The sim's clock runs from its pinned epoch: ten minutes on, every copy has run within
    // twice its interval but the stale cluster's.
    let runs_now = jiff::Timestamp::from_second(1_790_000_000 + 600).unwrap();
    let mut drift = fluxfleet::export::drift::of(&live.index, &Filter::default(), runs_now);
    // The Kustomizations' events, one list a cluster: the controller that keeps correcting
    // live objects on the one cluster the story edits by hand — every drifting copy named.
    use fluxfleet::session::corrections::{self, corrected};
    let reads = corrections::wanted(&live.index, &Filter::default());
    let how = fluxfleet::session::evidence::Gather::default();
    corrected(&live.reader(), reads, how, &mut drift).await;
    // A cluster whose events did not come in time (asked twice) is named as not read: on
    // these shared cores, a few of 2,000 new connections may.
    let reads = drift.reads.clone().unwrap();
    assert!(reads.not_read.len() <= 20, "{reads:?}");
    let unread: BTreeSet<&str> = reads.not_read.iter().map(|n| n.cluster.as_str()).collect();
    let mut meant_read = meant.clone();
    meant_read.retain(|(c, _, how)| how != "corrected" || !unread.contains(c.as_str()));
    assert_eq!(found(&drift), meant_read);
    assert!(reads.events > 1_000, "{reads:?}");
    // The slow copies are named beside the median, which the others are near.
    let slow = drift
        .reconciles
        .iter()
        .find(|r| !r.slow.is_empty())
        .expect("a slow object");
    assert_eq!(&*slow.name, "infra-configs");
    let median = slow.median_ms.unwrap();
    assert!(median < 5_000, "{slow:?}");
    assert_eq!(slow.slowest[0], slow.slow[0]);
    assert!(slow.slow.iter().all(|t| t.took_ms > 240_000), "{slow:?}");
    // What most copies applied is the norm, and the sentence names the odd ones.
    let apps = drift
        .differ
        .iter()
        .find(|d| &*d.name == "apps")
        .expect("apps differs");
    assert!(apps.norm.copies > 10 * apps.differing(), "{apps:?}");
    let said = apps.said();
    for c in apps.variants.iter().flat_map(|v| &v.clusters) {
        assert!(said.contains(&**c), "{said}");
    }
    assert!(drift.agree > 0);

    // The gate refuses the revision in a ring whose copies applied different manifests, naming
    // the odd ones: the substituted copies of that workspace.
    use fluxfleet::export::gate::{ClosedBy, verdict};
    let odd = &apps.variants[0].clusters[0];
    let workspace = &truth.iter().find(|c| c.name == **odd).unwrap().workspace;
    let in_ring: Vec<String> = meant
        .iter()
        .filter(|(c, what, how)| {
            how == "substituted"
                && what.ends_with("/apps")
                && truth
                    .iter()
                    .any(|t| t.name == *c && t.workspace == *workspace)
        })
        .map(|(c, ..)| c.clone())
        .collect();
    let now = jiff::Timestamp::from_second(1_790_000_000 + 86_400).unwrap();
    let rings = fluxfleet::fleet::rollouts::Rings::default();
    let hour = jiff::SignedDuration::from_hours(1);
    let filter = Filter {
        kind: Some(fluxfleet::fleet::FluxKind::Kustomization),
        name: Some("apps".into()),
        ..Filter::default()
    };
    let v = verdict(
        &live.index,
        (&filter, &rings),
        (workspace, &apps.revision),
        (hour, hour),
        now,
    );
    assert!(!v.open);
    let differs: Vec<&ClosedBy> = v
        .closed_by
        .iter()
        .filter(|c| matches!(c, ClosedBy::Differs { .. }))
        .collect();
    assert_eq!(differs.len(), 1, "{v:#?}");
    let ClosedBy::Differs { object, odd, .. } = differs[0] else {
        unreachable!()
    };
    assert_eq!(object, "Kustomization/flux-system/apps");
    assert_eq!(*odd, in_ring);

    // The TUI's `:drift` lists the same copies, one row each; enter opens the copy.
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use fluxfleet::app::model::{Model, RowId};
    use fluxfleet::app::update::{Msg, update};
    let (keymap, _) =
        fluxfleet::app::keymap::Keymap::from_config(&fluxfleet::config::Config::defaults().keymap);
    let index = std::mem::take(&mut live.index);
    let mut model = Model::new(index, keymap, Vec::new(), runs_now);
    let key = |model: &mut Model, code| {
        update(model, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    };
    key(&mut model, KeyCode::Char(':'));
    for c in "drift".chars() {
        key(&mut model, KeyCode::Char(c));
    }
    key(&mut model, KeyCode::Enter);
    let shot = common::tui::screen(&mut model, 200, 50);
    assert!(shot.contains("drift: 2 objects with copies off"), "{shot}");
    let mut listed = BTreeSet::new();
    for id in &model.rows.ids {
        let RowId::Object(c, k) = id else {
            panic!("{id:?}")
        };
        let name = model.index.cluster(*c).unwrap().info.name.clone();
        let what = format!("{}/{}/{}", k.kind, k.namespace, k.name);
        listed.insert((name, what));
    }
    // From the index: a controller that keeps correcting is read from its events, by `D` on
    // the object.
    let meant_rows: BTreeSet<(String, String)> = meant
        .iter()
        .filter(|(_, _, how)| how != "corrected")
        .map(|(c, w, _)| (c.clone(), w.clone()))
        .collect();
    assert_eq!(listed, meant_rows);
    key(&mut model, KeyCode::Enter);
    assert!(
        matches!(
            model.screen().view,
            fluxfleet::app::view::View::Detail { .. }
        ),
        "{:?}",
        model.screen().view
    );
    // D on the copy: the drift of that object alone, across the fleet.
    let fluxfleet::app::view::View::Detail { key: opened, .. } = model.screen().view.clone() else {
        unreachable!()
    };
    key(&mut model, KeyCode::Char('D'));
    let _ = common::tui::screen(&mut model, 200, 50);
    assert!(
        matches!(&model.screen().view, fluxfleet::app::view::View::Drift { key: Some(k), .. } if *k == opened),
        "{:?}",
        model.screen().view
    );
    let of_it = meant_rows
        .iter()
        .filter(|(_, w)| *w == format!("{}/{}/{}", opened.kind, opened.namespace, opened.name))
        .count();
    assert_eq!(model.rows.ids.len(), of_it);
    live.index = std::mem::take(&mut model.index);
    live.shutdown().await;
}

/// The set `found` makes of a `drift -o json` answer (the command's, or the MCP tool's pages
/// put together).
fn found_in(doc: &serde_json::Value) -> BTreeSet<Copy> {
    let (differ, live) = (
        doc["differ"].as_array().unwrap(),
        doc["live"].as_array().unwrap(),
    );
    let mut out = BTreeSet::new();
    for d in differ {
        let what = format!(
            "{}/{}/{}",
            d["kind"].as_str().unwrap(),
            d["namespace"].as_str().unwrap(),
            d["name"].as_str().unwrap()
        );
        let how = match d["kind"].as_str() {
            Some("HelmRelease") => "values",
            _ => "substituted",
        };
        for v in d["variants"].as_array().unwrap() {
            for c in v["clusters"].as_array().unwrap() {
                out.insert((
                    c.as_str().unwrap().to_string(),
                    what.clone(),
                    how.to_string(),
                ));
            }
        }
    }
    for l in live {
        let what = format!(
            "{}/{}/{}",
            l["kind"].as_str().unwrap(),
            l["namespace"].as_str().unwrap(),
            l["name"].as_str().unwrap()
        );
        let how = match l.get("correcting") {
            Some(_) => "corrected",
            None => "live",
        };
        out.insert((l["cluster"].as_str().unwrap().to_string(), what, how.into()));
    }
    for r in doc["reconciles"].as_array().unwrap() {
        let what = format!(
            "{}/{}/{}",
            r["kind"].as_str().unwrap(),
            r["namespace"].as_str().unwrap(),
            r["name"].as_str().unwrap()
        );
        let named = |list: &str, how: &str, out: &mut BTreeSet<Copy>| {
            for c in r[list].as_array().unwrap() {
                let cluster = c.get("cluster").unwrap_or(c).as_str().unwrap();
                out.insert((cluster.to_string(), what.clone(), how.to_string()));
            }
        };
        named("slow", "slow", &mut out);
        named("flapping", "flapping", &mut out);
        named("stuck", "stale", &mut out);
    }
    out
}

/// `fluxfleet drift` as a pipeline runs it (exit 8, the copies in its JSON) and MCP's `drift`
/// tool say what the simulator made differ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_and_the_mcp_tool_name_the_same_copies() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 300;
        c.workspaces = 4;
        c.objects = 20;
        c.scenario = Scenario::Story;
        // The command and the server read their clock: the fleet's runs on it too.
        c.epoch = None;
    })
    .await;
    let truth = common::workloads(&sim);
    let reachable: BTreeSet<&str> = truth
        .iter()
        .filter(|c| c.faults.is_empty())
        .map(|c| c.name.as_str())
        .collect();
    let meant = meant(&truth, &reachable);
    assert!(meant.len() >= 3, "{meant:?}");
    let dir = sim.dir.path();
    let out = common::fluxfleet()
        .args([
            "drift",
            "-o",
            "json",
            "--timeout",
            "60s",
            "--kubeconfig-dir",
        ])
        .arg(dir.join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    // Drift found: 8, though some clusters of the story cannot be reached.
    assert_eq!(out.status.code(), Some(8), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = found_in(&doc);
    assert_eq!(said, meant);

    let client = common::mcp::connect(dir, &[]).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (differ, mut first) =
            common::mcp::all_pages(&client, "drift", serde_json::json!({}), "differ").await;
        first["differ"] = serde_json::Value::Array(differ);
        let told = found_in(&first);
        if told == meant {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{told:?} != {meant:?}"
        );
        tokio::task::yield_now().await;
    }
    client.cancel().await.unwrap();
}

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
    for id in &model.rows.ids {
        let RowId::Object(c, k) = id else {
            panic!("{id:?}")
        };
        assert_eq!(*k, key);
        let name = model.index.cluster(*c).unwrap().info.name.clone();
        let line = shot
            .lines()
            .find(|l| l.contains(&format!("│{name} ")))
            .unwrap_or_else(|| panic!("{name} not on screen: {shot}"));
        rows.push((name, line.to_string()));
    }
    live.index = std::mem::take(&mut model.index);
    (shot, rows)
}
