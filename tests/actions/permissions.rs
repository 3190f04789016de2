//! Who may write where: a viewer's credentials end forbidden per target, and a config that makes one
//! cluster writable changes that cluster only.

use super::*;

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
