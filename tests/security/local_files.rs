//! Local files: a malformed kubeconfig is never quoted, and the demo's directory is fresh,
//! private and never follows a planted symlink.

use super::fluxfleet;

/// A malformed kubeconfig is reported by line, column and kind of error — never with the lines
/// around the error, which hold tokens and keys.
#[tokio::test]
async fn kubeconfig_parse_errors_never_quote_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://x:6443}\n\
         users:\n- name: u\n  user:\n    token: sup3r-s3cret-t0ken\n    client-key-data: S0VZLURBVEE=\n   \
         bad: indent\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n",
    )
    .unwrap();
    let typed = dir.path().join("typed.yaml");
    std::fs::write(
        &typed,
        "apiVersion: v1\nclusters:\n- name: c\n  cluster: {server: https://x, insecure-skip-tls-verify: \"sup3r-s3cret-t0ken\"}\n",
    )
    .unwrap();
    for file in [&bad, &typed] {
        let file = file.display().to_string();
        for format in ["table", "json"] {
            let out = fluxfleet(&["inventory", "-o", format, "--kubeconfig", &file], &[]).await;
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.status.code(), Some(3), "{all}");
            assert!(all.contains("not a valid kubeconfig"), "{all}");
            assert!(all.contains("line "), "says where: {all}");
            for secret in ["sup3r", "S0VZ", "token:", "client-key-data"] {
                assert!(!all.contains(secret), "{secret} leaked: {all}");
            }
        }
    }
}

/// `demo` serves from a fresh private directory, never from one another local user prepared,
/// and writes its tokens without following a planted symlink.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_directory_is_fresh_private_and_never_follows_a_planted_symlink() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let tmp = tempfile::tempdir().unwrap();
    // What another user could prepare on main: the name the demo would pick, with a kubeconfig
    // inside.
    let planted = tmp
        .path()
        .join(format!("fluxfleet-demo-{}", std::process::id() + 1));
    std::fs::create_dir(&planted).unwrap();
    std::fs::write(planted.join("fleet.kubeconfig"), "planted").unwrap();
    let a = fluxfleet_sim::private_dir(tmp.path(), "fluxfleet-demo-").unwrap();
    let b = fluxfleet_sim::private_dir(tmp.path(), "fluxfleet-demo-").unwrap();
    assert_ne!(a.path(), b.path());
    for d in [&a, &b] {
        assert_ne!(d.path(), planted);
        let meta = std::fs::symlink_metadata(d.path()).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "empty, not reused"
        );
    }
    let gone = a.path().to_path_buf();
    drop(a);
    assert!(!gone.exists(), "removed when done");

    // A symlink where the simulator writes its tokens: replaced, not followed.
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "do not overwrite").unwrap();
    let out = b.path().to_path_buf();
    std::os::unix::fs::symlink(&victim, out.join("fleet.kubeconfig")).unwrap();
    std::fs::write(out.join("sim-token"), "old").unwrap();
    std::fs::set_permissions(
        out.join("sim-token"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let handle = fluxfleet_sim::start(fluxfleet_sim::Config {
        clusters: 2,
        workspaces: 1,
        objects: 3,
        out: out.clone(),
        ..fluxfleet_sim::Config::default()
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "do not overwrite"
    );
    for file in ["fleet.kubeconfig", "sim-token"] {
        let meta = std::fs::symlink_metadata(out.join(file)).unwrap();
        assert!(meta.is_file(), "{file} is a regular file");
        assert_eq!(meta.mode() & 0o777, 0o600, "{file}");
    }
    handle.shutdown().await;
}
