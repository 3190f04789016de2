//! Which long options each command offers: exactly the ones it uses.

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
