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
