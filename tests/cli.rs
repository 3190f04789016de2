//! The command line's own conventions: completion scripts every shell can load, and a version
//! that names the Flux APIs this build reads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Output};

fn fluxfleet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .args(args)
        .output()
        .unwrap()
}

/// The shell's own "parse, do not run" invocation, when the shell is installed.
fn parser(shell: &str) -> Option<Vec<&'static str>> {
    let args: Vec<&'static str> = match shell {
        "bash" => vec!["bash", "-n"],
        "zsh" => vec!["zsh", "-n"],
        "fish" => vec!["fish", "--no-execute"],
        "powershell" => vec!["pwsh", "-NoProfile", "-NonInteractive", "-File"],
        "elvish" => vec!["elvish", "-compileonly"],
        _ => return None,
    };
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {}", args[0])])
        .output()
        .is_ok_and(|o| o.status.success());
    found.then_some(args)
}

#[test]
fn completion_scripts_are_generated_and_parse_in_their_shell() {
    let dir = tempfile::tempdir().unwrap();
    let mut parsed = Vec::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = fluxfleet(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        // Every command and a global option are offered.
        for word in ["suspend", "reconcile", "completions", "kubeconfig-dir"] {
            assert!(script.contains(word), "{shell} completes {word}");
        }
        let Some(parse) = parser(shell) else {
            continue;
        };
        if shell == "powershell" {
            // pwsh has no parse-only switch: loading the script defines the completer and
            // runs nothing else.
            continue;
        }
        let path = dir.path().join(format!("fluxfleet.{shell}"));
        std::fs::write(&path, &script).unwrap();
        let checked = Command::new(parse[0])
            .args(&parse[1..])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            checked.status.success(),
            "{shell} cannot parse the script: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
        parsed.push(shell);
    }
    assert!(parsed.contains(&"bash"), "bash is everywhere the tests run");
    let out = fluxfleet(&["completions", "tcsh"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn the_version_names_the_build_and_the_flux_apis_it_reads() {
    let out = fluxfleet(&["--version"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!("fluxfleet {}\n", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    let line = |kind: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(kind))
            .unwrap_or_else(|| panic!("{kind} in {text}"))
            .to_string()
    };
    assert!(
        line("HelmRelease").ends_with("helm.toolkit.fluxcd.io              v2 v2beta2 v2beta1")
    );
    assert!(line("Kustomization").contains("kustomize.toolkit.fluxcd.io"));
    assert!(line("Alert").ends_with("v1beta3 v1beta2 v1beta1"));
    assert!(text.contains("Flux v2.0 to v2.9"), "{text}");
}

/// Without any kubeconfig, every way in says where it looked, in order, and what to try: the
/// demo first. The TUI does not open on an empty screen.
#[test]
fn without_a_kubeconfig_fluxfleet_says_where_it_looked_and_offers_the_demo() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str], kubeconfig: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluxfleet"));
        command
            .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
            .env("HOME", home.path())
            .env_remove("KUBECONFIG")
            .env_remove("FLUXFLEET_NATS")
            .args(args)
            .stdin(std::process::Stdio::null());
        if let Some(k) = kubeconfig {
            command.env("KUBECONFIG", k);
        }
        command.output().unwrap()
    };
    let default = home.path().join(".kube").join("config");
    for (args, code) in [(&["get"][..], 3), (&[][..], 1)] {
        let out = run(args, None);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let text = String::from_utf8(out.stderr).unwrap();
        for place in [
            "--kubeconfig",
            "[[sources]]",
            "KUBECONFIG",
            "~/.kube/config",
        ] {
            assert!(text.contains(place), "{args:?} names {place}: {text}");
        }
        assert!(text.contains(&default.display().to_string()), "{text}");
        assert!(
            text.contains("KUBECONFIG                         not set"),
            "{text}"
        );
        assert!(text.contains("`fluxfleet demo`"), "{text}");
        // A place a line, as it is meant to be read: not one line of escaped newlines.
        assert!(!text.contains("\\u{a}"), "{args:?}: {text}");
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with("KUBECONFIG ")),
            "{args:?}: {text}"
        );
    }
    // KUBECONFIG set: it is what was read, and ~/.kube/config was not.
    let out = run(&["get"], Some("/nonexistent/a"));
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(text.contains("/nonexistent/a: file not found"), "{text}");
    assert!(
        text.contains("~/.kube/config                     not read: KUBECONFIG comes first"),
        "{text}"
    );
}

