//! What an action reports: each outcome as an NDJSON line with when it was handled, and what the
//! controller made of a reconcile.

use super::*;

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
