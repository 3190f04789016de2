//! The demo's fleet (the simulator's story scenario, 500 clusters in 8 workspaces) as a user
//! first sees it: most clusters entirely ready and a story to find — triage's first group is the
//! bad revision's root cause with what waits on it, the fleet map mostly healthy with the trouble
//! standing out, and the rollout view's stuck copies exactly the ones the simulator knows are
//! stuck.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::Model;
use fluxfleet::app::update::{Msg, update};
use fluxfleet::config::Config;
use fluxfleet::fleet::rollouts::{self, StuckRules};
use fluxfleet::session::Session;
use fluxfleet_sim::{Scenario, TruthCluster};

const EPOCH: i64 = 1_790_000_000;

fn press(model: &mut Model, c: char) {
    let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    update(model, Msg::Key(key));
}

/// Whether every object of the cluster is ready, or suspended on purpose.
fn entirely_ready(c: &TruthCluster) -> bool {
    c.objects
        .iter()
        .all(|o| o.suspended || o.health.as_str() == "ready")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_fleet_tells_a_true_story_and_the_client_finds_it() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 500;
        c.workspaces = 8;
        c.scenario = Scenario::Story;
    })
    .await;
    let truth: Vec<TruthCluster> = common::workloads(&sim);

    // The shape: most clusters entirely ready, a small share of objects failing.
    let ready = truth.iter().filter(|c| entirely_ready(c)).count();
    assert!(
        ready * 10 >= truth.len() * 9,
        "{ready} of {} ready",
        truth.len()
    );
    let objects: usize = truth.iter().map(|c| c.objects.len()).sum();
    let failing: usize = truth
        .iter()
        .flat_map(|c| &c.objects)
        .filter(|o| o.health.is_failing())
        .count();
    assert!(
        (objects / 100..=objects * 3 / 100).contains(&failing),
        "{failing} of {objects} objects failing"
    );
    // Suspended on purpose, with who and why.
    assert!(
        truth.iter().any(|c| c
            .objects
            .iter()
            .any(|o| o.suspended && o.name == "kube-prometheus-stack")),
        "a suspension of the story"
    );

    // The client watches the fleet; what it can reach is listed whole.
    let reachable: BTreeSet<&str> = truth
        .iter()
        .filter(|c| c.faults.is_empty())
        .map(|c| c.name.as_str())
        .collect();
    let mut live = Session::kube(&common::fleet_of(&sim), &common::engine_settings());
    let counts: BTreeMap<&str, usize> = truth
        .iter()
        .map(|c| (c.name.as_str(), c.objects.len()))
        .collect();
    common::until(&mut live, Duration::from_secs(120), |live| {
        let listed = reachable
            .iter()
            .filter(|name| {
                live.index
                    .cluster_named(name)
                    .is_some_and(|c| c.objects.len() == counts[*name])
            })
            .count();
        (listed < reachable.len())
            .then(|| format!("{listed} of {} clusters listed", reachable.len()))
    })
    .await;

    // The rollout view's stuck copies are the simulator's, thing by thing.
    let now = jiff::Timestamp::from_second(EPOCH + 60).unwrap();
    let complete = live
        .index
        .entries()
        .filter(|(_, c)| reachable.contains(c.info.name.as_str()));
    let spreads = rollouts::spreads(complete, None, &StuckRules::default(), now);
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for s in spreads.iter().filter(|s| s.stuck > 0) {
        seen.insert(
            format!("{} {}/{}", s.key.kind, s.key.namespace, s.key.name),
            s.stuck,
        );
    }
    let mut meant: BTreeMap<String, u32> = BTreeMap::new();
    for c in truth.iter().filter(|c| reachable.contains(c.name.as_str())) {
        for o in c.objects.iter().filter(|o| o.stuck.is_some()) {
            *meant
                .entry(format!("{} {}/{}", o.kind, o.namespace, o.name))
                .or_default() += 1;
        }
    }
    assert!(!meant.is_empty());
    assert_eq!(seen, meant, "stuck copies, by thing");

    // The fleet map: at least 85 % of its cells healthy (one per cluster at this size).
    let bad_clusters: Vec<String> = truth
        .iter()
        .filter(|c| {
            c.objects
                .iter()
                .any(|o| o.stuck.is_some() && o.name == "infra-controllers")
        })
        .map(|c| c.name.clone())
        .collect();
    assert!(!bad_clusters.is_empty());
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let index = std::mem::take(&mut live.index);
    let mut model = Model::new(index, keymap, Vec::new(), now);
    let shot = common::tui::screen(&mut model, 200, 60);
    let map: String = shot
        .lines()
        .skip_while(|l| !l.contains("Fleet map"))
        .skip(1)
        .take_while(|l| !l.starts_with("\"╰"))
        .collect();
    let cells = map.chars().filter(|c| "■◐░▒▓‖?·□".contains(*c)).count();
    let healthy = map.chars().filter(|c| *c == '■').count();
    assert_eq!(cells, truth.len(), "{shot}");
    // The trouble: the bad revision's clusters, the flaky region's, the outage's, the
    // misconfigured and the unreachable ones.
    assert!(
        healthy * 100 >= cells * 82,
        "{healthy} of {cells} cells healthy: {shot}"
    );

    // Triage: the first group is the bad revision's root cause, what waits on it under it.
    press(&mut model, 't');
    let shot = common::tui::screen(&mut model, 200, 30);
    let first = shot
        .lines()
        .find(|l| l.contains("Kustomization") || l.contains("HelmRelease"))
        .unwrap_or_else(|| panic!("{shot}"));
    assert!(
        first.contains("flux-system/infra-controllers") && first.contains("HealthCheckFailed"),
        "{shot}"
    );
    assert!(
        first.contains("blocks"),
        "what waits on it is counted: {shot}"
    );
    assert!(
        first.contains(&bad_clusters.len().to_string()),
        "on the {} clusters that failed: {shot}",
        bad_clusters.len()
    );
    live.shutdown().await;

    // Why it broke: `get --root-causes -o json` blames the revision the story broke the
    // clusters with, on every copy, just before each failed; the deploy key rotated on the forge
    // (a source failing with no change before it) is outside the GitOps change.
    let broken_by: BTreeSet<&str> = truth
        .iter()
        .flat_map(|c| &c.objects)
        .filter_map(|o| o.broken_by.as_deref())
        .collect();
    assert_eq!(broken_by.len(), 1, "one bad revision: {broken_by:?}");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env("HOME", "/nonexistent-home")
        .env_remove("KUBECONFIG")
        .args(["get", "--root-causes", "-o", "json", "--timeout", "60s"])
        .arg("--kubeconfig-dir")
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let causes = doc["rootCauses"].as_array().unwrap();
    let cause = |name: &str| {
        causes
            .iter()
            .find(|c| c["name"] == name && c["cycle"].is_null())
            .unwrap_or_else(|| panic!("{name} in {doc:#}"))
    };
    let bad = cause("infra-controllers");
    let suspect = &bad["suspect"];
    assert_eq!(suspect["revision"], *broken_by.first().unwrap(), "{bad:#}");
    assert_eq!(suspect["likely"], true, "{bad:#}");
    let copies = bad_clusters.len();
    for field in ["copies", "justBefore", "failing"] {
        assert_eq!(suspect[field], copies, "{field}: {bad:#}");
    }
    assert_eq!(suspect["elsewhereFailing"], 0, "{bad:#}");
    assert!(suspect["runsFine"].as_u64().unwrap() > 0, "{bad:#}");
    assert!(
        suspect["evidence"]
            .as_str()
            .unwrap()
            .starts_with("began after main@sha1:"),
        "{bad:#}"
    );
    // The outage: the fleet and team repositories of its clusters, different objects, are one
    // incident.
    let incidents = doc["incidents"].as_array().unwrap();
    let outage = incidents
        .iter()
        .find(|i| i["endpoint"] == "github.com" && i["class"] == "server-error")
        .unwrap_or_else(|| panic!("the outage in {incidents:#?}"));
    assert!(
        outage["rootCauses"].as_array().unwrap().len() >= 2,
        "{outage:#}"
    );
    let hit = truth
        .iter()
        .filter(|c| {
            c.objects.iter().any(|o| {
                o.kind == "GitRepository" && o.name == "flux-system" && o.health.is_failing()
            })
        })
        .count();
    assert_eq!(outage["clusters"], hit, "{outage:#}");
    let key = causes
        .iter()
        .find(|c| c["name"] == "payments" && c["incident"]["class"] == "auth")
        .unwrap_or_else(|| panic!("the rotated deploy key in {doc:#}"));
    assert!(
        key["suspect"].is_null() || key["suspect"]["likely"] == false,
        "nothing changed before the deploy key failed: {key:#}"
    );
    sim.handle.shutdown().await;
}
