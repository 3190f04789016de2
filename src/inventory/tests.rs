use super::*;
use crate::config::{LabelRule, WorkspaceRule};
use std::collections::BTreeMap;

fn kubeconfig(entries: &[(&str, &str)]) -> String {
    // (context, server) pairs, each with its own cluster and user.
    let mut clusters = String::new();
    let mut users = String::new();
    let mut contexts = String::new();
    for (ctx, server) in entries {
        clusters.push_str(&format!(
            "- name: {ctx}-c\n  cluster:\n    server: {server}\n"
        ));
        users.push_str(&format!(
            "- name: {ctx}-u\n  user:\n    token: secret-{ctx}\n"
        ));
        contexts.push_str(&format!(
            "- name: {ctx}\n  context:\n    cluster: {ctx}-c\n    user: {ctx}-u\n"
        ));
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n{users}contexts:\n{contexts}"
    )
}

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn request() -> Lookup {
    Lookup {
        home: Some(PathBuf::from("/nonexistent-home")),
        ..Lookup::default()
    }
}

fn names(inv: &Inventory) -> Vec<(String, String)> {
    inv.clusters
        .iter()
        .map(|c| (c.name.clone(), c.workspace.clone()))
        .collect()
}

#[test]
fn a_directory_gives_workspaces_from_its_layout_and_skips_non_kubeconfigs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(
        d,
        "payments/pay-1.yaml",
        &kubeconfig(&[("pay-1", "https://p1:6443")]),
    );
    write(
        d,
        "payments/eu/pay-2.yaml",
        &kubeconfig(&[("pay-2", "https://p2")]),
    );
    write(
        d,
        "retail/r.kubeconfig",
        &kubeconfig(&[("r-1", "https://r1"), ("r-2", "https://r2")]),
    );
    write(d, "loose.yaml", &kubeconfig(&[("loose", "https://l")]));
    write(d, "README.md", "# not a kubeconfig");
    write(d, ".hidden/x.yaml", "garbage: [");
    let inv = load(
        &Lookup {
            dirs: vec![d.to_path_buf()],
            ..request()
        },
        &Config::defaults(),
    );
    assert_eq!(inv.problems, []);
    let expected = [
        ("loose", "default"),
        ("pay-2", "payments"),
        ("pay-1", "payments"),
        ("r-1", "retail"),
        ("r-2", "retail"),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(names(&inv), expected);
    assert_eq!(inv.clusters[2].server, "https://p1:6443");
    assert!(inv.clusters[2].source.ends_with("payments/pay-1.yaml"));
}

#[test]
fn broken_files_are_problems_and_never_hide_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let good = write(d, "good.yaml", &kubeconfig(&[("good", "https://g")]));
    let bad_yaml = write(d, "bad.yaml", "clusters: [ {name: x");
    let dangling = write(
        d,
        "dangling.yaml",
        "contexts:\n- name: lost\n  context:\n    cluster: nowhere\n    user: nobody\n\
         - name: userless\n  context:\n    cluster: here\n    user: ghost\n\
         - name: no-server\n  context:\n    cluster: empty\n\
         clusters:\n- name: here\n  cluster:\n    server: https://h\n\
         - name: empty\n  cluster:\n    insecure-skip-tls-verify: true\n",
    );
    let missing = d.join("missing.yaml");
    let inv = load(
        &Lookup {
            kubeconfigs: vec![bad_yaml.clone(), good, missing.clone(), dangling.clone()],
            ..request()
        },
        &Config::defaults(),
    );
    assert_eq!(names(&inv), [("good".to_string(), "default".to_string())]);
    let problems: Vec<String> = inv.problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 5, "{problems:#?}");
    assert!(problems[0].starts_with(&format!("{}: not a valid kubeconfig", bad_yaml.display())));
    assert_eq!(
        problems[1],
        format!("{}: file not found", missing.display())
    );
    let d = dangling.display();
    assert_eq!(
        problems[2],
        format!("{d}: context \"lost\": names cluster \"nowhere\", which is not defined")
    );
    assert_eq!(
        problems[3],
        format!("{d}: context \"userless\": names user \"ghost\", which is not defined")
    );
    assert_eq!(
        problems[4],
        format!("{d}: context \"no-server\": cluster \"empty\" has no server")
    );
}

