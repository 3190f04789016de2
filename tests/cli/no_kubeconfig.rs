//! Without any kubeconfig: where fluxfleet looked, in order, and the demo offered.

use std::process::Command;

/// Without any kubeconfig, every way in says where it looked, in order, and what to try: the
/// demo first, and exits 3 (no cluster at all) as every command does. The TUI does not open on
/// an empty screen.
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
    for args in [&["get"][..], &[][..]] {
        let out = run(args, None);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
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
