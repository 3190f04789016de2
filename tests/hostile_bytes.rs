//! Hostile bytes: every parser of untrusted input — kubeconfigs, the config file, themes, Cluster
//! API objects and Secrets — answers thousands of mutated samples (see `src/hostile.rs`)
//! with a value or an error naming what is wrong: no panic, no hang, and everything else in the
//! same run still works. Watch lines and object summaries are covered in `k8s::kind_watch`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::hostile;
use base64::Engine as _;
use fluxfleet::config::Config;
use fluxfleet::config::theme::Theme;

use fluxfleet::inventory::{self, capi};
use hostile::{mutations, text_mutations};
use serde_json::Value;

fn fixture(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

fn sample(file: &str) -> Value {
    serde_saphyr::from_str(&fixture(&format!("tests/fixtures/samples/{file}"))).unwrap()
}

const GOOD: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: good\n  cluster:\n    server: https://127.0.0.1:6443\nusers:\n- name: good\n  user:\n    token: t\ncontexts:\n- name: good\n  context: {cluster: good, user: good}\ncurrent-context: good\n";

#[test]
fn hostile_kubeconfigs_are_problems_naming_their_file_and_a_good_one_beside_still_loads() {
    let seed = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://prod.example:6443\n    certificate-authority-data: bm90IGEgY2VydA==\n    proxy-url: http://proxy:3128\nusers:\n- name: admin\n  user:\n    token: abc\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n      args: [eks, get-token]\ncontexts:\n- name: prod\n  context: {cluster: prod, user: admin, namespace: flux-system}\ncurrent-context: prod\n";
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.kubeconfig");
    std::fs::write(&good, GOOD).unwrap();
    let hostile = dir.path().join("hostile.kubeconfig");
    let mut problems = 0;
    for bytes in mutations(seed.as_bytes(), 400) {
        std::fs::write(&hostile, &bytes).unwrap();
        let request = inventory::Lookup {
            kubeconfigs: vec![hostile.clone(), good.clone()],
            ..inventory::Lookup::default()
        };
        let found = inventory::load(&request, &Config::defaults());
        assert!(
            found.clusters.iter().any(|c| c.name == "good"),
            "the good kubeconfig still loads beside {:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        );
        for p in &found.problems {
            problems += 1;
            assert!(p.source.contains("hostile.kubeconfig"), "{p}");
            assert!(!p.message.trim().is_empty(), "{p}");
        }
    }
    assert!(problems > 100, "only {problems} problems reported");
}

#[test]
fn hostile_config_files_warn_and_the_defaults_hold_where_they_fail() {
    let seed = fixture("config/default.toml");
    let path = Path::new("/home/op/.config/fluxfleet/config.toml");
    let mut warned = 0;
    for text in text_mutations(&seed, 600) {
        let (_, warnings) = Config::parse(Some(&text), path);
        warned += usize::from(!warnings.is_empty());
        for w in &warnings {
            assert_eq!(w.file, path);
            assert!(!w.message.trim().is_empty());
        }
    }
    // Most of the default file is comments: many mutations change nothing that is read.
    assert!(warned > 100, "only {warned} of 600 hostile files warned");
}

#[test]
fn no_hostile_edit_elsewhere_in_the_config_file_drops_a_deny_rule_silently() {
    // The user's deny rule last; mutations hit only what comes before it — yet a stray quote
    // or bracket there can swallow what follows. Either the rule is read exactly as written,
    // or every write is refused: a guardrail never fails open.
    let before = "[engine]\nconnect_timeout = \"10s\"\n\n[ui]\ntheme = \"dark\"\n\n[[workspaces]]\nname = \"prod\"\ncontexts = [\"prod-*\"]\n\n";
    let guard =
        "[actions]\nconfirm_above = 3\ndeny = [{ workspace = \"prod\", kind = \"HelmRelease\" }]\n";
    let path = Path::new("/home/op/.config/fluxfleet/config.toml");
    let (mut held, mut refused) = (0, 0);
    for prefix in text_mutations(before, 800) {
        let (config, _) = Config::parse(Some(&format!("{prefix}{guard}")), path);
        let rule = config.actions.deny.iter().any(|r| {
            r.workspace.as_deref() == Some("prod") && r.kind.as_deref() == Some("HelmRelease")
        });
        if rule {
            held += 1;
        } else {
            assert!(
                !config.guardrail_problems.is_empty(),
                "the deny rule vanished and writes are still allowed after {prefix:?}"
            );
            refused += 1;
        }
    }
    assert!(
        held > 100 && refused > 10,
        "{held} held, {refused} refused writes"
    );
}

#[test]
fn hostile_themes_warn_and_fall_back_to_the_dark_theme() {
    let seed = "parent = \"dark\"\n[slots]\nfailing = \"red bold\"\nready = \"#00ff00\"\nheader = \"black on white\"\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("themes")).unwrap();
    let mut warned = 0;
    for text in text_mutations(seed, 600) {
        std::fs::write(dir.path().join("themes/mine.toml"), &text).unwrap();
        let (theme, warnings) = Theme::load("mine", Some(dir.path()));
        assert_eq!(theme.name, "mine");
        warned += usize::from(!warnings.is_empty());
        assert!(warnings.iter().all(|w| !w.trim().is_empty()));
    }
    assert!(warned > 300, "only {warned} of 600 hostile themes warned");
}

#[test]
fn hostile_cluster_api_objects_and_secrets_are_refused_with_a_reason_and_never_echoed() {
    let secret = sample("capi-cluster-kubeconfig-secret.yaml");
    let cluster = sample("capi-cluster-v1beta2-provisioned.yaml");
    let b64 = base64::engine::general_purpose::STANDARD;
    // The sample's own value is redacted: a kubeconfig as Cluster API writes one stands in.
    let inner = GOOD;
    let (mut read, mut refused) = (0, 0);
    // The kubeconfig inside the Secret, mutated and encoded again.
    for text in mutations(inner.as_bytes(), 600) {
        let mut s = secret.clone();
        s["data"]["value"] = Value::String(b64.encode(&text));
        match capi::kubeconfig(&s) {
            Ok(_) => read += 1,
            Err(e) => {
                refused += 1;
                // What is wrong with the kubeconfig itself; what the Secret holds is never
                // repeated (it may be a credential).
                assert!(
                    matches!(
                        e,
                        capi::SecretError::NotText(_)
                            | capi::SecretError::NotKubeconfig(_)
                            | capi::SecretError::Empty(_)
                    ),
                    "{e:?}"
                );
                assert!(e.to_string().len() < 200, "{e}");
            }
        }
    }
    // The Secret and the Cluster themselves, mutated as JSON text.
    for (object, is_secret) in [(&secret, true), (&cluster, false)] {
        for text in mutations(object.to_string().as_bytes(), 600) {
            let Ok(value) = serde_json::from_slice::<Value>(&text) else {
                continue;
            };
            if is_secret {
                let _ = capi::kubeconfig(&value);
            } else if let Some(found) = capi::cluster(&value) {
                assert!(!found.name.is_empty());
            }
        }
    }
    assert!(read > 10 && refused > 300, "{read} read, {refused} refused");
}