#[test]
fn duplicate_contexts_across_files_are_renamed_not_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let a = write(d, "team-a.yaml", &kubeconfig(&[("prod", "https://a")]));
    let b = write(d, "team-b.yaml", &kubeconfig(&[("prod", "https://b")]));
    let c = write(d, "x/team-b.yaml", &kubeconfig(&[("prod", "https://c")]));
    let inv = load(
        &Lookup {
            kubeconfigs: vec![a, b, c],
            ..request()
        },
        &Config::defaults(),
    );
    let got: Vec<_> = inv
        .clusters
        .iter()
        .map(|c| (c.name.as_str(), c.context.as_str(), c.server.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("prod", "prod", "https://a"),
            ("prod@team-b", "prod", "https://b"),
            ("prod@team-b#2", "prod", "https://c")
        ]
    );
}

#[test]
fn kubeconfig_env_merges_like_kubectl() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // File 1 defines cluster "shared"; file 2 has a context that uses it, and redefines it too.
    let one = write(
        d,
        "one.yaml",
        "clusters:\n- name: shared\n  cluster:\n    server: https://one\n\
         contexts:\n- name: first\n  context:\n    cluster: shared\n",
    );
    let two = write(
        d,
        "two.yaml",
        "clusters:\n- name: shared\n  cluster:\n    server: https://two\n\
         contexts:\n- name: second\n  context:\n    cluster: shared\n\
         - name: first\n  context:\n    cluster: shared\n",
    );
    let env = std::env::join_paths([one, d.join("absent.yaml"), two]).unwrap();
    let inv = load(
        &Lookup {
            kubeconfig_env: Some(env),
            ..request()
        },
        &Config::defaults(),
    );
    let got: Vec<_> = inv
        .clusters
        .iter()
        .map(|c| (c.name.as_str(), c.server.as_str()))
        .collect();
    // kubectl: the first file that defines "shared" wins; the hidden duplicate "first" is kept
    // and resolves in its own file.
    assert_eq!(
        got,
        [
            ("first", "https://one"),
            ("second", "https://one"),
            ("first@two", "https://two")
        ]
    );
    assert_eq!(inv.problems.len(), 1);
    assert!(inv.problems[0].message.contains("file not found"));
}

#[test]
fn rules_place_clusters_and_context_globs_narrow_the_fleet() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(
        d,
        "retail/all.yaml",
        &kubeconfig(&[
            ("pay-prod-eu1", "https://1"),
            ("retail-dev-us1", "https://2"),
            ("kind-local", "https://3"),
        ]),
    );
    let mut config = Config::defaults();
    config.workspaces = vec![WorkspaceRule {
        name: Some("payments".into()),
        contexts: vec!["pay-*".into()],
        regex: None,
    }];
    config.labels = vec![LabelRule {
        contexts: vec![],
        regex: Some("^[a-z]+-(?P<env>dev|prod)-(?P<region>[a-z0-9]+)$".into()),
        set: BTreeMap::new(),
    }];
    let all = Lookup {
        dirs: vec![d.to_path_buf()],
        ..request()
    };
    let inv = load(&all, &config);
    let got: Vec<_> = inv
        .clusters
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.workspace.as_str(),
                c.labels.get("env").map(String::as_str),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("pay-prod-eu1", "payments", Some("prod")),
            ("retail-dev-us1", "retail", Some("dev")),
            ("kind-local", "retail", None)
        ]
    );
    let narrowed = load(
        &Lookup {
            contexts: vec!["*-dev-*".into(), "kind-*".into()],
            ..all.clone()
        },
        &config,
    );
    assert_eq!(narrowed.clusters.len(), 2);
    let none = load(
        &Lookup {
            contexts: vec!["nope-*".into()],
            ..all
        },
        &config,
    );
    assert_eq!(none.clusters.len(), 0);
    assert_eq!(
        none.problems[0].to_string(),
        "--context: no context matches \"nope-*\""
    );
}

