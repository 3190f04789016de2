//! Exec credential plugins of the user's kubeconfigs, bounded: output capped, a hung one killed
//! with its process group, credentials in their stderr redacted.

use crate::common;

use std::path::Path;

use super::{load, one_cluster, state};

fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A process that is gone or a zombie waiting for its parent.
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Exec plugins are bounded: their output is capped, a hung one is killed with everything it
/// started once `exec_timeout` (not `connect_timeout`) has passed, and what they print on stderr
/// never shows a credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_plugins_are_capped_killed_with_their_group_and_their_stderr_redacted() {
    use fluxfleet::config::Config;
    use fluxfleet::fleet::Phase;
    use fluxfleet::session::Session;
    use std::time::Duration;

    let (sim, server, ca, token) = one_cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let credential = format!(
        "printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'"
    );
    let pidfile = dir.path().join("grandchild");
    let plugins = [
        (
            "huge",
            script(dir.path(), "huge", "exec head -c 50000000 /dev/zero"),
        ),
        (
            "slow",
            script(dir.path(), "slow", &format!("sleep 2\n{credential}")),
        ),
        (
            "hung",
            script(
                dir.path(),
                "hung",
                &format!("sleep 300 &\necho $! > {}\nwait", pidfile.display()),
            ),
        ),
        (
            "leaky",
            script(
                dir.path(),
                "leaky",
                "echo 'refresh_token=eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXJlZnJlc2g.abcdefghijklmnop has expired; run corp login' >&2\nexit 1",
            ),
        ),
    ];
    let mut kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    \
         certificate-authority-data: {ca}\nusers:\n"
    );
    for (name, path) in &plugins {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n",
            path.display()
        ));
    }
    kubeconfig.push_str("contexts:\n");
    for (name, _) in &plugins {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  context: {{cluster: c, user: {name}}}\n"
        ));
    }
    let path = dir.path().join("plugins.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let mut config = Config::defaults();
    config.engine.connect_timeout = Duration::from_secs(1);
    config.engine.exec_timeout = Duration::from_secs(6);
    let inv = load(path, &config);
    assert_eq!(inv.problems, []);
    let mut live = Session::kube(&inv, &config.engine);
    live.settle(Duration::from_secs(30)).await;
    let state = |name: &str| state(&live, name);
    let (phase, error) = state("huge");
    assert_eq!(phase, Phase::Unauthorized, "{error}");
    assert!(error.contains("larger than 1024 KiB"), "{error}");
    // Slower than connect_timeout, well within exec_timeout: it is waited for.
    assert_eq!(state("slow").0, Phase::Live, "{:?}", state("slow"));
    let (phase, error) = state("hung");
    assert_eq!(phase, Phase::Unauthorized, "{error}");
    assert!(error.contains("within 6s"), "{error}");
    let grandchild = std::fs::read_to_string(&pidfile).unwrap();
    common::eventually("the plugin's own child is killed too", || {
        let gone = dead(grandchild.trim());
        async move { gone }
    })
    .await;
    let (phase, error) = state("leaky");
    assert_eq!(phase, Phase::Unauthorized);
    assert!(error.contains("has expired; run corp login"), "{error}");
    assert!(
        !error.contains("eyJhbGci") && !error.contains("abcdefghijklmnop"),
        "{error}"
    );
    live.shutdown().await;
    sim.handle.shutdown().await;
}
