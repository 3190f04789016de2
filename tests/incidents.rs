//! An outage of a host 500 clusters share: every GitRepository there fails with its own message
//! naming the host, and `fluxfleet` reads them as one incident — in `get --root-causes`, and as
//! one alert in a real Alertmanager, labelled by the endpoint and the error's class only, which
//! resolves once the outage is over.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::alertmanager::{Alertmanager, fluxfleet};
use fluxfleet_sim::Outage;
use serde_json::Value;

const HOST: &str = "github.com";

/// `get --status failing --root-causes -o json` of the fleet.
fn root_causes(home: &std::path::Path, kubeconfigs: &str) -> Value {
    let out = fluxfleet(home)
        .args(["get", "--status", "failing", "--root-causes", "-o", "json"])
        .args(["--kubeconfig-dir", kubeconfigs, "--timeout", "120s"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// The outage's alerts Alertmanager holds active (the fleet has other trouble: a few deploy
/// keys GitHub refuses are an incident of their own, class `auth`).
fn outage_alerts(am: &Alertmanager) -> Vec<Value> {
    am.alerts()
        .into_iter()
        .filter(|a| {
            let l = &a["labels"];
            l["alertname"] == "FluxIncident"
                && l["endpoint"] == HOST
                && l["class"] == "server-error"
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_of_a_shared_host_is_one_incident_and_one_alert_resolved_when_it_ends() {
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
    // GitHub answers 503 to 500 of the clusters: each one's flux-system repository and its
    // team's fail, with messages that differ by repository.
    let hit: Vec<String> = sim.handle.cluster_names().into_iter().take(500).collect();
    assert!(sim.handle.outage(HOST, Outage::ServerError, &hit));
    let (home_path, dir) = (home.path().to_path_buf(), kubeconfigs.clone());
    let json = tokio::task::spawn_blocking(move || {
        let mut json = Value::Null;
        until("get --root-causes sees the outage as one incident", || {
            json = root_causes(&home_path, &dir);
            let incidents: Vec<&Value> = json["incidents"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["endpoint"] == HOST && i["class"] == "server-error")
                .collect();
            match incidents[..] {
                [i] if i["clusters"] == 500 => Ok(()),
                _ => Err(format!("{incidents:?}")),
            }
        });
        json
    })
    .await
    .unwrap();
    let incident = json["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["endpoint"] == HOST)
        .unwrap();
    let causes = incident["rootCauses"].as_array().unwrap();
    assert!(
        causes.len() >= 2,
        "different repositories, one incident: {causes:?}"
    );
    assert_eq!(incident["summary"], "github.com answers with server errors");
    // Each of its root causes names it; their messages differ.
    let members: Vec<&Value> = json["rootCauses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["incident"]["endpoint"] == HOST && c["incident"]["class"] == "server-error")
        .collect();
    assert_eq!(members.len(), causes.len());
    let messages: std::collections::BTreeSet<&str> = members
        .iter()
        .filter_map(|c| c["message"].as_str())
        .collect();
    assert!(messages.len() >= 2, "{messages:?}");

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
    let am = tokio::task::spawn_blocking(move || {
        until("one alert for the outage", || {
            let ours = outage_alerts(&am);
            let [alert] = &ours[..] else {
                return Err(format!("{ours:#?}"));
            };
            let labels = alert["labels"].as_object().unwrap();
            let names: Vec<&str> = labels.keys().map(String::as_str).collect();
            // Stable labels: the endpoint and the class, nothing that changes as it spreads.
            assert_eq!(names, ["alertname", "class", "endpoint"], "{alert:#}");
            assert_eq!(labels["class"], "server-error");
            let annotations = &alert["annotations"];
            match annotations["clusters"] == "500" {
                true => {
                    let listed = annotations["root_causes"].as_str().unwrap();
                    assert!(listed.contains("GitRepository flux-system/"), "{listed}");
                    Ok(())
                }
                false => Err(format!("{annotations:#}")),
            }
        });
        am
    })
    .await
    .unwrap();

    // The outage is over: the sources fetch again, and the alert resolves.
    assert!(sim.handle.outage_over(HOST));
    let am = tokio::task::spawn_blocking(move || {
        until("the incident's alert resolved", || {
            match outage_alerts(&am).is_empty() {
                false => Err("still active".into()),
                true => Ok(()),
            }
        });
        am
    })
    .await
    .unwrap();
    drop(am);
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    let said = lines.join().unwrap().join("\n");
    assert!(
        said.contains("firing   incident server-error github.com — 500 clusters"),
        "{said}"
    );
    assert!(
        said.contains("resolved incident server-error github.com"),
        "{said}"
    );
}
