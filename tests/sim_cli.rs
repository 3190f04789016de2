//! `fluxfleet sim` as a user runs it: one line on start, files written, a clean stop on SIGTERM,
//! and clear errors with a non-zero exit for bad input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn fluxfleet() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
}

fn run_err(args: &[&str]) -> String {
    let out = fluxfleet().args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn starts_prints_where_it_listens_writes_files_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet");
    let mut child = fluxfleet()
        .args([
            "sim",
            "--clusters",
            "5",
            "--workspaces",
            "2",
            "--objects",
            "10",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("serving on https://127.0.0.1:"), "{line}");
    assert!(line.contains(&out.display().to_string()), "{line}");
    for f in [
        "fleet.kubeconfig",
        "viewer.kubeconfig",
        "management.kubeconfig",
    ] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    let per_cluster: Vec<_> = walk(&out.join("kubeconfigs"));
    assert_eq!(per_cluster.len(), 5);
    assert!(per_cluster.iter().all(|p| {
        p.parent()
            .unwrap()
            .parent()
            .unwrap()
            .ends_with("kubeconfigs")
    }));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(out.join("fleet.kubeconfig"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(
        mode & 0o077,
        0,
        "kubeconfigs with tokens are private to their owner"
    );
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success(), "a clean exit on SIGTERM");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

#[test]
fn bad_flags_are_rejected_with_what_is_wrong() {
    assert!(run_err(&["sim", "--faults", "slowness=5%"]).contains("unknown fault \"slowness\""));
    assert!(run_err(&["sim", "--faults", "slow=5%:soon"]).contains("invalid duration"));
    assert!(run_err(&["sim", "--clusters", "0"]).contains("--clusters must be at least 1"));
    assert!(
        run_err(&["sim", "--clusters", "2", "--workspaces", "3"])
            .contains("--workspaces must be between 1")
    );
    assert!(run_err(&["sim", "--listen", "nowhere"]).contains("--listen"));
}

#[test]
fn an_unwritable_out_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let err = run_err(&["sim", "--out", file.join("sub").to_str().unwrap()]);
    assert!(
        err.contains("cannot write") && err.contains("a-file"),
        "{err}"
    );
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let err = run_err(&[
        "sim",
        "--listen",
        &addr,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
}
