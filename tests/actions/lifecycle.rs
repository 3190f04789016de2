//! Suspend, resume and reconcile of one Kustomization on fifty clusters: refused without
//! `--write`, dry run, denied, confirmed, done; what the objects, the journal and the output say.

use super::*;

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
