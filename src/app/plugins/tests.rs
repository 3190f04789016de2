#![allow(clippy::unwrap_used)]
use super::*;
use crate::app::keymap::{Bound, Keymap};
use crate::config::Config;

fn vars() -> Vars {
    let mut v = Vars::default();
    v.set("NAME", "apps");
    v.set("NAMESPACE", "flux-system");
    v.set("KIND", "Kustomization");
    v
}

#[test]
fn variables_expand_inside_arguments_and_other_dollars_stay() {
    let v = vars();
    assert_eq!(expand("$KIND/$NAME", &v).unwrap(), "Kustomization/apps");
    assert_eq!(
        expand("--namespace=$NAMESPACE", &v).unwrap(),
        "--namespace=flux-system"
    );
    // NAMESPACE is not NAME followed by "SPACE"; braces delimit.
    assert_eq!(expand("${NAME}SPACE", &v).unwrap(), "appsSPACE");
    // A shell's own variables and positional parameters pass through.
    assert_eq!(
        expand(r#"kubectl describe "$1" | ${PAGER:-less} $HOME $"#, &v).unwrap(),
        r#"kubectl describe "$1" | ${PAGER:-less} $HOME $"#
    );
    assert_eq!(expand("${NAME", &v).unwrap(), "${NAME");
    let missing = expand("--context=$CONTEXT", &v).unwrap_err();
    assert!(matches!(
        missing,
        PluginError::NeedsSelection {
            var: "CONTEXT",
            needs: "a cluster"
        }
    ));
    assert_eq!(
        expand("$WORKSPACE", &Vars::default())
            .unwrap_err()
            .to_string(),
        "$WORKSPACE needs a workspace selected"
    );
}

#[test]
fn values_that_a_command_line_could_misread_are_refused() {
    for fine in [
        "apps",
        "main@sha1:0a1b2c",
        "arn:aws:eks:eu-west-1:1:cluster/prod",
        "a_b.c+d=e~f",
    ] {
        assert_eq!(checked("name", fine).unwrap(), fine);
    }
    for bad in [
        "",
        "-rf",
        "--kubeconfig=/etc/x",
        "a b",
        "a;b",
        "$(id)",
        "a`b`",
        "a\nb",
        "a|b",
    ] {
        let e = checked("name", bad).unwrap_err();
        assert!(
            matches!(&e, PluginError::Unsafe { what: "name", value } if value == bad),
            "{bad:?}: {e}"
        );
    }
}

fn plugin(
    name: &str,
    key: &str,
    scopes: &[&str],
    command: &str,
) -> crate::config::plugins::PluginEntry {
    crate::config::plugins::PluginEntry {
        name: name.into(),
        key: key.into(),
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
        command: command.into(),
        args: Vec::new(),
        description: String::new(),
        background: false,
        confirm: false,
        writes: true,
        read_only_args: Vec::new(),
        needs: Vec::new(),
        enabled: true,
    }
}

#[test]
fn plugins_are_checked_and_their_keys_join_the_keymap_with_conflicts_as_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("tool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().as_os_str();
    let config = vec![
        plugin("ok", "K", &["cluster", "detail"], "tool"),
        plugin("bad-key", "ctrl-", &["cluster"], "tool"),
        plugin("nowhere", "N", &["results", "space"], "tool"),
        plugin("absent", "A", &["cluster"], "not-installed"),
        // `q` quits everywhere; `K` is taken by `ok` in the cluster view.
        plugin("clash", "q", &["cluster"], "tool"),
        plugin("second", "K", &["cluster", "workspace"], "tool"),
    ];
    let (plugins, warnings) = from_config(&config, Some(path));
    let names: Vec<&str> = plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["ok", "absent", "clash", "second"]);
    assert_eq!(plugins[1].missing.as_deref(), Some("not-installed"));
    assert_eq!(plugins[0].missing, None);
    let all = warnings.join("\n");
    assert!(
        all.contains("plugins.bad-key.key: \"ctrl-\" is not a key"),
        "{all}"
    );
    assert!(
        all.contains("plugins.nowhere.scopes: \"results\" is not a view"),
        "{all}"
    );
    assert!(all.contains("plugins.nowhere: applies to no view"), "{all}");

    let (mut keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let conflicts = bind(&mut keymap, &plugins).join("\n");
    assert!(
        conflicts.contains("plugins.clash: q is bound to quit in the cluster view"),
        "{conflicts}"
    );
    assert!(
        conflicts.contains("plugins.second: K is bound to plugin ok in the cluster view"),
        "{conflicts}"
    );
    let k = Key::parse("K").unwrap();
    assert_eq!(keymap.bound(Context::Cluster, k), Some(Bound::Plugin(0)));
    assert_eq!(keymap.bound(Context::Workspace, k), Some(Bound::Plugin(3)));
    assert_eq!(keymap.bound(Context::Fleet, k), None);
    // The missing program's key does nothing, and quit stays quit.
    assert_eq!(
        keymap.bound(Context::Cluster, Key::parse("A").unwrap()),
        None
    );
    assert_eq!(
        keymap.bound(Context::Cluster, Key::parse("q").unwrap()),
        Some(Bound::Action(crate::app::key_action::Action::Quit))
    );
    assert_eq!(keymap.plugins_in(Context::Detail), [(0, k)]);
}

#[test]
fn the_shipped_plugins_read_cleanly_and_a_users_file_merges_by_name() {
    let shipped = Config::defaults().plugins;
    let names: Vec<&str> = shipped.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["k9s", "describe", "flux-events", "flux-trace", "flux-logs"]
    );
    let (plugins, warnings) = from_config(&shipped, Some(std::ffi::OsStr::new("")));
    assert_eq!(warnings, Vec::<String>::new());
    assert!(
        plugins.iter().all(|p| p.missing.is_some()),
        "nothing is on an empty PATH"
    );
    let k9s = &shipped[0];
    assert!(k9s.writes);
    assert_eq!(k9s.read_only_args, ["--readonly"]);
    assert!(shipped[1..].iter().all(|p| !p.writes));

    let user = r#"
        [[plugins]]
        name = "k9s"
        key = "ctrl-k"
        scopes = ["cluster"]
        command = "k9s"
        [[plugins]]
        name = "flux-logs"
        key = "L"
        scopes = ["all"]
        command = "flux"
        enabled = false
        [[plugins]]
        name = "reconcile"
        key = "alt-R"
        scopes = ["detail"]
        command = "flux"
        args = ["reconcile", "kustomization", "$NAME"]
        [[plugins]]
        name = "typo"
        key = "x"
        scopes = ["cluster"]
        comand = "x"
    "#;
    let (config, warnings) = Config::parse(Some(user), std::path::Path::new("u.toml"));
    let names: Vec<&str> = config.plugins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["k9s", "describe", "flux-events", "flux-trace", "reconcile"]
    );
    assert_eq!(config.plugins[0].key, "ctrl-k");
    // Unsaid: a user's plugin is assumed to write.
    assert!(config.plugins[4].writes);
    let all: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        all.iter()
            .any(|w| w.contains("plugins[3]") && w.contains("comand")),
        "{all:?}"
    );
    assert!(config.guardrail_problems.is_empty());
}
