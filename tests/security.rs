//! Attacks on the user's machine through what fluxfleet reads: a management cluster's Secrets,
//! hostile API servers, local files. Each test stages the attack against the simulator or a
//! small hostile server written here, and checks that it does nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::Path;

use tokio::process::Command;

mod audit;
mod exec_plugins;
mod hostile_servers;
mod local_files;
mod management_cluster;
mod proxy_urls;

async fn fluxfleet(args: &[&str], envs: &[(&str, &Path)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fluxfleet"));
    cmd.env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .args(args)
        .kill_on_drop(true);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().await.unwrap()
}

/// A cluster's connection phase and error, by name.
fn state(live: &fluxfleet::session::Session, name: &str) -> (fluxfleet::fleet::Phase, String) {
    let c = live.index.cluster_named(name).unwrap();
    let error = c.connection.error.as_deref().unwrap_or_default();
    (c.connection.phase, error.to_string())
}

/// The fleet of one kubeconfig file.
fn load(
    path: std::path::PathBuf,
    config: &fluxfleet::config::Config,
) -> fluxfleet::inventory::Inventory {
    let request = fluxfleet::inventory::Lookup {
        kubeconfigs: vec![path],
        ..Default::default()
    };
    fluxfleet::inventory::load(&request, config)
}

/// A one-cluster simulation and what reaches it: server URL, CA data, admin token.
async fn one_cluster() -> (common::Sim, String, String, String) {
    use secrecy::ExposeSecret;
    let sim = common::start_with(|c| {
        c.clusters = 1;
        c.workspaces = 1;
    })
    .await;
    let fleet = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let cluster = fleet.clusters[0].cluster.as_ref().unwrap();
    let user = fleet.auth_infos[0].auth_info.as_ref().unwrap();
    let server = cluster.server.clone().unwrap();
    let ca = cluster.certificate_authority_data.clone().unwrap();
    let token = user.token.as_ref().unwrap().expose_secret().to_string();
    (sim, server, ca, token)
}
