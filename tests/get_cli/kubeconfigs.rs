//! The kubeconfigs `get` and `inventory` read: broken ones named while the rest is listed, an
//! insecure one read without a warning.

use crate::common;

use common::fluxfleet;
use std::path::Path;

use serde_json::Value;

use super::text;

#[tokio::test]
async fn inventory_reports_broken_sources_and_still_lists_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("payments")).unwrap();
    std::fs::write(
        d.join("payments/good.yaml"),
        "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\n\
         users:\n- name: u\n  user:\n    token: very-secret-token\n\
         contexts:\n- name: pay-1\n  context:\n    cluster: c\n    user: u\n",
    )
    .unwrap();
    std::fs::write(d.join("broken.yaml"), "clusters: [ {").unwrap();
    let out = fluxfleet()
        .args(["inventory", "-o", "json", "--kubeconfig-dir"])
        .arg(d)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["clusters"][0]["cluster"], "pay-1");
    assert_eq!(doc["clusters"][0]["workspace"], "payments");
    assert_eq!(doc["clusters"][0]["server"], "https://10.0.0.1:6443");
    let problem = doc["problems"][0]["source"].as_str().unwrap();
    assert!(problem.ends_with("broken.yaml"));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("broken.yaml: not a valid kubeconfig"),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("very-secret-token"));

    let out = fluxfleet()
        .args(["get", "--kubeconfig", "/nonexistent/kubeconfig"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("/nonexistent/kubeconfig: file not found"));
    let out = fluxfleet()
        .args(["get", "deployments"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("\"deployments\" is not a Flux kind"));
}

/// A kubeconfig that says `insecure-skip-tls-verify` is read as kubectl reads it, and without a
/// word on stderr: kube's "Server cert bypassed" warning, once a connection, is not passed on (a
/// real kube-apiserver with its self-signed certificate printed it on every `get`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insecure_kubeconfig_is_read_without_a_warning_a_connection() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let file = walk(&sim.dir.path().join("kubeconfigs"))
        .into_iter()
        .next()
        .unwrap();
    let config: Value = serde_saphyr::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let (cluster, user) = (&config["clusters"][0], &config["users"][0]["user"]);
    let insecure = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    \
         insecure-skip-tls-verify: true\n    tls-server-name: {}\nusers:\n- name: u\n  user:\n    \
         token: {}\ncontexts:\n- name: insecure\n  context: {{cluster: c, user: u}}\n\
         current-context: insecure\n",
        cluster["cluster"]["server"].as_str().unwrap(),
        cluster["cluster"]["tls-server-name"].as_str().unwrap(),
        user["token"].as_str().unwrap(),
    );
    let path = sim.dir.path().join("insecure.yaml");
    std::fs::write(&path, insecure).unwrap();
    let out = fluxfleet()
        .args(["get", "-o", "json", "--timeout", "20s", "--kubeconfig"])
        .arg(&path)
        .env_remove("FLUXFLEET_LOG")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["clusters"][0]["state"], "live", "{doc}");
    assert!(!doc["objects"].as_array().unwrap().is_empty());
    assert_eq!(text(&out.stderr), "", "nothing said on stderr");
    sim.handle.shutdown().await;
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}
