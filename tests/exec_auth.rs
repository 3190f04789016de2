//! Exec credential plugins: run by fluxfleet, never interactive, once per distinct command, and a
//! failing plugin is that cluster's auth state with the plugin's own message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::os::unix::fs::PermissionsExt;

use fluxfleet::fleet::Phase;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_run_once_per_command_non_interactively_and_failures_are_auth_states() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let info = dir.path().join("exec-info");
    let plugin = dir.path().join("get-token");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\necho \"$1\" >> {runs}\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > {info}\n\
             printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"%s\"}}}}' \"$1\"\n",
            runs = runs.display(),
            info = info.display()
        ),
    )
    .unwrap();
    let broken = dir.path().join("broken-login");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'starting browser login…' >&2\necho 'error: SSO session expired, run: corp login' >&2\nexit 3\n",
    )
    .unwrap();
    for p in [&plugin, &broken] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The sim's admin tokens and servers for its two clusters.
    let names = sim.handle.cluster_names();
    let server_and_token = |name: &str| common::admin(&sim, name);
    let (server_a, ca, token_a) = server_and_token(&names[0]);
    let (server_b, _, token_b) = server_and_token(&names[1]);
    let exec = |command: &std::path::Path, token: &str| {
        format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      args: [\"{token}\"]\n      interactiveMode: IfAvailable\n",
            command.display()
        )
    };
    // Three contexts run the identical command (same cluster, three names), one runs another,
    // one runs a plugin that fails.
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n\
         - name: a\n  cluster:\n    server: {server_a}\n    certificate-authority-data: {ca}\n\
         - name: b\n  cluster:\n    server: {server_b}\n    certificate-authority-data: {ca}\n\
         users:\n- name: ua\n  user:\n{ua}- name: ub\n  user:\n{ub}- name: broken\n  user:\n{bad}\
         contexts:\n\
         - name: a1\n  context: {{cluster: a, user: ua}}\n\
         - name: a2\n  context: {{cluster: a, user: ua}}\n\
         - name: a3\n  context: {{cluster: a, user: ua}}\n\
         - name: b\n  context: {{cluster: b, user: ub}}\n\
         - name: sso\n  context: {{cluster: b, user: broken}}\n",
        ua = exec(&plugin, &token_a),
        ub = exec(&plugin, &token_b),
        bad = exec(&broken, "x"),
    );
    let path = dir.path().join("exec.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let live = common::settled(&path).await;
    let state = |name: &str| {
        let c = live.index.cluster_named(name).unwrap();
        (
            c.connection.phase,
            c.connection.error.clone().unwrap_or_default(),
        )
    };
    for name in ["a1", "a2", "a3", "b"] {
        assert_eq!(state(name).0, Phase::Live, "{name}: {:?}", state(name));
    }
    let (phase, error) = state("sso");
    assert_eq!(phase, Phase::Unauthorized);
    assert!(
        error.contains("SSO session expired, run: corp login"),
        "{error}"
    );
    assert!(error.contains("broken-login"), "names the plugin: {error}");
    // Two distinct commands, two runs — not one per context.
    let ran = std::fs::read_to_string(&runs).unwrap();
    assert_eq!(ran.lines().count(), 2, "{ran}");
    // Never interactive, whatever the kubeconfig asks for.
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
    assert_eq!(info["spec"]["interactive"], false);
    live.shutdown().await;
    sim.handle.shutdown().await;
}
