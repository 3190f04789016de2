//! Discovering the fleet from the simulated management cluster (Cluster API): every workload
//! cluster with its workspace and labels, lifecycle states instead of connection errors, and a
//! broken kubeconfig Secret reported for that cluster alone — never its contents.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeMap;

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::process::Command;

mod management;
mod several;
mod while_running;

async fn fluxfleet(args: &[&str], management: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .args(args)
        .arg("--kubeconfig")
        .arg(management)
        .args(["--management", "management"])
        .kill_on_drop(true)
        .output()
        .await
        .unwrap()
}
