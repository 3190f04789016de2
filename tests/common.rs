//! Shared helpers for tests that run the simulated fleet in-process and talk to it with kube-rs.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::Path;
use std::time::Duration;

pub mod alertmanager;
pub mod bus;
pub mod doors;
pub mod freeze;
pub mod mcp;
pub mod nats;
pub mod oidc;
pub mod truth;
pub mod tui;

use fluxfleet_sim::{self as sim, Handle};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The `fluxfleet` binary as a script runs it, never with the developer's own config or
/// kubeconfig.
pub fn fluxfleet() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"));
    cmd.env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent-home")
        .kill_on_drop(true);
    cmd
}

/// A running simulation and the directory holding its kubeconfigs.
pub struct Sim {
    pub handle: Handle,
    pub dir: tempfile::TempDir,
}

/// A small, still fleet with a pinned clock, quick reconciles and frequent bookmarks.
pub fn config(dir: &Path) -> sim::Config {
    sim::Config {
        clusters: 6,
        workspaces: 2,
        objects: 30,
        seed: 7,
        out: dir.to_path_buf(),
        reconcile_delay: Duration::from_millis(100),
        bookmark_interval: Duration::from_millis(200),
        epoch: Some(1_790_000_000),
        ..sim::Config::default()
    }
}

impl Sim {
    /// The names of the clusters Flux runs on (not the management cluster), sorted.
    pub fn workload_clusters(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .handle
            .truth()
            .iter()
            .filter(|c| !c.management)
            .map(|c| c.name.clone())
            .collect();
        names.sort();
        names
    }
}

pub async fn start_with(tweak: impl FnOnce(&mut sim::Config)) -> Sim {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(dir.path());
    tweak(&mut cfg);
    let handle = sim::start(cfg).await.expect("sim starts");
    Sim { handle, dir }
}

pub async fn start() -> Sim {
    start_with(|_| {}).await
}

/// A kube client for one context of a kubeconfig file, as any kube-rs program would build it.
pub async fn client(kubeconfig: &Path, context: &str) -> Client {
    let kc = Kubeconfig::read_from(kubeconfig).expect("kubeconfig parses");
    client_from(kc, context).await
}

pub async fn client_from(kc: Kubeconfig, context: &str) -> Client {
    let opts = KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(kc, &opts)
        .await
        .expect("kube config");
    // kube retries 429/503/504 up to 15 times with exponential backoff (minutes): tests want
    // to see the server's answer, as fluxfleet's engine will.
    config.default_retry = false;
    Client::try_from(config).expect("kube client")
}

/// The first workload cluster's name and an admin client for it.
pub async fn first_cluster(sim: &Sim) -> (String, Client) {
    let name = sim.handle.cluster_names()[0].clone();
    let client = client(&sim.handle.files.fleet, &name).await;
    (name, client)
}

/// The resource of a Flux kind at a version.
pub fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

pub fn kustomizations() -> ApiResource {
    resource(
        "kustomize.toolkit.fluxcd.io",
        "v1",
        "Kustomization",
        "kustomizations",
    )
}

pub fn helmreleases() -> ApiResource {
    resource(
        "helm.toolkit.fluxcd.io",
        "v2",
        "HelmRelease",
        "helmreleases",
    )
}

pub fn api(client: &Client, ar: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    }
}

/// The first workload cluster whose truth satisfies `pred`.
pub fn cluster_where(sim: &Sim, pred: impl Fn(&sim::TruthCluster) -> bool) -> String {
    sim.handle
        .truth()
        .into_iter()
        .find(|c| !c.management && pred(c))
        .map(|c| c.name)
        .expect("a matching cluster")
}

/// Waits (bounded) for a condition on the simulator's truth or an API read.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut delay = Duration::from_millis(10);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        // Polling interval, not synchronisation: the check above decides.
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(200));
    }
}

/// The status code of a kube API error.
pub fn api_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// How to reach workload cluster `name` as its admin: server, CA data and token.
pub fn admin(sim: &Sim, name: &str) -> (String, String, String) {
    use secrecy::ExposeSecret;
    let fleet = Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let ctx = fleet.contexts.iter().find(|c| c.name == name).unwrap();
    let ctx = ctx.context.as_ref().unwrap();
    let cluster = fleet
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .unwrap();
    let cluster = cluster.cluster.as_ref().unwrap();
    let user = fleet
        .auth_infos
        .iter()
        .find(|u| Some(&u.name) == ctx.user.as_ref())
        .unwrap();
    let token = user.auth_info.as_ref().unwrap().token.as_ref().unwrap();
    (
        cluster.server.clone().unwrap(),
        cluster.certificate_authority_data.clone().unwrap(),
        token.expose_secret().to_string(),
    )
}

