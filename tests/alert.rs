//! `fluxfleet alert` against a real Alertmanager, on the simulator's story (a bad revision that
//! broke infra-controllers on some clusters, long-standing misconfigurations elsewhere): one
//! alert per root cause — the same ones, on the same clusters, as `get --root-causes` — the bad
//! revision named as the suspect, a cause with no change before it saying so; every alert sent
//! again while it lasts, and the bad revision's resolved once it is fixed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::alertmanager::{Alertmanager, fluxfleet};
use fluxfleet_sim::Scenario;
use fluxfleet_sim::facts::FluxKind;
use serde_json::Value;

/// kind, namespace, name, reason.
type Key = (String, String, String, String);

fn text(v: &Value, field: &str) -> String {
    v[field].as_str().unwrap_or("").to_string()
}

/// An incident: endpoint, class.
type Shared = (String, String);

/// `get --status failing --root-causes -o json`, merged as alerts are: per incident, its
/// clusters; per object and reason of the causes in none, the clusters and the likely suspect.
#[allow(clippy::type_complexity)]
fn root_causes(
    home: &std::path::Path,
    kubeconfigs: &str,
) -> (
    BTreeMap<Key, (BTreeSet<String>, String)>,
    BTreeMap<Shared, usize>,
) {
    let out = fluxfleet(home)
        .args(["get", "--status", "failing", "--root-causes", "-o", "json"])
        .args(["--kubeconfig-dir", kubeconfigs])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let mut causes: BTreeMap<Key, (BTreeSet<String>, String)> = BTreeMap::new();
    // Widest first, as the alert takes its suspect from the widest.
    for c in json["rootCauses"].as_array().unwrap() {
        if !c["incident"].is_null() {
            continue;
        }
        let reason = c["reason"]
            .as_str()
            .unwrap_or(c["status"].as_str().unwrap());
        let key = (
            text(c, "kind"),
            text(c, "namespace"),
            text(c, "name"),
            reason.to_string(),
        );
        let entry = causes.entry(key).or_default();
        if entry.0.is_empty() && c["suspect"]["likely"] == true {
            entry.1 = text(&c["suspect"], "revision");
        }
        for copy in c["clusters"].as_array().unwrap() {
            entry.0.insert(text(copy, "cluster"));
        }
    }
    let incidents = json["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let key = (text(i, "endpoint"), text(i, "class"));
            (key, i["clusters"].as_u64().unwrap() as usize)
        })
        .collect();
    (causes, incidents)
}

/// The incidents' alerts Alertmanager holds: by endpoint and class, how many clusters each
/// says.
fn incidents_held(am: &Alertmanager) -> BTreeMap<Shared, usize> {
    am.alerts()
        .iter()
        .filter(|a| a["labels"]["alertname"] == "FluxIncident")
        .map(|a| {
            let key = (text(&a["labels"], "endpoint"), text(&a["labels"], "class"));
            (key, text(&a["annotations"], "clusters").parse().unwrap())
        })
        .collect()
}

fn ours(alerts: &[Value]) -> BTreeMap<Key, Value> {
    alerts
        .iter()
        .filter(|a| a["labels"]["alertname"] == "FluxRootCause")
        .map(|a| {
            let l = &a["labels"];
            let key = (
                text(l, "kind"),
                text(l, "namespace"),
                text(l, "name"),
                text(l, "reason"),
            );
            (key, a.clone())
        })
        .collect()
}