/// The long options `fluxfleet COMMAND --help` lists, --help and --version aside.
fn options_of(command: &clap::Command) -> Vec<String> {
    let mut out: Vec<String> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !matches!(*l, "help" | "version"))
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// Every command offers the options it uses and no other: the fleet's where it reads one, the
/// mode where it can change a cluster, the theme where it draws. A new option lands in this
/// table, where the reader sees which commands it reaches.
#[test]
fn every_command_offers_only_the_options_it_uses() {
    use clap::CommandFactory;
    let cli = fluxfleet::cli::Cli::command();
    cli.clone().debug_assert();
    let fleet = [
        "kubeconfig",
        "kubeconfig-dir",
        "context",
        "config",
        "management",
        "workspace-label",
        "management-depth",
        "nats",
        "nats-creds",
        "nats-nkey",
        "nats-ca",
        "bucket",
    ];
    let scope = ["workspace", "cluster", "namespace"];
    let act = [
        "status",
        "all",
        "dry-run",
        "yes",
        "timeout",
        "output",
        "watch-mode",
        "read-only",
        "write",
    ];
    let with = |parts: &[&[&str]]| {
        let mut all: Vec<String> = parts.concat().iter().map(|s| s.to_string()).collect();
        all.sort();
        all
    };
    let expected: Vec<(&str, Vec<String>)> = vec![
        (
            "",
            with(&[&fleet, &["watch-mode", "theme", "read-only", "write"]]),
        ),
        (
            "get",
            with(&[
                &fleet,
                &scope,
                &[
                    "watch-mode",
                    "status",
                    "output",
                    "summary",
                    "root-causes",
                    "timeout",
                    "watch",
                    "fail-on",
                    "since",
                    "shutdown-timeout",
                ],
            ]),
        ),
        (
            "rollout",
            with(&[
                &fleet,
                &scope,
                &["watch-mode", "output", "timeout", "metrics", "since"],
            ]),
        ),
        (
            "gate",
            with(&[&fleet, &scope, &["watch-mode", "soak", "output", "timeout"]]),
        ),
        (
            "drift",
            with(&[&fleet, &scope, &["watch-mode", "output", "timeout"]]),
        ),
        (
            "workloads",
            with(&[&fleet, &scope, &["watch-mode", "all", "output", "timeout"]]),
        ),
        (
            "trace",
            with(&[&fleet, &scope, &["watch-mode", "output", "timeout"]]),
        ),
        (
            "tree",
            with(&[&fleet, &scope, &["watch-mode", "output", "timeout"]]),
        ),
        ("inventory", with(&[&fleet, &["output"]])),
        ("suspend", with(&[&fleet, &scope, &act, &["reason"]])),
        ("resume", with(&[&fleet, &scope, &act])),
        (
            "reconcile",
            with(&[&fleet, &scope, &act, &["with-source", "force", "reset"]]),
        ),
        (
            "alert",
            with(&[
                &fleet,
                &scope,
                &[
                    "watch-mode",
                    "alertmanager",
                    "alertmanager-ca",
                    "label",
                    "every",
                    "for",
                    "hold",
                    "timeout",
                    "dry-run",
                    "no-workloads",
                    "shutdown-timeout",
                ],
            ]),
        ),
        (
            "mcp",
            with(&[
                &fleet,
                &[
                    "watch-mode",
                    "timeout",
                    "read-only",
                    "write",
                    "propose",
                    "proposal-expiry",
                    "max-pending-proposals",
                    "listen",
                    "token-file",
                    "oauth-issuer",
                    "oauth-audience",
                    "oauth-ca",
                    "oauth-username-claim",
                    "oauth-groups-claim",
                    "impersonate",
                    "impersonate-prefix",
                    "tls-cert",
                    "tls-key",
                    "allow-origin",
                    "max-request-size",
                    "max-calls-per-client",
                    "max-calls-per-minute",
                    "metrics-addr",
                    "health-addr",
                    "shutdown-timeout",
                ],
            ]),
        ),
        (
            "proposals",
            with(&[&[
                "output",
                "nats",
                "nats-creds",
                "nats-nkey",
                "nats-ca",
                "bucket",
            ]]),
        ),
        (
            "approve",
            with(&[
                &fleet,
                &[
                    "yes",
                    "timeout",
                    "output",
                    "watch-mode",
                    "read-only",
                    "write",
                ],
            ]),
        ),
        (
            "reject",
            with(&[&[
                "reason",
                "nats",
                "nats-creds",
                "nats-nkey",
                "nats-ca",
                "bucket",
            ]]),
        ),
        (
            "collect",
            with(&[
                &fleet,
                &[
                    "watch-mode",
                    "id",
                    "ttl",
                    "history",
                    "history-max-bytes",
                    "replicas",
                    "ring-metrics-every",
                    "ring-metrics-window",
                    "metrics-addr",
                    "health-addr",
                    "shutdown-timeout",
                ],
            ]),
        ),
        (
            "demo",
            with(&[&[
                "clusters",
                "workspaces",
                "config",
                "theme",
                "read-only",
                "write",
            ]]),
        ),
        ("completions", Vec::new()),
    ];
    assert_eq!(options_of(&cli), expected[0].1, "fluxfleet (the TUI)");
    let mut seen = Vec::new();
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        seen.push(name.to_string());
        if name == "sim" {
            // The simulator's own options: none of the fleet's, the mode's or the theme's.
            let own = options_of(sub);
            for foreign in fleet
                .iter()
                .chain(&["watch-mode", "theme", "read-only", "write"])
            {
                assert!(
                    !own.contains(&foreign.to_string()),
                    "sim offers --{foreign}"
                );
            }
            continue;
        }
        let Some((_, want)) = expected.iter().find(|(n, _)| *n == name) else {
            panic!("{name} is not in this table: say which options it offers");
        };
        assert_eq!(&options_of(sub), want, "fluxfleet {name}");
    }
    assert_eq!(seen.len(), expected.len(), "{seen:?}");
}

