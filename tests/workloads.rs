//! What broke inside, end to end: `fluxfleet workloads` against the simulated fleet, whose
//! workloads fail as the simulator means them to (`/sim/truth`): the story's bad revision folded
//! into one line per cause with exactly the clusters it breaks, forbidden log reads named per
//! cluster; a hostile workload bounded and escaped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeSet;

use fluxfleet::fleet::workload::fold::normalized;
use fluxfleet_sim::{Scenario, TruthCluster};
use serde_json::Value;

/// The clusters whose copy of Kustomization `name` has a workload with `fault`.
fn with_fault(truth: &[TruthCluster], name: &str, fault: &str) -> BTreeSet<String> {
    truth
        .iter()
        .filter(|c| {
            c.objects.iter().any(|o| {
                o.kind == "Kustomization"
                    && o.name == name
                    && o.workload.as_ref().is_some_and(|w| w.fault == fault)
            })
        })
        .map(|c| c.name.clone())
        .collect()
}

fn names(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// `workloads -o json` on the story's fleet: every cluster asked is read, and the story's two
/// unreachable clusters make it exit 4, as `get` does.
fn story_json(out: &std::process::Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn workloads(sim: &common::Sim, args: &[&str]) -> std::process::Output {
    let fleet = sim.handle.files.fleet.display().to_string();
    common::fluxfleet()
        .args(["workloads", "--kubeconfig", &fleet])
        .args(args)
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_story_fleet_says_what_broke_inside_as_the_simulator_means_it() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 200;
        c.workspaces = 8;
        c.scenario = Scenario::Story;
    })
    .await;
    let truth = common::workloads(&sim);
    let pulls = with_fault(&truth, "infra-controllers", "image-not-found");
    let ooms = with_fault(&truth, "infra-controllers", "oom-killed");
    let logs_forbidden: BTreeSet<String> = truth
        .iter()
        .filter(|c| c.faults.iter().any(|f| f == "forbidden-logs"))
        .map(|c| c.name.clone())
        .collect();
    assert!(pulls.len() >= 5, "{pulls:?}");
    assert!(ooms.len() >= 3, "{ooms:?}");
    assert_eq!(logs_forbidden.len(), 2);
    assert!(logs_forbidden.is_subset(&ooms));

    let out = workloads(&sim, &["ks", "infra-controllers", "-o", "json"]).await;
    let doc = story_json(&out);
    let object = &doc["objects"][0];
    assert_eq!(object["kind"], "Kustomization");
    assert_eq!(object["name"], "infra-controllers");
    let asked = pulls.len() + ooms.len();
    assert_eq!(object["clusters"], asked);
    assert_eq!(object["read"], asked);
    let lines = object["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "one line per cause: {lines:#?}");

    // Most clusters: the new tag does not exist.
    let pull = &lines[0];
    assert_eq!(pull["workload"]["kind"], "Deployment");
    assert_eq!(pull["workload"]["namespace"], "kube-system");
    assert_eq!(pull["verdict"]["cause"], "imagePull");
    assert_eq!(pull["verdict"]["reason"], "ImagePullBackOff");
    let image = truth
        .iter()
        .find(|c| pulls.contains(&c.name))
        .and_then(|c| c.objects.iter().find(|o| o.name == "infra-controllers"))
        .and_then(|o| o.workload.as_ref())
        .map(|w| w.image.clone())
        .unwrap();
    assert_eq!(pull["verdict"]["image"], image.as_str());
    assert!(
        pull["headline"]
            .as_str()
            .unwrap()
            .ends_with("not found (no such tag or digest)"),
        "{pull}"
    );
    assert_eq!(pull["verdict"]["rolloutStuck"], true);
    assert_eq!(names(&pull["clusters"]), pulls);

    // A few: OOMKilled, with the log that shows it where logs may be read, and the clusters
    // whose RBAC forbids pods/log named.
    let oom = &lines[1];
    assert_eq!(oom["verdict"]["cause"], "crash");
    assert_eq!(oom["verdict"]["reason"], "CrashLoopBackOff");
    assert_eq!(oom["verdict"]["terminated"], "OOMKilled");
    assert_eq!(oom["verdict"]["exitCode"], 137);
    assert_eq!(oom["verdict"]["log"]["previous"], true);
    assert!(
        oom["headline"]
            .as_str()
            .unwrap()
            .contains("cache at 61Mi of 64Mi"),
        "{oom}"
    );
    assert_eq!(names(&oom["clusters"]), ooms);
    let from = oom["from"].as_str().unwrap();
    assert!(
        ooms.contains(from) && !logs_forbidden.contains(from),
        "{from}"
    );
    let not_read = oom["notRead"].as_array().unwrap();
    assert_eq!(not_read.len(), 1, "{not_read:?}");
    assert_eq!(not_read[0]["why"], "log not read, forbidden pods/log");
    assert_eq!(names(&not_read[0]["clusters"]), logs_forbidden);
    assert!(object["notRead"].as_array().unwrap().is_empty());
    // A bounded number of requests per cluster: the object, its workload, pods, events, a log.
    let requests = object["requests"].as_u64().unwrap();
    assert!(
        requests <= 5 * asked as u64,
        "{requests} for {asked} clusters"
    );

    // The table says the same, one line per cause.
    let out = workloads(&sim, &["ks", "infra-controllers"]).await;
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains(&format!("{asked} of {asked} clusters read")),
        "{table}"
    );
    assert!(
        table.contains("log not read, forbidden pods/log on 2 clusters"),
        "{table}"
    );
    assert!(table.contains("log (previous instance"), "{table}");

    // An assistant asks the same through MCP, a page at a time, and is told the same.
    let client = common::mcp::connect(sim.dir.path(), &[]).await;
    let args = serde_json::json!({"kind": "ks", "name": "infra-controllers"});
    let (mcp_lines, first) = common::mcp::all_pages(&client, "workloads", args, "lines").await;
    assert_eq!(first["read"], asked);
    assert_eq!(first["name"], "infra-controllers");
    let shape = |lines: &[Value]| -> Vec<(String, String, BTreeSet<String>, String)> {
        lines
            .iter()
            .map(|l| {
                (
                    l["workload"]["name"].as_str().unwrap().to_string(),
                    normalized(l["headline"].as_str().unwrap()),
                    names(&l["clusters"]),
                    l["notRead"].to_string(),
                )
            })
            .collect()
    };
    assert_eq!(shape(&mcp_lines), shape(lines));
    client.cancel().await.unwrap();
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summarized_fleet_opens_the_clusters_it_reads_and_says_the_same() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 120;
        c.workspaces = 4;
        c.scenario = Scenario::Story;
        c.operator = 1.0;
    })
    .await;
    let truth = common::workloads(&sim);
    let broken: BTreeSet<String> = ["image-not-found", "oom-killed"]
        .iter()
        .flat_map(|f| with_fault(&truth, "infra-controllers", f))
        .collect();
    assert!(!broken.is_empty() && broken.len() <= 16, "{broken:?}");
    let args = ["ks", "infra-controllers", "-o", "json"];
    let whole = workloads(&sim, &args).await;
    let summarized = workloads(&sim, &[&args[..], &["--watch-mode", "summary"]].concat()).await;
    let shape = |out: &std::process::Output| -> Vec<(String, BTreeSet<String>)> {
        let doc = story_json(out);
        doc["objects"][0]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    normalized(l["headline"].as_str().unwrap()),
                    names(&l["clusters"]),
                )
            })
            .collect()
    };
    let lines = shape(&summarized);
    assert_eq!(lines, shape(&whole));
    let read: BTreeSet<String> = lines.iter().flat_map(|(_, c)| c.clone()).collect();
    assert_eq!(read, broken);
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_workload_stays_bounded_and_escaped() {
    let sim = common::start_with(|c| {
        c.clusters = 3;
        c.scenario = Scenario::Uniform;
        c.faults = fluxfleet_sim::faults::Spec::parse("hostile-workloads=100%").unwrap();
    })
    .await;
    let truth = common::workloads(&sim);
    let (cluster, name) = truth
        .iter()
        .find_map(|c| {
            c.objects
                .iter()
                .find(|o| {
                    o.kind == "Kustomization"
                        && o.workload.as_ref().is_some_and(|w| w.fault == "hostile")
                })
                .map(|o| (c.name.clone(), o.name.clone()))
        })
        .expect("a failing Kustomization");
    let args = ["ks", name.as_str(), "--cluster", cluster.as_str()];
    for format in ["table", "json"] {
        let out = workloads(&sim, &[&args[..], &["-o", format]].concat()).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let raw = stdout
            .chars()
            .find(|c| (c.is_control() && *c != '\n') || ('\u{202a}'..='\u{202e}').contains(c));
        assert_eq!(
            raw, None,
            "{format}: a control character reached the terminal"
        );
        let escape = if format == "json" {
            "\\u001b"
        } else {
            "\\u{1b}"
        };
        assert!(stdout.contains(escape), "{format}: escapes shown: {stdout}");
        assert!(
            stdout.len() < 256 * 1024,
            "{format}: {} bytes",
            stdout.len()
        );
        if format == "json" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            let workload = &doc["objects"][0]["lines"][0];
            let log = &workload["verdict"]["log"];
            assert_eq!(log["cut"], true, "the 10 MB line is cut: {workload}");
            let kept: usize = log["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().len())
                .sum();
            assert!(kept <= 16 * 1024, "{kept} bytes of log kept");
            let facts = &workload["facts"];
            assert_eq!(facts["podsTotal"], 5000, "{facts}");
            assert_eq!(facts["podsCut"], true);
            assert_eq!(facts["pods"].as_array().unwrap().len(), 20);
            let event = &facts["events"][0]["message"];
            assert!(
                event.as_str().unwrap().starts_with("\u{1b}]52;c;"),
                "{event}"
            );
        }
    }
    sim.handle.shutdown().await;
}