/// Polls Alertmanager until `done` is satisfied with its alerts, or fails saying what it last
/// held.
fn until(
    am: &Alertmanager,
    what: &str,
    done: impl Fn(&BTreeMap<Key, Value>) -> bool,
) -> BTreeMap<Key, Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let alerts = ours(&am.alerts());
        if done(&alerts) {
            return alerts;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; Alertmanager holds {alerts:#?}"
        );
        // Polling interval, not synchronisation: the check above decides.
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_alert_per_root_cause_reaches_alertmanager_and_resolves_after_the_fix() {
    let am = Alertmanager::start();
    let sim = common::start_with(|c| {
        c.clusters = 60;
        c.workspaces = 4;
        c.scenario = Scenario::Story;
    })
    .await;
    // The flaky region's 503s would make the two readings differ by chance; the story's broken
    // revision and misconfigurations stay.
    sim.handle.calm();
    let home = tempfile::tempdir().unwrap();
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let kubeconfigs = kubeconfigs.to_str().unwrap().to_string();

    let broken: Vec<(String, String)> = sim
        .handle
        .truth()
        .into_iter()
        .flat_map(|c| {
            c.objects
                .into_iter()
                .filter(|o| o.name == "infra-controllers")
                .filter_map(move |o| Some((c.name.clone(), o.broken_by?)))
        })
        .collect();
    assert!(
        broken.len() >= 2,
        "the story broke infra-controllers on a few clusters: {broken:?}"
    );
    let revisions: BTreeSet<&str> = broken.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(revisions.len(), 1, "one bad revision: {revisions:?}");
    let bad = revisions.first().unwrap().to_string();

    let (expected, incidents) = tokio::task::spawn_blocking({
        let (home, kubeconfigs) = (home.path().to_path_buf(), kubeconfigs.clone());
        move || root_causes(&home, &kubeconfigs)
    })
    .await
    .unwrap();
    let infra = (
        "Kustomization".to_string(),
        "flux-system".to_string(),
        "infra-controllers".to_string(),
        "HealthCheckFailed".to_string(),
    );
    let on: BTreeSet<String> = broken.iter().map(|(c, _)| c.clone()).collect();
    assert_eq!(
        expected[&infra].0, on,
        "get --root-causes finds the clusters the story broke"
    );
    assert_eq!(expected[&infra].1, bad);

    let mut child = fluxfleet(home.path())
        .args([
            "alert",
            "--kubeconfig-dir",
            &kubeconfigs,
            "--alertmanager",
            &am.url,
        ])
        .args([
            "--every",
            "1s",
            "--for",
            "0s",
            "--hold",
            "0s",
            "--label",
            "fleet=sim",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = Arc::new(Mutex::new(Vec::<String>::new()));
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn({
        let said = said.clone();
        move || {
            for line in BufReader::new(stdout).lines() {
                said.lock().unwrap().push(line.unwrap());
            }
        }
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines() {
            text.push_str(&line.unwrap());
            text.push('\n');
        }
        text
    });

    let infra_key = infra.clone();
    let checked = tokio::task::spawn_blocking(move || {
        // One alert per root cause, on the clusters get --root-causes names.
        let alerts = until(&am, "an alert per root cause", |alerts| {
            alerts.len() == expected.len()
                && alerts.iter().all(|(key, a)| {
                    expected.get(key).is_some_and(|(clusters, _)| {
                        a["annotations"]["clusters"] == clusters.len().to_string().as_str()
                    })
                })
        });
        let keys: Vec<&Key> = alerts.keys().collect();
        assert_eq!(keys, expected.keys().collect::<Vec<_>>());
        // And one per incident: causes sharing an endpoint's failure, on the same clusters.
        let deadline = Instant::now() + Duration::from_secs(60);
        while incidents_held(&am) != incidents {
            assert!(
                Instant::now() < deadline,
                "one alert per incident: {incidents:?}, Alertmanager holds {:?}",
                incidents_held(&am)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        for (key, a) in &alerts {
            let (clusters, suspect) = &expected[key];
            let labels = &a["labels"];
            assert_eq!(labels["fleet"], "sim");
            if clusters.len() <= 20 {
                let names: BTreeSet<String> = text(&a["annotations"], "cluster_names")
                    .split(',')
                    .map(str::to_string)
                    .collect();
                assert_eq!(&names, clusters, "{key:?}");
            }
            assert_eq!(text(labels, "suspect_revision"), *suspect, "{key:?}");
        }
        let infra_alert = &alerts[&infra];
        assert_eq!(infra_alert["labels"]["suspect_revision"], bad.as_str());
        assert!(text(&infra_alert["annotations"], "suspect").starts_with("began after"));
        assert!(text(&infra_alert["annotations"], "blast_radius").contains("holds back"));
        // What broke inside, read from its clusters once the cause was found: most of them
        // cannot pull the bad revision's image.
        let inside = until(&am, "what broke inside infra-controllers", |alerts| {
            alerts.get(&infra).is_some_and(|a| {
                a["annotations"]["workloads"]
                    .as_str()
                    .is_some_and(|w| w.contains("ImagePullBackOff"))
            })
        });
        let workloads = text(&inside[&infra]["annotations"], "workloads");
        assert!(
            workloads.starts_with("Deployment/kube-system/infra-controllers: ImagePullBackOff: "),
            "{workloads}"
        );
        // A misconfiguration of long standing: no change before it.
        let redis = alerts
            .iter()
            .find(|(k, _)| k.2 == "redis")
            .map(|(_, a)| a)
            .expect("the stalled redis HelmRelease alerts");
        assert!(redis["labels"].get("suspect_revision").is_none());
        let evidence = text(&redis["annotations"], "suspect");
        assert!(evidence.contains("outside the GitOps change"), "{evidence}");
        (am, alerts)
    })
    .await
    .unwrap();
    let (am, before) = checked;

    // The fix goes out: infra-controllers ready again where the story broke it.
    for (cluster, _) in &broken {
        let kind = FluxKind::Kustomization;
        assert!(
            sim.handle
                .set_ready(cluster, kind, "flux-system", "infra-controllers", true)
        );
    }
    let after = tokio::task::spawn_blocking(move || {
        let after = until(
            &am,
            "infra-controllers resolved, the rest sent again",
            |alerts| {
                !alerts.contains_key(&infra_key)
                    && before
                        .iter()
                        .filter(|(k, _)| **k != infra_key)
                        .all(|(k, a)| {
                            alerts
                                .get(k)
                                .is_some_and(|now| text(now, "endsAt") > text(a, "endsAt"))
                        })
            },
        );
        drop(am);
        after
    })
    .await
    .unwrap();
    assert!(!after.is_empty(), "the misconfigurations still alert");

    // SIGTERM ends it cleanly.
    common::terminate(Some(child.id()));
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let stderr = errors.join().unwrap();
    assert!(status.success(), "{status}: {stderr}");
    let said = said.lock().unwrap().join("\n");
    assert!(
        said.contains("firing   Kustomization flux-system/infra-controllers HealthCheckFailed"),
        "{said}"
    );
    assert!(
        said.contains("resolved Kustomization flux-system/infra-controllers HealthCheckFailed"),
        "{said}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}
