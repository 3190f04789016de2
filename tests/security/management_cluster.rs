//! A management cluster's attacks: the kubeconfigs in its Secrets are data, never instructions,
//! and relabelling a Cluster moves it out of no deny rule and into no write mode.

use crate::common;

use std::collections::BTreeMap;

use base64::Engine as _;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use super::fluxfleet;

/// Replaces the kubeconfig in `cluster`'s Secret on the simulated management cluster.
async fn plant(sim: &common::Sim, cluster: &str, workspace: &str, kubeconfig: &str) {
    let client = common::client(&sim.handle.files.management, "management").await;
    let secrets: Api<DynamicObject> = Api::namespaced_with(
        client,
        workspace,
        &ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    let value = base64::engine::general_purpose::STANDARD.encode(kubeconfig);
    secrets
        .patch(
            &format!("{cluster}-kubeconfig"),
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"value": value}})),
        )
        .await
        .unwrap();
}

fn hostile_kubeconfig(server: &str, cluster: &str, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n{cluster}\
         users:\n- name: u\n  user:\n{user}\
         contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
    )
}

/// A management cluster's Secret cannot run a command on the user's machine, read a local file
/// and send it as a token, or point the connection at a proxy or at plain http.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfigs_from_secrets_are_data_not_instructions() {
    let sim = common::start().await;
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("pwned");
    let local_secret = scratch.path().join("local-secret");
    std::fs::write(&local_secret, "the-users-own-secret\n").unwrap();
    let truth = sim.handle.truth();
    let workloads: Vec<(String, String)> = truth
        .iter()
        .filter(|c| !c.management)
        .map(|c| (c.name.clone(), c.workspace.clone()))
        .collect();
    let real = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let server_of = |name: &str| {
        let ctx = real.contexts.iter().find(|c| c.name == name).unwrap();
        let cluster = &ctx.context.as_ref().unwrap().cluster;
        let c = real.clusters.iter().find(|c| &c.name == cluster).unwrap();
        c.cluster.as_ref().unwrap().server.clone().unwrap()
    };
    let exec = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      \
         args: [\"-c\", \"touch {}; echo '{{\\\"status\\\":{{\\\"token\\\":\\\"x\\\"}}}}'\"]\n",
        marker.display()
    );
    let token_file = format!("    tokenFile: {}\n", local_secret.display());
    let attacks: Vec<(&str, String, String)> = vec![
        ("exec", String::new(), exec),
        ("tokenFile", String::new(), token_file),
        (
            "proxy-url",
            "    proxy-url: http://127.0.0.1:9\n".into(),
            "    token: t\n".into(),
        ),
        (
            "insecure-skip-tls-verify",
            "    insecure-skip-tls-verify: true\n".into(),
            "    token: t\n".into(),
        ),
        ("not https://", String::new(), "    token: t\n".into()),
    ];
    let mut attacked = BTreeMap::new();
    for ((name, workspace), (what, cluster, user)) in workloads.iter().zip(&attacks) {
        let server = if *what == "not https://" {
            server_of(name).replacen("https://", "http://", 1)
        } else {
            server_of(name)
        };
        plant(
            &sim,
            name,
            workspace,
            &hostile_kubeconfig(&server, cluster, user),
        )
        .await;
        attacked.insert(name.clone(), *what);
    }
    let management = sim.handle.files.management.display().to_string();
    let out = fluxfleet(
        &[
            "get",
            "--summary",
            "-o",
            "json",
            "--timeout",
            "20s",
            "--kubeconfig",
            &management,
            "--management",
            "management",
        ],
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!marker.exists(), "the Secret's exec plugin ran: {stderr}");
    assert!(!stdout.contains("the-users-own-secret") && !stderr.contains("the-users-own-secret"));
    assert_eq!(
        out.status.code(),
        Some(3),
        "refusals are problems: {stderr}"
    );
    for (name, what) in &attacked {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("context \"{name}\"")))
            .unwrap_or_else(|| panic!("{name} ({what}) is refused: {stderr}"));
        assert!(line.contains(what), "{line}");
        assert!(
            line.contains("a kubeconfig from another cluster may hold only"),
            "{line}"
        );
    }
    // The simulator never saw the local file's contents as a bearer token: the refused clusters
    // were never contacted, and the rest of the fleet is live.
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let live: Vec<&str> = doc["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["state"] == "live")
        .map(|c| c["cluster"].as_str().unwrap())
        .collect();
    assert_eq!(live.len(), workloads.len() - attacked.len() + 1, "{live:?}");
    for name in attacked.keys() {
        assert!(!live.contains(&name.as_str()));
    }
    sim.handle.shutdown().await;
}

