//! Completion scripts for every shell, each parsed by its own shell where it is installed.

use std::process::Command;

use super::fluxfleet;

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
