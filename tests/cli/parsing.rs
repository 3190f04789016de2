//! What the parser takes and refuses: options before the command, values a command cannot
//! take, and `mcp --read-only` beside `--write` or `--propose`.

use super::fluxfleet;

/// Options before the command are the command's; one the command does not take is refused,
/// named, with the usage exit code.
#[test]
fn options_before_the_command_are_the_commands_and_foreign_ones_are_refused() {
    use fluxfleet::cli::{Cli, CliCommand};
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
    let Some(CliCommand::Get(get)) = cli.command else {
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
    let Some(CliCommand::Collect(collect)) = cli.command else {
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
    use fluxfleet::cli::{Cli, CliCommand};
    let cli = Cli::parse_words(["fluxfleet", "mcp", "--read-only"]).unwrap();
    let Some(CliCommand::Mcp(mcp)) = cli.command else {
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