/// The management cluster cannot move a cluster out of a deny rule or into write mode by
/// relabelling it; deny rules read kinds as Flux does (`ks`), in any case.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guardrails_of_discovered_clusters_follow_where_they_come_from() {
    let sim = common::start().await;
    let truth = sim.handle.truth();
    let target = truth.iter().find(|c| !c.management).unwrap();
    let (cluster, namespace) = (target.name.clone(), target.workspace.clone());
    let client = common::client(&sim.handle.files.management, "management").await;
    let clusters: Api<DynamicObject> = Api::namespaced_with(
        client,
        &namespace,
        &common::resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters"),
    );
    // The management cluster's admin relabels the Cluster into the "dev" workspace.
    clusters
        .patch(
            &cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "dev"}}})),
        )
        .await
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let management = sim.handle.files.management.display().to_string();
    let data = scratch.path().join("data");
    // `suspend ks` on the relabelled cluster with `config`; exit code, stdout, stderr.
    let attempt = async |config: &str, write: bool| {
        let path = scratch.path().join(format!("{}.toml", config.len()));
        std::fs::write(&path, config).unwrap();
        let path = path.display().to_string();
        let mut args = vec!["suspend", "ks", "--yes", "--cluster", &cluster];
        if write {
            args.push("--write");
        }
        args.extend(["--kubeconfig", &management, "--management", "management"]);
        args.extend(["--workspace-label", "team", "--config", &path]);
        let out = fluxfleet(&args, &[("FLUXFLEET_DATA_DIR", &data)]).await;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let before = mutating();
    // A deny rule for its namespace's workspace, kind written as a short name in lower case.
    let deny = format!(
        "[[actions.deny]]\nworkspace = {:?}\nkind = \"ks\"\n",
        namespace.to_uppercase()
    );
    let (_, stdout, _) = attempt(&deny, true).await;
    assert!(
        stdout.contains(" dev "),
        "shown in the label's workspace: {stdout}"
    );
    assert!(stdout.contains("denied by actions.deny[0]"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("done")), "{stdout}");
    assert_eq!(mutating(), before);
    // Each refuses before anything is sent (exit 2), saying why:
    let refusals = [
        // a write rule for the "dev" workspace does not reach a cluster a label put there;
        (
            "[[modes]]\nworkspace = \"dev\"\nmode = \"write\"\n",
            false,
            "read-only: nothing can suspend",
        ),
        // a deny rule naming no Flux kind refuses every write, even with --write;
        (
            "[[actions.deny]]\nkind = \"Kustomisation\"\n",
            true,
            "\"Kustomisation\" is not a Flux kind",
        ),
        // a mistyped key beside a deny rule: the rule is not lost, and nothing is written.
        (
            "[actions]\nconfirm_abve = 3\n[[actions.deny]]\nnamespace = \"nowhere\"\n",
            true,
            "line 2: actions.confirm_abve",
        ),
    ];
    for (config, write, why) in refusals {
        let (code, _, stderr) = attempt(config, write).await;
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(why), "{why} in {stderr}");
        assert_eq!(mutating(), before);
    }
    // Named by where it comes from, write mode does reach it.
    let origin = format!("[[modes]]\norigin = \"management/{namespace}\"\nmode = \"write\"\n");
    let (_, stdout, _) = attempt(&origin, false).await;
    assert!(stdout.lines().any(|l| l.starts_with("done")), "{stdout}");
    assert!(mutating() > before);
    sim.handle.shutdown().await;
}
