//! `fluxfleet suspend | resume | reconcile` as scripts run them: the binary against an in-process
//! simulated fleet, checked against the simulator's truth, its objects' annotations, its count of
//! mutating requests and the audit journal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use fluxfleet_sim::TruthObject;
use kube::api::Api;
use kube::core::DynamicObject;
use serde_json::Value;
use tokio::process::Command;

use common::Sim;

mod lifecycle;
mod outcomes;
mod permissions;

/// The binary, with no config or kubeconfig of the developer's, journaling into `data`.
async fn run(args: &[&str], kubeconfig: (&str, &Path), data: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env("FLUXFLEET_DATA_DIR", data)
        // Not who acted: the journal names the operating system's user, whatever $USER says.
        .env("USER", "alice")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .args(args)
        .arg(kubeconfig.0)
        .arg(kubeconfig.1)
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}

/// `id -un`: the account running the tests, as the system names it.
fn os_user() -> String {
    let out = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The machine's name, as the kernel has it.
fn os_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exits with `code`, or fails showing what the command printed.
fn exits(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn fleet(sim: &Sim) -> (&'static str, std::path::PathBuf) {
    ("--kubeconfig-dir", sim.dir.path().join("kubeconfigs"))
}

/// A Kustomization (namespace, name) that every workload cluster has.
fn everywhere(sim: &Sim, kind: &str) -> (String, String) {
    let truth = sim.handle.truth();
    let workloads: Vec<_> = truth.iter().filter(|c| !c.management).collect();
    let keys = |objects: &[TruthObject]| -> BTreeSet<(String, String)> {
        objects
            .iter()
            .filter(|o| o.kind == kind && !o.suspended)
            .map(|o| (o.namespace.clone(), o.name.clone()))
            .collect()
    };
    let mut common = keys(&workloads[0].objects);
    for c in &workloads[1..] {
        common = common.intersection(&keys(&c.objects)).cloned().collect();
    }
    common
        .into_iter()
        .next()
        .expect("an object on every cluster")
}

fn suspended_on(sim: &Sim, kind: &str, ns: &str, name: &str) -> usize {
    sim.handle
        .truth()
        .iter()
        .filter(|c| {
            c.objects
                .iter()
                .any(|o| o.kind == kind && o.namespace == ns && o.name == name && o.suspended)
        })
        .count()
}

fn mutating(sim: &Sim) -> u64 {
    sim.handle.stats()["mutatingTotal"].as_u64().unwrap()
}

/// The PATCHes sent, without the Events each action records beside them.
fn patches(sim: &Sim) -> u64 {
    sim.handle.stats()["patchTotal"].as_u64().unwrap()
}

/// The journal's lines of one stage: `intent` (before sending) or `outcome`.
fn journal_stage(data: &Path, stage: &str) -> Vec<Value> {
    std::fs::read_to_string(data.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["stage"] == stage)
        .collect()
}

/// The outcome lines: one per attempt.
fn journal(data: &Path) -> Vec<Value> {
    journal_stage(data, "outcome")
}

async fn object(
    sim: &Sim,
    cluster: &str,
    ar: &kube::api::ApiResource,
    ns: &str,
    name: &str,
) -> DynamicObject {
    let client = common::client(&sim.handle.files.fleet, cluster).await;
    let api: Api<DynamicObject> = common::api(&client, ar, Some(ns));
    api.get(name).await.unwrap()
}