#[test]
fn the_inventory_never_serializes_credentials() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), "k.yaml", &kubeconfig(&[("c", "https://c")]));
    let inv = load(
        &Lookup {
            kubeconfigs: vec![file],
            ..request()
        },
        &Config::defaults(),
    );
    let json = serde_json::to_string(&inv).unwrap();
    assert!(json.contains("\"cluster\":\"c\""));
    assert!(!json.contains("secret-c"), "{json}");
    assert!(!format!("{inv:?}").contains("secret-c"));
}

/// A collector lists the fleet by name and reads the credentials of the clusters it takes: the
/// list holds no credentials but says what `load` says (names, workspaces, servers, warnings),
/// and reading a cluster's credentials again reads its file alone and gives what `load` gave.
#[test]
fn a_fleet_listed_by_name_reads_each_cluster_s_credentials_from_its_own_file_only() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(
        d,
        "payments/pay-1.yaml",
        &kubeconfig(&[("pay-1", "https://p1")]),
    );
    write(
        d,
        "retail/shop.yaml",
        &kubeconfig(&[("shop-1", "http://s1"), ("shop-2", "https://s2")]),
    );
    let broken = write(
        d,
        "retail/later.yaml",
        &kubeconfig(&[("later", "https://l1")]),
    );
    let req = Lookup {
        dirs: vec![d.to_path_buf()],
        ..request()
    };
    let config = Config::defaults();
    let loaded = load(&req, &config);
    let listed = list(&req, &config);
    assert_eq!(names(&listed), names(&loaded));
    assert_eq!(
        listed.warnings, loaded.warnings,
        "shop-1 sends its token over http://"
    );
    assert_eq!(listed.warnings.len(), 1);
    assert!(listed.clusters.iter().all(|c| !c.credentials_read()));
    assert!(listed.clusters.iter().all(|c| c.kube_user().is_empty()));
    assert!(loaded.clusters.iter().all(ClusterSpec::credentials_read));

    // A file nobody asked for is not read: broken now, it is no problem of this read.
    std::fs::write(&broken, "clusters: [").unwrap();
    let reread = Reread {
        request: req.clone(),
        config: config.clone(),
    };
    let wanted: Vec<ClusterSpec> = listed
        .clusters
        .iter()
        .filter(|c| c.context.starts_with("shop"))
        .cloned()
        .collect();
    let (read, problems) = reread.credentials(wanted);
    assert_eq!(problems, []);
    let json = |c: &ClusterSpec| serde_json::to_string(&c.kubeconfig.kubeconfig()).unwrap();
    for spec in &read {
        let same = loaded
            .clusters
            .iter()
            .find(|c| c.name == spec.name)
            .unwrap();
        assert_eq!(json(spec), json(same), "{}", spec.name);
        assert_eq!(spec.key(), same.key());
    }
    assert_eq!(read.len(), 2);

    // A context its file no longer has is a problem naming it; the others are read.
    write(
        d,
        "retail/shop.yaml",
        &kubeconfig(&[("shop-2", "https://s2")]),
    );
    let (read, problems) = reread.credentials(listed.clusters.clone());
    let read: Vec<&str> = read.iter().map(|c| c.context.as_str()).collect();
    assert_eq!(read, ["pay-1", "shop-2"]);
    let said: Vec<(Option<&str>, &str)> = problems
        .iter()
        .map(|p| (p.context.as_deref(), p.message.as_str()))
        .collect();
    assert!(
        said.contains(&(Some("shop-1"), "no longer in the file, or no longer usable")),
        "{said:?}"
    );
    assert!(said.iter().any(|(c, _)| *c == Some("later")), "{said:?}");
}
