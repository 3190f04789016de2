//! `fluxfleet suspend | resume | reconcile` as scripts run them: the binary against an in-process
//! simulated fleet, checked against the simulator's truth, its objects' annotations, its count of
//! mutating requests and the audit journal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use fluxfleet_sim::TruthObject;
use kube::api::Api;
use kube::core::DynamicObject;
use serde_json::Value;
use tokio::process::Command;

use common::Sim;

/// The binary, with no config or kubeconfig of the developer's, journaling into `data`.
async fn run(args: &[&str], kubeconfig: (&str, &Path), data: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env("FLUXFLEET_DATA_DIR", data)
        // Not who acted: the journal names the operating system's user, whatever $USER says.
        .env("USER", "alice")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .args(args)
        .arg(kubeconfig.0)
        .arg(kubeconfig.1)
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}

/// `id -un`: the account running the tests, as the system names it.
fn os_user() -> String {
    let out = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The machine's name, as the kernel has it.
fn os_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exits with `code`, or fails showing what the command printed.
fn exits(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn fleet(sim: &Sim) -> (&'static str, std::path::PathBuf) {
    ("--kubeconfig-dir", sim.dir.path().join("kubeconfigs"))
}

/// A Kustomization (namespace, name) that every workload cluster has.
fn everywhere(sim: &Sim, kind: &str) -> (String, String) {
    let truth = sim.handle.truth();
    let workloads: Vec<_> = truth.iter().filter(|c| !c.management).collect();
    let keys = |objects: &[TruthObject]| -> BTreeSet<(String, String)> {
        objects
            .iter()
            .filter(|o| o.kind == kind && !o.suspended)
            .map(|o| (o.namespace.clone(), o.name.clone()))
            .collect()
    };
    let mut common = keys(&workloads[0].objects);
    for c in &workloads[1..] {
        common = common.intersection(&keys(&c.objects)).cloned().collect();
    }
    common
        .into_iter()
        .next()
        .expect("an object on every cluster")
}

fn suspended_on(sim: &Sim, kind: &str, ns: &str, name: &str) -> usize {
    sim.handle
        .truth()
        .iter()
        .filter(|c| {
            c.objects
                .iter()
                .any(|o| o.kind == kind && o.namespace == ns && o.name == name && o.suspended)
        })
        .count()
}

fn mutating(sim: &Sim) -> u64 {
    sim.handle.stats()["mutatingTotal"].as_u64().unwrap()
}

/// The PATCHes sent, without the Events each action records beside them.
fn patches(sim: &Sim) -> u64 {
    sim.handle.stats()["patchTotal"].as_u64().unwrap()
}

/// The journal's lines of one stage: `intent` (before sending) or `outcome`.
fn journal_stage(data: &Path, stage: &str) -> Vec<Value> {
    std::fs::read_to_string(data.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["stage"] == stage)
        .collect()
}

/// The outcome lines: one per attempt.
fn journal(data: &Path) -> Vec<Value> {
    journal_stage(data, "outcome")
}

async fn object(
    sim: &Sim,
    cluster: &str,
    ar: &kube::api::ApiResource,
    ns: &str,
    name: &str,
) -> DynamicObject {
    let client = common::client(&sim.handle.files.fleet, cluster).await;
    let api: Api<DynamicObject> = common::api(&client, ar, Some(ns));
    api.get(name).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspend_resume_and_reconcile_one_kustomization_on_fifty_clusters() {
    let sim = common::start_with(|c| {
        c.clusters = 50;
        c.workspaces = 3;
        c.objects = 12;
    })
    .await;
    let data = tempfile::tempdir().unwrap();
    let (ns, name) = everywhere(&sim, "Kustomization");
    let kc = fleet(&sim);
    let kc = (kc.0, kc.1.as_path());
    let selector = ["ks", name.as_str(), "-n", ns.as_str()];

    // Read-only (the default): refused before anything is sent.
    let before = mutating(&sim);
    let out = run(
        &[&["suspend"][..], &selector, &["--yes"]].concat(),
        kc,
        data.path(),
    )
    .await;
    exits(&out, 2);
    assert!(
        text(&out.stderr).contains("--write"),
        "{}",
        text(&out.stderr)
    );
    // A dry run lists the targets and sends nothing either.
    let out = run(
        &[&["suspend"][..], &selector, &["--dry-run"]].concat(),
        kc,
        data.path(),
    )
    .await;
    exits(&out, 0);
    assert_eq!(
        text(&out.stdout).lines().count(),
        51,
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("would suspend 50 objects on 50 clusters; nothing was sent"),
        "{}",
        text(&out.stderr)
    );
    // Refused targets are counted as refused, never as ones that would change.
    let deny = data.path().join("deny.toml");
    std::fs::write(&deny, format!("[[actions.deny]]\nnamespace = \"{ns}\"\n")).unwrap();
    let deny = deny.to_string_lossy().into_owned();
    let out = run(
        &[
            &["suspend"][..],
            &selector,
            &["--dry-run", "--config", &deny],
        ]
        .concat(),
        kc,
        data.path(),
    )
    .await;
    exits(&out, 0);
    assert!(
        text(&out.stderr).contains("nothing to suspend: all 50 objects are refused"),
        "{}",
        text(&out.stderr)
    );
    // More than one target without a terminal needs --yes.
    let out = run(
        &[&["suspend"][..], &selector, &["--write"]].concat(),
        kc,
        data.path(),
    )
    .await;
    exits(&out, 2);
    assert!(text(&out.stderr).contains("--yes"), "{}", text(&out.stderr));
    assert_eq!(mutating(&sim), before, "nothing was sent");
    assert_eq!(journal(data.path()), Vec::<Value>::new());

    let reason = "flapping since the 10:00 rollout";
    let args = [
        &["suspend"][..],
        &selector,
        &["--write", "--yes", "--reason", reason],
    ]
    .concat();
    let out = run(&args, kc, data.path()).await;
    exits(&out, 0);
    assert_eq!(suspended_on(&sim, "Kustomization", &ns, &name), 50);
    let cluster = sim.handle.cluster_names()[7].clone();
    let ks = object(&sim, &cluster, &common::kustomizations(), &ns, &name).await;
    let annotations = ks.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations["fluxfleet.dev/suspend-reason"], reason);
    let me = os_user();
    assert_eq!(annotations["fluxfleet.dev/suspended-by"], me.as_str());
    assert_eq!(
        annotations["fluxcd.controlplane.io/suspendedBy"],
        me.as_str()
    );
    // On all 50, as the fleet engine sees them.
    let out = run(
        &[&["get"][..], &selector, &["-o", "json"]].concat(),
        kc,
        data.path(),
    )
    .await;
    exits(&out, 0);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let objects = doc["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 50);
    for o in objects {
        assert_eq!(o["suspendReason"], reason, "{o}");
        assert_eq!(o["suspendedBy"], me.as_str(), "{o}");
        assert_eq!(o["status"], "suspended", "{o}");
    }

    // Reconciling a suspended object is refused, per target, and says why.
    let out = run(
        &[&["reconcile"][..], &selector, &["--write", "--yes"]].concat(),
        kc,
        data.path(),
    )
    .await;
    exits(&out, 1);
    assert_eq!(
        text(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("refused"))
            .count(),
        50,
        "{}",
        text(&out.stdout)
    );

    let out = run(
        &[&["resume"][..], &selector, &["--write", "--yes"]].concat(),
        kc,
        data.path(),
    )
    .await;
    // Resumed everywhere; the copies the simulator keeps failing say so, each in its MESSAGE
    // and all in the count, and the exit code is 7.
    exits(&out, 7);
    let failing = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("done") && l.contains("handled, then "))
        .count();
    assert!(failing > 0 && failing < 50, "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains(&format!("({failing} not ready when handled)")),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(suspended_on(&sim, "Kustomization", &ns, &name), 0);
    let ks = object(&sim, &cluster, &common::kustomizations(), &ns, &name).await;
    let annotations = ks.metadata.annotations.clone().unwrap_or_default();
    assert!(
        !annotations.contains_key("fluxfleet.dev/suspend-reason"),
        "{annotations:?}"
    );
    assert!(!annotations.contains_key("fluxcd.controlplane.io/suspendedBy"));

    // Reconcile: done means the controller handled the token on every cluster.
    let out = run(
        &[&["reconcile"][..], &selector, &["--write", "--yes"]].concat(),
        kc,
        data.path(),
    )
    .await;
    exits(&out, 7);
    let ks = object(&sim, &cluster, &common::kustomizations(), &ns, &name).await;
    let requested = &ks.metadata.annotations.as_ref().unwrap()["reconcile.fluxcd.io/requestedAt"];
    assert_eq!(
        ks.data["status"]["lastHandledReconcileAt"],
        requested.as_str()
    );

    // The journal: one line per attempt that sent something, every target, no secret.
    let lines = journal(data.path());
    let actions: Vec<&str> = lines
        .iter()
        .map(|l| l["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["suspend", "reconcile", "resume", "reconcile"]);
    assert_eq!(lines[0]["reason"], reason);
    assert_eq!(lines[0]["user"], os_user().as_str());
    assert_eq!(lines[0]["host"], os_host().as_str());
    for line in &lines {
        assert_eq!(line["targets"].as_array().unwrap().len(), 50);
        // Who each cluster saw act: its SelfSubjectReview of the admin token (refused
        // targets were never sent, so their cluster was never asked).
        for t in line["targets"].as_array().unwrap() {
            if t["outcome"] == "refused" {
                assert_eq!(t.get("seenAs"), None, "{t}");
                continue;
            }
            assert_eq!(
                t["seenAs"], "system:serviceaccount:flux-system:fluxfleet-admin",
                "{t}"
            );
        }
    }
    // Each attempt's intent was journaled first, under the same token.
    let intents = journal_stage(data.path(), "intent");
    assert_eq!(intents.len(), lines.len());
    for (intent, outcome) in intents.iter().zip(&lines) {
        assert_eq!(intent["token"], outcome["token"]);
        assert!(intent["time"].as_str() <= outcome["time"].as_str());
        for t in intent["targets"].as_array().unwrap() {
            assert!(
                t["outcome"] == "intended" || t["outcome"] == "refused",
                "{t}"
            );
        }
    }
    let outcomes: BTreeSet<&str> = lines[1]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, BTreeSet::from(["refused"]));
    let raw = std::fs::read_to_string(data.path().join("audit.jsonl")).unwrap();
    let kubeconfig = std::fs::read_to_string(&sim.handle.files.fleet).unwrap();
    for secret in tokens(&kubeconfig) {
        assert!(!raw.contains(&secret), "the journal holds a token");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(data.path().join("audit.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    sim.handle.shutdown().await;
}

/// Every `token:` value of a kubeconfig.
fn tokens(kubeconfig: &str) -> Vec<String> {
    kubeconfig
        .lines()
        .filter_map(|l| l.trim().strip_prefix("token:"))
        .map(|t| t.trim().trim_matches('"').to_string())
        .filter(|t| t.len() > 8)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewer_credentials_end_forbidden_per_target_and_force_writes_the_flux_annotations() {
    let sim = common::start_with(|c| {
        c.clusters = 4;
        c.workspaces = 1;
    })
    .await;
    let data = tempfile::tempdir().unwrap();
    let (ns, name) = everywhere(&sim, "HelmRelease");
    let viewer = sim.handle.files.viewer.clone();
    let before = mutating(&sim);
    let args = [
        "suspend",
        "hr",
        name.as_str(),
        "-n",
        ns.as_str(),
        "--write",
        "--yes",
    ];
    let out = run(&args, ("--kubeconfig", &viewer), data.path()).await;
    exits(&out, 1);
    assert_eq!(
        text(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("forbidden"))
            .count(),
        4,
        "{}",
        text(&out.stdout)
    );
    assert_eq!(suspended_on(&sim, "HelmRelease", &ns, &name), 0);
    let lines = journal(data.path());
    assert_eq!(lines.len(), 1);
    for t in lines[0]["targets"].as_array().unwrap() {
        assert_eq!(t["outcome"], "forbidden", "{t}");
        assert!(t["kubeUser"].as_str().unwrap().ends_with("-viewer"), "{t}");
        assert_eq!(
            t["seenAs"], "system:serviceaccount:flux-system:fluxfleet-viewer",
            "{t}"
        );
    }
    // The viewer's patches reached the API server and were rejected there.
    assert_eq!(mutating(&sim) - before, 4);

    // HelmRelease --force: requestedAt and forceAt carry the same token (FACTS §2.5).
    let fleet = fleet(&sim);
    let args = [
        "reconcile",
        "hr",
        name.as_str(),
        "-n",
        ns.as_str(),
        "--force",
        "--write",
        "--yes",
    ];
    let out = run(&args, (fleet.0, &fleet.1), data.path()).await;
    exits(&out, 0);
    let cluster = sim.handle.cluster_names()[0].clone();
    let hr = object(&sim, &cluster, &common::helmreleases(), &ns, &name).await;
    let a = hr.metadata.annotations.unwrap();
    assert_eq!(
        a["reconcile.fluxcd.io/forceAt"],
        a["reconcile.fluxcd.io/requestedAt"]
    );
    assert_eq!(
        hr.data["status"]["lastHandledForceAt"],
        a["reconcile.fluxcd.io/forceAt"].as_str()
    );
    // --reset: resetAt with a new token, equal to the new requestedAt.
    let args = [
        "reconcile",
        "hr",
        name.as_str(),
        "-n",
        ns.as_str(),
        "--reset",
        "--write",
        "--yes",
    ];
    let out = run(&args, (fleet.0, &fleet.1), data.path()).await;
    exits(&out, 0);
    let hr = object(&sim, &cluster, &common::helmreleases(), &ns, &name).await;
    let b = hr.metadata.annotations.unwrap();
    assert_eq!(
        b["reconcile.fluxcd.io/resetAt"],
        b["reconcile.fluxcd.io/requestedAt"]
    );
    assert_ne!(
        b["reconcile.fluxcd.io/requestedAt"],
        a["reconcile.fluxcd.io/requestedAt"]
    );
    assert_eq!(
        hr.data["status"]["lastHandledResetAt"],
        b["reconcile.fluxcd.io/resetAt"].as_str()
    );
    sim.handle.shutdown().await;
}

/// `--config` means the same before and after the command: the modes in the file apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_made_writable_by_the_config_is_the_only_one_changed() {
    let sim = common::start_with(|c| {
        c.clusters = 4;
        c.workspaces = 1;
    })
    .await;
    let data = tempfile::tempdir().unwrap();
    let (ns, name) = everywhere(&sim, "Kustomization");
    let kc = fleet(&sim);
    for (round, before_command) in [(1, true), (2, false)] {
        let writable = sim.handle.cluster_names()[round].clone();
        let config = data.path().join(format!("fluxfleet-{round}.toml"));
        std::fs::write(
            &config,
            format!("[[modes]]\ncluster = \"{writable}\"\nmode = \"write\"\n"),
        )
        .unwrap();
        let config = config.to_string_lossy().into_owned();
        let selection = ["ks", name.as_str(), "-n", ns.as_str(), "--yes"];
        let mut args = Vec::new();
        if before_command {
            args.extend(["--config", config.as_str(), "suspend"]);
            args.extend(selection);
        } else {
            args.push("suspend");
            args.extend(selection);
            args.extend(["--config", config.as_str()]);
        }
        let before = patches(&sim);
        let out = run(&args, (kc.0, &kc.1), data.path()).await;
        exits(&out, 1);
        let stdout = text(&out.stdout);
        let done: Vec<&str> = stdout.lines().filter(|l| l.starts_with("done")).collect();
        assert_eq!(done.len(), 1, "{args:?}: {stdout}");
        assert!(done[0].contains(&writable), "{args:?}: {stdout}");
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("refused")).count(),
            3
        );
        assert_eq!(
            patches(&sim) - before,
            1,
            "{args:?}: one PATCH, to the writable cluster"
        );
        assert_eq!(suspended_on(&sim, "Kustomization", &ns, &name), round);
    }
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ndjson_gives_each_outcome_as_a_line_with_when_it_was_handled() {
    let sim = common::start_with(|c| c.clusters = 4).await;
    let data = tempfile::tempdir().unwrap();
    let (flag, dir) = fleet(&sim);
    let out = run(
        &[
            "reconcile",
            "gitrepository",
            "flux-system",
            "--write",
            "--yes",
            "-o",
            "ndjson",
        ],
        (flag, &dir),
        data.path(),
    )
    .await;
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let done: Vec<&Value> = lines.iter().filter(|l| l["outcome"] == "done").collect();
    assert!(!done.is_empty(), "{}", text(&out.stderr));
    for l in &lines {
        assert_eq!(l["type"], "outcome", "{l}");
    }
    for l in &done {
        assert!(l["handledAt"].as_str().is_some(), "{l}");
        assert_eq!(
            l["seenAs"],
            "system:serviceaccount:flux-system:fluxfleet-admin"
        );
    }
    // The journal has the same records.
    let journaled = journal(data.path());
    let targets = journaled[0]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), lines.len());
    let handled = targets
        .iter()
        .filter(|t| t["handledAt"].is_string())
        .count();
    assert_eq!(handled, done.len());
}

/// A reconcile says what it came to, as `flux reconcile` does after it waited: read from the
/// status that says the request was handled. A failing Kustomization is handled and still
/// failing — done, `handled, then failed (reason)`, exit code 7; a ready one is done and ready,
/// exit code 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_says_what_the_controller_made_of_it() {
    use fluxfleet_sim::facts::Health;
    let sim = common::start_with(|c| {
        c.clusters = 6;
        c.objects = 20;
    })
    .await;
    let data = tempfile::tempdir().unwrap();
    let kc = fleet(&sim);
    let kc = (kc.0, kc.1.as_path());
    let find = |health: Health| {
        sim.handle
            .truth()
            .into_iter()
            .filter(|c| !c.management)
            .find_map(|c| {
                let cluster = c.name.clone();
                c.objects
                    .into_iter()
                    .find(|o| o.kind == "Kustomization" && o.health == health)
                    .map(|o| (cluster, o))
            })
            .expect("a Kustomization of that health")
    };
    for (health, code, status) in [(Health::Failed, 7, "failed"), (Health::Ready, 0, "ready")] {
        let (cluster, o) = find(health);
        let args = [
            "reconcile",
            "ks",
            &o.name,
            "-n",
            &o.namespace,
            "--cluster",
            &cluster,
            "--write",
            "--yes",
            "-o",
            "ndjson",
        ];
        let out = run(&args, kc, data.path()).await;
        exits(&out, code);
        let line: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        assert_eq!(line["outcome"], "done", "{line}");
        assert_eq!(line["result"]["status"], status, "{line}");
        if health == Health::Failed {
            assert!(line["result"]["message"].as_str().is_some(), "{line}");
            assert!(
                text(&out.stderr).contains("(1 not ready when handled)"),
                "{}",
                text(&out.stderr)
            );
            // The table says it in MESSAGE.
            let table = run(&args[..args.len() - 2], kc, data.path()).await;
            exits(&table, 7);
            let reason = line["result"]["reason"].as_str().unwrap();
            assert!(
                text(&table.stdout).contains(&format!("handled, then failed ({reason})")),
                "{}",
                text(&table.stdout)
            );
        }
    }
    sim.handle.shutdown().await;
}
