//! The two NATS logins a team's bus is likely to ask for, against a nats-server configured for
//! each: an nkey user (`--nats-nkey FILE`, a seed) and a decentralized JWT login
//! (`--nats-creds FILE`: an operator, an account with JetStream and a user, all made here with
//! the nkeys crate). With the right login a collector publishes and `get` reads the fleet
//! whole; with a wrong one both fail saying so, and never show a seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use common::bus::{start_collector, until_truth};
use common::nats::NatsServer;
use fluxfleet::bus;
use nkeys::KeyPair;

/// A file holding `text`, readable by its owner only (as a seed's file should be).
fn secret(dir: &Path, name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// A NATS JWT (version 2): `claims` about `subject`, signed by `issuer`.
fn jwt(issuer: &KeyPair, subject: &str, name: &str, nats: serde_json::Value) -> String {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let header = b64(br#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = serde_json::json!({
        // The server does not check it; unique is enough.
        "jti": format!("{}{now}", &subject[..8]),
        "iat": now,
        "iss": issuer.public_key(),
        "name": name,
        "sub": subject,
        "nats": nats,
    });
    let payload = b64(claims.to_string().as_bytes());
    let signed = format!("{header}.{payload}");
    let signature = issuer.sign(signed.as_bytes()).unwrap();
    format!("{signed}.{}", b64(&signature))
}

/// A credentials file's text, as `nsc` writes it.
fn creds(user_jwt: &str, seed: &str) -> String {
    format!(
        "-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n\
         -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
    )
}

/// An operator, its system account (JetStream needs one), one account with JetStream and no
/// limits, and the server's config trusting them: the account's key, and the config file.
fn operator_config(dir: &Path) -> (KeyPair, PathBuf) {
    let operator = KeyPair::new_operator();
    let system = KeyPair::new_account();
    let operator_jwt = jwt(
        &operator,
        &operator.public_key(),
        "fleet-operator",
        serde_json::json!({
            "type": "operator", "version": 2, "system_account": system.public_key(),
        }),
    );
    let system_jwt = jwt(
        &operator,
        &system.public_key(),
        "SYS",
        serde_json::json!({"type": "account", "version": 2}),
    );
    let account = KeyPair::new_account();
    let unlimited = serde_json::json!({
        "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
        "wildcards": true, "conn": -1, "leaf": -1,
        "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1,
    });
    let account_jwt = jwt(
        &operator,
        &account.public_key(),
        "fleet",
        serde_json::json!({"type": "account", "version": 2, "limits": unlimited}),
    );
    let operator_file = dir.join("operator.jwt");
    std::fs::write(&operator_file, operator_jwt).unwrap();
    let config = format!(
        "operator: \"{}\"\nsystem_account: {}\nresolver: MEMORY\nresolver_preload: {{\n  \
         {}: \"{system_jwt}\"\n  {}: \"{account_jwt}\"\n}}\n",
        operator_file.display(),
        system.public_key(),
        system.public_key(),
        account.public_key()
    );
    (account, secret(dir, "server.conf", &config))
}

/// A user of `account`, in a credentials file.
fn user_creds(dir: &Path, name: &str, account: &KeyPair) -> PathBuf {
    let user = KeyPair::new_user();
    let user_jwt = jwt(
        account,
        &user.public_key(),
        name,
        serde_json::json!({
            "type": "user", "version": 2,
            "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1,
        }),
    );
    secret(dir, name, &creds(&user_jwt, &user.seed().unwrap()))
}

/// A collector with `login` publishes the fleet, and a new reader with it reads it whole; then
/// `get` with `login_flags` on the command line reads it too.
async fn the_fleet_flows_with(nats: &NatsServer, login: bus::Options, login_flags: &[String]) {
    let sim = common::start_with(|c| {
        c.clusters = 6;
        c.workspaces = 2;
        c.objects = 5;
    })
    .await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let collector = start_collector("c1", &login, &inventory);
    let within = Duration::from_secs(60);
    until_truth("the view equals the truth", &login, &sim, &names, within).await;
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let out = common::bus::command(&kubeconfigs)
        .args(["--nats", &nats.url])
        .args(login_flags)
        .args(["get", "--summary", "-o", "json", "--timeout", "10s"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["fleet"]["clusters"], names.len(), "{summary}");
    collector.stop.cancel();
    collector.task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}

/// A reader with `login` is refused by the server, saying so, and shows no seed.
async fn refused(login: &bus::Options, seeds: &[String]) {
    let e = bus::reader::Bus::connect(login)
        .await
        .err()
        .expect("refused");
    assert!(matches!(e, bus::BusError::Refused { .. }), "{e:?}");
    let said = e.to_string();
    assert!(said.to_lowercase().contains("authoriz"), "{said}");
    for seed in seeds {
        assert!(!said.contains(seed.as_str()), "{said}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_nkey_user_collects_and_reads_and_a_stranger_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let user = KeyPair::new_user();
    let config = format!(
        "authorization {{\n  users = [\n    {{ nkey: {} }}\n  ]\n}}\n",
        user.public_key()
    );
    let config = secret(dir.path(), "server.conf", &config);
    let nats = NatsServer::start_with(&["-c", config.to_str().unwrap()]);
    let seed = user.seed().unwrap();
    let seed_file = secret(dir.path(), "user.nk", &seed);
    let login = bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        nkey: Some(seed_file.clone()),
        ..bus::Options::default()
    };

    let stranger = KeyPair::new_user().seed().unwrap();
    let stranger_file = secret(dir.path(), "stranger.nk", &stranger);
    refused(
        &bus::Options {
            nkey: Some(stranger_file),
            ..login.clone()
        },
        &[stranger],
    )
    .await;
    refused(
        &bus::Options {
            nkey: None,
            ..login.clone()
        },
        &[],
    )
    .await;

    let flags = ["--nats-nkey".to_string(), seed_file.display().to_string()];
    the_fleet_flows_with(&nats, login, &flags).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwt_user_of_an_operators_account_collects_and_reads_and_another_operators_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (account, config) = operator_config(dir.path());
    let nats = NatsServer::start_with(&["-c", config.to_str().unwrap()]);
    let creds_file = user_creds(dir.path(), "collector.creds", &account);
    let login = bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        creds: Some(creds_file.clone()),
        ..bus::Options::default()
    };

    // A user of an account this server's operator never signed.
    let elsewhere = tempfile::tempdir().unwrap();
    let (foreign, _) = operator_config(elsewhere.path());
    let foreign_creds = user_creds(elsewhere.path(), "foreign.creds", &foreign);
    let text = std::fs::read_to_string(&foreign_creds).unwrap();
    let foreign_seed = text
        .lines()
        .find(|l| l.starts_with("SU"))
        .unwrap()
        .to_string();
    refused(
        &bus::Options {
            creds: Some(foreign_creds),
            ..login.clone()
        },
        &[foreign_seed],
    )
    .await;

    let flags = ["--nats-creds".to_string(), creds_file.display().to_string()];
    the_fleet_flows_with(&nats, login, &flags).await;
}
