//! Outages of hosts 500 clusters share — GitHub (a Git host: every cluster's fleet repository
//! and its team's fail, each with its own message naming the host), then ghcr.io (a registry:
//! every cluster's OCI artifact) — and `fluxfleet` reads each as one incident: in
//! `get --root-causes`, and as one alert in a real Alertmanager, labelled by the endpoint and
//! the error's class only, which resolves once the outage is over.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::alertmanager::{Alertmanager, fluxfleet};
use fluxfleet_sim::Outage;
use serde_json::Value;

/// `get --status failing --root-causes -o json` of the fleet.
fn root_causes(home: &Path, kubeconfigs: &str) -> Value {
    let out = fluxfleet(home)
        .args(["get", "--status", "failing", "--root-causes", "-o", "json"])
        .args(["--kubeconfig-dir", kubeconfigs, "--timeout", "120s"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// One outage: its host, how it fails, its class as fluxfleet names it.
#[derive(Clone, Copy)]
struct Case {
    host: &'static str,
    outage: Outage,
    class: &'static str,
    /// The fewest root causes (objects) it fails on every cluster.
    causes: usize,
    /// The sources at the host: kind and name's start.
    sources: (&'static str, &'static str),
    /// What the incident says.
    summary: &'static str,
    /// What its alert's `root_causes` annotation names.
    names: &'static str,
}

/// The outage's alerts Alertmanager holds active (the fleet has other trouble: a few deploy
/// keys GitHub refuses are an incident of their own, class `auth`).
fn outage_alerts(am: &Alertmanager, case: Case) -> Vec<Value> {
    am.alerts()
        .into_iter()
        .filter(|a| {
            let l = &a["labels"];
            l["alertname"] == "FluxIncident"
                && l["endpoint"] == case.host
                && l["class"] == case.class
        })
        .collect()
}

/// Polls until `done` (the clock bounds the wait, it decides nothing).
fn until(what: &str, mut done: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let Err(wrong) = done() else {
            return;
        };
        assert!(Instant::now() < deadline, "{what}: {wrong}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// `case`'s outage on `hit` is one incident in `get --root-causes` and one alert, which
/// resolves when it is over.
fn one_incident(sim: &common::Sim, am: &Alertmanager, home: &Path, dir: &str, case: Case) {
    let hit: Vec<String> = sim.handle.cluster_names().into_iter().take(500).collect();
    // The clusters it fails: those with a source there that is not suspended (a suspended
    // source fetches nothing).
    let (kind, prefix) = case.sources;
    let failing = common::workloads(sim)
        .into_iter()
        .filter(|c| hit.contains(&c.name))
        .filter(|c| {
            c.objects
                .iter()
                .any(|o| o.kind == kind && o.name.starts_with(prefix) && !o.suspended)
        })
        .count();
    assert!(failing > 450, "{failing} of the 500 have a source there");
    assert!(sim.handle.outage(case.host, case.outage, &hit));
    let mut json = Value::Null;
    until("get --root-causes sees the outage as one incident", || {
        json = root_causes(home, dir);
        let incidents: Vec<&Value> = json["incidents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["endpoint"] == case.host && i["class"] == case.class)
            .collect();
        match incidents[..] {
            [i] if i["clusters"] == failing => Ok(()),
            _ => Err(format!("{incidents:?}")),
        }
    });
    let incident = json["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["endpoint"] == case.host)
        .unwrap();
    let causes = incident["rootCauses"].as_array().unwrap();
    assert!(causes.len() >= case.causes, "{causes:?}");
    assert_eq!(incident["summary"], case.summary);
    // Each of its root causes names it.
    let members: Vec<&Value> = json["rootCauses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["incident"]["endpoint"] == case.host && c["incident"]["class"] == case.class)
        .collect();
    assert_eq!(members.len(), causes.len());
    let messages: std::collections::BTreeSet<&str> = members
        .iter()
        .filter_map(|c| c["message"].as_str())
        .collect();
    assert!(messages.len() >= case.causes, "{messages:?}");

    until("one alert for the outage", || {
        let ours = outage_alerts(am, case);
        let [alert] = &ours[..] else {
            return Err(format!("{ours:#?}"));
        };
        let labels = alert["labels"].as_object().unwrap();
        let names: Vec<&str> = labels.keys().map(String::as_str).collect();
        // Stable labels: the endpoint and the class, nothing that changes as it spreads.
        assert_eq!(names, ["alertname", "class", "endpoint"], "{alert:#}");
        let annotations = &alert["annotations"];
        match annotations["clusters"].as_str() == Some(&failing.to_string()) {
            true => {
                let listed = annotations["root_causes"].as_str().unwrap();
                assert!(listed.contains(case.names), "{listed}");
                Ok(())
            }
            false => Err(format!("{annotations:#}")),
        }
    });
    // The outage is over: the sources fetch again, and the alert resolves.
    assert!(sim.handle.outage_over(case.host));
    until("the incident's alert resolved", || {
        match outage_alerts(am, case).is_empty() {
            false => Err("still active".into()),
            true => Ok(()),
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outages_of_a_git_host_and_a_registry_are_one_incident_and_one_alert_each() {
    let am = Alertmanager::start();
    let sim = common::start_with(|c| {
        c.clusters = 520;
        c.workspaces = 5;
        c.objects = 24;
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let kubeconfigs = kubeconfigs.to_str().unwrap().to_string();
    let mut child = fluxfleet(home.path())
        .args(["alert", "--kubeconfig-dir", &kubeconfigs])
        .args(["--alertmanager", &am.url, "--timeout", "120s"])
        .args(["--every", "1s", "--for", "0s", "--hold", "0s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    let cases = [
        // GitHub answers 503: each cluster's flux-system repository and its team's fail,
        // with messages that differ by repository.
        Case {
            host: "github.com",
            outage: Outage::ServerError,
            class: "server-error",
            causes: 2,
            sources: ("GitRepository", ""),
            summary: "github.com answers with server errors",
            names: "GitRepository flux-system/",
        },
        // The registry rate-limits every cluster's pulls of the podinfo artifact.
        Case {
            host: "ghcr.io",
            outage: Outage::RateLimit,
            class: "rate-limit",
            causes: 1,
            sources: ("OCIRepository", "podinfo-manifests"),
            summary: "ghcr.io is rate limiting",
            names: "OCIRepository flux-system/podinfo-manifests",
        },
    ];
    let home_path: PathBuf = home.path().to_path_buf();
    let (sim, am) = tokio::task::spawn_blocking(move || {
        for case in cases {
            one_incident(&sim, &am, &home_path, &kubeconfigs, case);
        }
        (sim, am)
    })
    .await
    .unwrap();
    drop((sim, am));
    common::terminate(Some(child.id()));
    assert!(child.wait().unwrap().success());
    let said = lines.join().unwrap().join("\n");
    // Fired once it was seen: on a loaded machine the first round may see the outage on part
    // of the fleet, and its spread to the rest is no new line (a line says what fired, changed
    // labels or resolved). That the alert came to count every cluster is in Alertmanager's
    // annotation, checked in `one_incident`.
    for expected in [
        "firing   incident server-error github.com — ",
        "resolved incident server-error github.com",
        "firing   incident rate-limit ghcr.io — ",
        "resolved incident rate-limit ghcr.io",
    ] {
        assert!(said.contains(expected), "{expected}: {said}");
    }
}