/// The fleet of one kubeconfig file, loaded cleanly and watched until every cluster answered.
pub async fn settled(kubeconfig: &Path) -> fluxfleet::session::Session {
    use fluxfleet::config::Config;
    let inv = fluxfleet::inventory::load(
        &fluxfleet::inventory::Lookup {
            kubeconfigs: vec![kubeconfig.to_path_buf()],
            ..Default::default()
        },
        &Config::defaults(),
    );
    assert_eq!(inv.problems, []);
    let mut live = fluxfleet::session::Session::kube(&inv, &Config::defaults().engine);
    assert!(live.settle(Duration::from_secs(20)).await);
    live
}

/// The tests that run a large simulated fleet in this process (hundreds to 10,000 clusters) take
/// turns: they share one test binary (`tests/local.rs`) with each other, and two of them on two
/// cores starve both of the time their deadlines allow. Quick tests run beside them.
pub async fn one_large_fleet_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LARGE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LARGE.lock().await
}

/// Asks the process `pid` to stop, as a service manager does (SIGTERM).
pub fn terminate(pid: Option<u32>) {
    let pid = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32));
    rustix::process::kill_process(
        pid.expect("a running process"),
        rustix::process::Signal::TERM,
    )
    .unwrap();
}

/// Engine settings for tests: every Flux kind, quick timeouts and retries.
pub fn engine_settings() -> fluxfleet::config::EngineSection {
    let mut engine = fluxfleet::config::Config::defaults().engine;
    engine.kinds = fluxfleet::fleet::FluxKind::ALL.to_vec();
    engine.connect_timeout = Duration::from_secs(3);
    engine.max_backoff = Duration::from_secs(1);
    engine
}

/// The simulated fleet's kubeconfig directory as an inventory.
pub fn fleet_of(sim: &Sim) -> fluxfleet::inventory::Inventory {
    let request = fluxfleet::inventory::Lookup {
        dirs: vec![sim.dir.path().join("kubeconfigs")],
        ..fluxfleet::inventory::Lookup::default()
    };
    let inventory = fluxfleet::inventory::load(&request, &fluxfleet::config::Config::defaults());
    assert_eq!(inventory.problems, []);
    inventory
}

/// Applies events until `wrong` finds nothing wrong, or fails with what it last said after
/// `within`.
pub async fn until(
    live: &mut fluxfleet::session::Session,
    within: Duration,
    mut wrong: impl FnMut(&fluxfleet::session::Session) -> Option<String>,
) {
    let deadline = std::time::Instant::now() + within;
    loop {
        live.pump(Duration::from_millis(100)).await;
        let Some(why) = wrong(live) else { return };
        assert!(std::time::Instant::now() < deadline, "{why}");
    }
}

/// The simulator's truth of its workload clusters (the management cluster left out).
pub fn workloads(sim: &Sim) -> Vec<sim::TruthCluster> {
    sim.handle
        .truth()
        .into_iter()
        .filter(|c| !c.management)
        .collect()
}

/// One object's copy on every workload cluster that has it: cluster, workspace and the copy.
pub fn copies_of(
    sim: &Sim,
    (kind, namespace, name): (&str, &str, &str),
) -> Vec<(String, String, sim::TruthObject)> {
    workloads(sim)
        .into_iter()
        .filter_map(|c| {
            let o = c
                .objects
                .into_iter()
                .find(|o| o.kind == kind && o.namespace == namespace && o.name == name)?;
            Some((c.name, c.workspace, o))
        })
        .collect()
}

/// What `get --root-causes -o json` printed, the suspects left out (they weigh the ready copies
/// of a failure, which a summarized cluster does not hold); it must have exited 0.
pub fn root_causes_without_suspects(out: &std::process::Output, what: &str) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for cause in doc["rootCauses"].as_array_mut().unwrap() {
        cause.as_object_mut().unwrap().remove("suspect");
    }
    doc
}

/// A CA and a server certificate for `127.0.0.1` and `localhost` signed by it, written to `dir`
/// as `ca.pem`, `server.pem` and `server.key`; the CA's PEM.
pub fn server_certificate(dir: &Path) -> String {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    std::fs::write(dir.join("server.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
    ca.pem()
}

/// The documents of a manifest in `config/deploy/`, and its Deployment's first container's
/// arguments as a command line (`fluxfleet ARGS`, `$(POD_NAME)` given `pod`).
pub fn manifest(name: &str, pod: &str) -> (Vec<serde_json::Value>, Vec<String>) {
    let path = format!("{}/config/deploy/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let docs: Vec<serde_json::Value> = text
        .split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect();
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let mut args = vec!["fluxfleet".to_string()];
    for a in container["args"].as_array().unwrap() {
        // Kubernetes puts the pod's name where the manifest says $(POD_NAME).
        args.push(a.as_str().unwrap().replace("$(POD_NAME)", pod));
    }
    (docs, args)
}
