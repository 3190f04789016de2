//! Every command told where the bus is, by flag or variable, reads it and opens no socket to a
//! cluster; acting and reading workloads go to the one cluster, through the user's kubeconfig.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use super::one_collector;

/// How a command is told where the bus is.
#[derive(Clone, Copy, Debug)]
enum Told {
    Flag,
    Variable,
}

/// The binary, told where the bus is, with a kubeconfig of the whole fleet at hand (as a user
/// of both has), never the developer's own config.
async fn on_bus(
    told: Told,
    url: &str,
    kubeconfigs: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    bus_command(told, url, kubeconfigs, args)
        .output()
        .await
        .unwrap()
}

/// [`on_bus`]'s command, to be run as the caller likes.
fn bus_command(
    told: Told,
    url: &str,
    kubeconfigs: &std::path::Path,
    args: &[&str],
) -> tokio::process::Command {
    let mut cmd = common::bus::command(kubeconfigs);
    cmd.args(args);
    match told {
        Told::Flag => cmd.arg("--nats").arg(url),
        Told::Variable => cmd.env("FLUXFLEET_NATS", url),
    };
    cmd
}

/// How many connections each cluster has ever served, as the simulator counted them.
fn connections(sim: &common::Sim) -> BTreeMap<String, u64> {
    let stats = sim.handle.stats();
    stats["clusters"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, c)| (name.clone(), c["connectionsTotal"].as_u64().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_reads_the_bus_from_its_flag_or_variable_and_opens_no_socket_to_a_cluster() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let (_nats, options, sim, inventory, only) = one_collector().await;
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let clusters = inventory.clusters.len();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let json = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)))
    };
    let ok = |out: &std::process::Output| {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    };
    let truth = sim.handle.truth();
    let ks = truth[1]
        .objects
        .iter()
        .find(|o| o.kind == "Kustomization" && !o.suspended)
        .unwrap();
    let target = truth[1].name.clone();
    let names: BTreeSet<&str> = inventory.clusters.iter().map(|c| c.name.as_str()).collect();
    let copies = truth
        .iter()
        .filter(|c| names.contains(c.name.as_str()))
        .flat_map(|c| &c.objects)
        .filter(|o| o.kind == "Kustomization" && o.name == ks.name && o.namespace == ks.namespace)
        .count();
    let before = connections(&sim);
    for told in [Told::Flag, Told::Variable] {
        let run = |args: &'static [&'static str]| on_bus(told, &options.url, &kubeconfigs, args);

        let out = run(&["get", "-o", "json", "--timeout", "10s"]).await;
        ok(&out);
        assert_eq!(json(&out)["clusters"].as_array().unwrap().len(), clusters);

        let out = run(&["get", "--root-causes", "-o", "json", "--timeout", "10s"]).await;
        ok(&out);
        assert!(json(&out).is_object(), "{told:?}");

        // One round of alerts, printed instead of sent: one per incident and one per other
        // failing root cause's object and reason, as get --root-causes finds them on the bus.
        let out = run(&["get", "--root-causes", "--status", "failing", "-o", "json"]).await;
        ok(&out);
        let doc = json(&out);
        let mut causes: BTreeSet<String> = doc["rootCauses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["incident"].is_null())
            .map(|c| {
                format!(
                    "{} {} {} {}",
                    c["kind"], c["namespace"], c["name"], c["reason"]
                )
            })
            .collect();
        causes.extend(
            doc["incidents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| format!("incident {} {}", i["endpoint"], i["class"])),
        );
        assert!(!causes.is_empty(), "the fleet has failures to alert on");
        // From the bus alone: what broke inside would be read from the clusters themselves.
        let args = [
            "alert",
            "--dry-run",
            "--no-workloads",
            "--every",
            "1s",
            "--for",
            "0s",
        ];
        let mut alert = bus_command(told, &options.url, &kubeconfigs, &args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = alert.stdout.take().unwrap();
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        let round: serde_json::Value = loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("alert prints a round");
            if line.starts_with('[') {
                break serde_json::from_str(&line).unwrap();
            }
        };
        alert.kill().await.unwrap();
        let alerted: BTreeSet<String> = round
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let l = &a["labels"];
                match l["alertname"].as_str() {
                    Some("FluxIncident") => format!("incident {} {}", l["endpoint"], l["class"]),
                    _ => format!(
                        "{} {} {} {}",
                        l["kind"], l["namespace"], l["name"], l["reason"]
                    ),
                }
            })
            .collect();
        assert_eq!(alerted, causes, "{told:?}");

        let out = run(&["rollout", "ks", "-o", "json", "--timeout", "10s"]).await;
        ok(&out);
        let doc = json(&out);
        let rows = doc["rollouts"].as_array().unwrap();
        assert!(!rows.is_empty(), "{told:?}: {doc}");
        assert!(rows.iter().all(|r| r["kind"] == "Kustomization"), "{doc}");

        let out = run(&["inventory", "-o", "json"]).await;
        ok(&out);
        let doc = json(&out);
        let listed = doc["clusters"].as_array().unwrap();
        assert_eq!(listed.len(), clusters, "{doc}");
        assert!(listed.iter().all(|c| c["collector"] == "only"), "{doc}");

        let out = on_bus(
            told,
            &options.url,
            &kubeconfigs,
            &["suspend", "ks", &ks.name, "-n", &ks.namespace, "--dry-run"],
        )
        .await;
        ok(&out);
        assert!(
            text(&out.stderr).contains(&format!("would suspend {copies} objects")),
            "{told:?}: {}",
            text(&out.stderr)
        );

        // The commands with a fleet of their own take no --nats: given one, they refuse it by
        // name (the variable, ambient, is not theirs to read).
        for own in [&["demo"][..], &["sim", "--clusters", "1"]] {
            let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
                .args(own)
                .args(["--nats", &options.url])
                .output()
                .await
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{own:?}");
            assert!(
                text(&out.stderr).contains("'--nats'"),
                "{}",
                text(&out.stderr)
            );
        }
    }
    // Nothing above reached a cluster: every answer came from the bus.
    assert_eq!(connections(&sim), before);

    // Acting goes through the user's own kubeconfig, to the one cluster acted on.
    let out = on_bus(
        Told::Variable,
        &options.url,
        &kubeconfigs,
        &[
            "suspend",
            "ks",
            &ks.name,
            "-n",
            &ks.namespace,
            "--cluster",
            &target,
            "--write",
            "--yes",
        ],
    )
    .await;
    ok(&out);
    let now = sim.handle.truth();
    let acted = now.iter().find(|c| c.name == target).unwrap();
    assert!(
        acted
            .objects
            .iter()
            .any(|o| o.kind == "Kustomization" && o.name == ks.name && o.suspended),
        "{}",
        text(&out.stderr)
    );
    let after = connections(&sim);
    let reached: Vec<&String> = after
        .iter()
        .filter(|(name, n)| before.get(*name) != Some(n))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(reached, vec![&target]);

    // Reading what broke inside goes to the clusters read too, through the user's own
    // kubeconfig: the bus carries summaries only.
    let out = on_bus(
        Told::Flag,
        &options.url,
        &kubeconfigs,
        &[
            "workloads",
            "ks",
            &ks.name,
            "-n",
            &ks.namespace,
            "--all",
            "--cluster",
            &target,
            "-o",
            "json",
        ],
    )
    .await;
    ok(&out);
    let doc = json(&out);
    assert_eq!(doc["objects"][0]["read"], 1, "{doc}");
    assert!(
        !doc["objects"][0]["lines"].as_array().unwrap().is_empty(),
        "{doc}"
    );
    let again = connections(&sim);
    let reached: Vec<&String> = again
        .iter()
        .filter(|(name, n)| after.get(*name) != Some(n))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(reached, vec![&target]);
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}