/// Options before the command are the command's; one the command does not take is refused,
/// named, with the usage exit code.
#[test]
fn options_before_the_command_are_the_commands_and_foreign_ones_are_refused() {
    use fluxfleet::cli::{Cli, Command as Sub};
    let cli = Cli::parse_words([
        "fluxfleet",
        "--nats",
        "nats://a:4222",
        "--context",
        "p*",
        "get",
        "ks",
    ])
    .unwrap();
    let Some(Sub::Get(get)) = cli.command else {
        panic!("not get");
    };
    assert_eq!(get.fleet.bus.nats.as_deref(), Some("nats://a:4222"));
    assert_eq!(get.fleet.contexts, ["p*"]);
    assert_eq!(get.select.scope.kind.as_deref(), Some("ks"));
    // No command: the TUI's.
    let cli = Cli::parse_words(["fluxfleet", "--theme", "light", "--read-only"]).unwrap();
    assert!(cli.command.is_none());
    assert_eq!(cli.tui.theme.theme.as_deref(), Some("light"));
    for line in [
        &["fluxfleet", "--theme", "light", "alert", "--dry-run"][..],
        &["fluxfleet", "alert", "--dry-run", "--write"],
        &["fluxfleet", "--nats", "nats://a:4222", "demo"],
        &["fluxfleet", "get", "--nats-creds", "x.creds"],
    ] {
        let refused = Cli::parse_words(line).unwrap_err();
        assert_eq!(refused.exit_code(), 2, "{line:?}");
        let said = refused.to_string();
        assert!(said.contains("--"), "{line:?}: {said}");
    }
    let out = fluxfleet(&["--theme", "light", "get"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--theme"),
        "{out:?}"
    );
    // Values a command cannot take are refused by clap with the reason, as usage errors.
    for (line, said) in [
        (
            &["fluxfleet", "alert", "--dry-run", "--label", "fleet"][..],
            "give KEY=VALUE",
        ),
        (
            &["fluxfleet", "alert", "--dry-run", "--label", "__x=1"],
            "is not a label name",
        ),
        (
            &["fluxfleet", "collect", "--nats", "n", "--replicas", "9"],
            "1 to 5",
        ),
        (
            &[
                "fluxfleet",
                "collect",
                "--nats",
                "n",
                "--metrics-addr",
                "here",
            ],
            "give a port",
        ),
        (
            &["fluxfleet", "get", "--watch-mode", "some"],
            "one of all, summary, auto",
        ),
    ] {
        let refused = Cli::parse_words(line).unwrap_err();
        assert_eq!(refused.exit_code(), 2, "{line:?}");
        assert!(refused.to_string().contains(said), "{line:?}: {refused}");
    }
    // collect publishes: --nats is required, and may come before the command.
    let cli = Cli::parse_words([
        "fluxfleet",
        "--nats",
        "nats://a:4222",
        "collect",
        "--id",
        "c1",
    ])
    .unwrap();
    let Some(Sub::Collect(collect)) = cli.command else {
        panic!("not collect");
    };
    assert_eq!(collect.fleet.bus.nats.as_deref(), Some("nats://a:4222"));
    let refused = Cli::parse_words(["fluxfleet", "collect", "--kubeconfig", "k"]).unwrap_err();
    assert!(refused.to_string().contains("--nats"), "{refused}");
}

/// `mcp --read-only` is what assistants' configs pass to be sure (kubectl-style tools,
/// kubernetes-mcp-server): taken as the default said out loud, and refused beside a flag that
/// would let the server change or propose anything.
#[test]
fn mcp_takes_read_only_and_refuses_it_beside_write_or_propose() {
    use fluxfleet::cli::{Cli, Command as Sub};
    let cli = Cli::parse_words(["fluxfleet", "mcp", "--read-only"]).unwrap();
    let Some(Sub::Mcp(mcp)) = cli.command else {
        panic!("not mcp");
    };
    assert!(mcp.read_only && !mcp.write && !mcp.propose);
    for other in ["--write", "--propose"] {
        let refused = Cli::parse_words(["fluxfleet", "mcp", "--read-only", other]).unwrap_err();
        assert_eq!(refused.exit_code(), 2, "{other}");
        let said = refused.to_string();
        assert!(
            said.contains("--read-only") && said.contains(other),
            "{said}"
        );
    }
}
