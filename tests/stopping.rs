//! Told to stop, it stops: every long-running command ends within `--shutdown-timeout` after
//! SIGTERM whatever its bus or Alertmanager is doing — a NATS that stopped answering in the
//! middle of a publish, a nats-server killed at the moment of the signal, an Alertmanager that
//! hangs — says so in a line, and a second signal ends it at once (exit 143). With a bus that
//! answers, a collector withdraws its announcement before it exits.
//!
//! The bounds below are not measures of speed: each is the command's own deadline plus a wide
//! margin, and the failure they catch is a process that does not end at all (before this, a
//! collector waiting on a silent bus ran until SIGKILL).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::freeze::Freezer;
use common::nats::NatsServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Far more than any deadline given below: a command not ended by then never would be.
const NEVER: Duration = Duration::from_secs(60);

fn fluxfleet(sim: &common::Sim, url: &str) -> Command {
    let mut cmd = common::bus::command(&sim.dir.path().join("kubeconfigs"));
    cmd.args(["--nats", url]);
    cmd.stderr(Stdio::piped()).stdout(Stdio::null());
    cmd
}

/// A collector through `url`, stopping within `deadline`.
fn collector(sim: &common::Sim, url: &str, id: &str, deadline: &str) -> Child {
    fluxfleet(sim, url)
        .args([
            "collect",
            "--id",
            id,
            "--ttl",
            "6s",
            "--ring-metrics-every",
            "0s",
        ])
        .args(["--shutdown-timeout", deadline])
        .spawn()
        .unwrap()
}

fn options(nats: &NatsServer) -> fluxfleet::bus::Options {
    fluxfleet::bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        ..Default::default()
    }
}

/// Waits until collector `id` has published every cluster of `sim` to the bus.
async fn published(nats: &NatsServer, sim: &common::Sim, id: &str) {
    let options = options(nats);
    let names = sim.handle.cluster_names().len();
    common::bus::until("the collector publishes the fleet", NEVER, || {
        let options = options.clone();
        async move {
            // Nothing to read before the collector made the stores.
            let client = match fluxfleet::bus::connect(&options, "test").await {
                Ok(client) => client,
                Err(e) => return Some(e.to_string()),
            };
            if let Err(e) = fluxfleet::bus::open(client, &options, None).await {
                return Some(e.to_string());
            }
            let states = common::bus::collectors(&options).await;
            let mine = states.values().filter(|s| s.collector == id).count();
            (mine < names).then(|| format!("{mine} of {names} clusters published"))
        }
    })
    .await;
}

/// Sends SIGTERM to `child`; its exit status once it ends (failing when it never does) and
/// what it said on stderr.
async fn stopped(child: &mut Child) -> (std::process::ExitStatus, String) {
    let stderr = child.stderr.take().unwrap();
    let said = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        let mut said = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            said.push(line);
        }
        said.join("\n")
    });
    common::terminate(child.id());
    let status = tokio::time::timeout(NEVER, child.wait())
        .await
        .expect("it ends once told to stop")
        .unwrap();
    (status, said.await.unwrap())
}

/// The first line of `lines` holding `needle`; fails when they end or never hold one.
async fn line_with<R>(lines: &mut tokio::io::Lines<R>, needle: &str) -> String
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let found = tokio::time::timeout(NEVER, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains(needle) {
                return Some(line);
            }
        }
        None
    });
    match found.await {
        Ok(Some(line)) => line,
        Ok(None) => panic!("it ended without saying {needle:?}"),
        Err(_) => panic!("nothing said {needle:?} within {NEVER:?}"),
    }
}

async fn announced(nats: &NatsServer) -> std::collections::BTreeSet<String> {
    let options = options(nats);
    let client = fluxfleet::bus::connect(&options, "test").await.unwrap();
    let stores = fluxfleet::bus::open(client, &options, None).await.unwrap();
    fluxfleet::bus::collectors_alive(&stores.collectors)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_whose_bus_stops_answering_mid_publish_stops_within_its_deadline() {
    let nats = NatsServer::start();
    let sim = common::start().await;
    let relay = Freezer::start(&nats.url).await;
    let mut child = collector(&sim, &relay.url("nats"), "quiet", "3s");
    published(&nats, &sim, "quiet").await;
    // The bus goes quiet while the fleet keeps changing: publishes are in flight.
    relay.freeze();
    let (status, said) = stopped(&mut child).await;
    assert!(
        status.code().is_some(),
        "it ended by itself: {status}\n{said}"
    );
    assert!(said.contains("SIGTERM: stopping (within 3s"), "{said}");
    // What it could not do in time is said, not waited for.
    assert!(
        said.contains("abandon") || said.contains("after --ttl"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_stops_at_once() {
    let nats = NatsServer::start();
    let sim = common::start().await;
    let relay = Freezer::start(&nats.url).await;
    // Ten minutes to stop: only the second signal can end it sooner.
    let mut child = collector(&sim, &relay.url("nats"), "twice", "10m");
    published(&nats, &sim, "twice").await;
    relay.freeze();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    common::terminate(child.id());
    // Once it says it is stopping, the second.
    let stopping = line_with(&mut lines, "stopping").await;
    assert!(
        stopping.contains("a second signal stops at once"),
        "{stopping}"
    );
    common::terminate(child.id());
    let status = tokio::time::timeout(NEVER, child.wait())
        .await
        .expect("the second signal ends it")
        .unwrap();
    assert_eq!(status.code(), Some(143), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_withdraws_its_announcement_when_the_bus_answers() {
    let nats = NatsServer::start();
    let sim = common::start().await;
    let mut child = collector(&sim, &nats.url, "polite", "20s");
    published(&nats, &sim, "polite").await;
    assert!(announced(&nats).await.contains("polite"));
    let (status, said) = stopped(&mut child).await;
    assert!(status.success(), "{status}\n{said}");
    assert!(!said.contains("abandon"), "{said}");
    // Gone at once, not when its announcement would have lapsed.
    assert!(!announced(&nats).await.contains("polite"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_stops_in_time_when_its_nats_server_dies_with_the_signal() {
    let sim = common::start().await;
    for round in 0..4 {
        let nats = NatsServer::start();
        let id = format!("round-{round}");
        let mut child = collector(&sim, &nats.url, &id, "3s");
        published(&nats, &sim, &id).await;
        // The bus and the collector are stopped together, as at the end of a soak or a node
        // drained.
        drop(nats);
        let (status, said) = stopped(&mut child).await;
        assert!(
            status.code().is_some(),
            "round {round}: it ended by itself: {status}\n{said}"
        );
        assert!(said.contains("SIGTERM: stopping"), "round {round}: {said}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followers_of_a_bus_that_went_quiet_stop_within_their_deadline() {
    let nats = NatsServer::start();
    let sim = common::start().await;
    let mut collecting = collector(&sim, &nats.url, "source", "20s");
    published(&nats, &sim, "source").await;
    let relay = Freezer::start(&nats.url).await;
    let url = relay.url("nats");
    // Each follows the bus through the relay, then the bus goes quiet under them.
    let mut watching = fluxfleet(&sim, &url)
        .args([
            "get",
            "ks",
            "--watch",
            "-o",
            "ndjson",
            "--shutdown-timeout",
            "3s",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Its first line: it reads the bus.
    let mut out = BufReader::new(watching.stdout.take().unwrap()).lines();
    tokio::time::timeout(NEVER, out.next_line())
        .await
        .expect("get --watch writes the fleet")
        .unwrap();
    let token = sim.dir.path().join("token");
    std::fs::write(&token, "a-token-of-sixteen-or-more\n").unwrap();
    let mut serving = fluxfleet(&sim, &url)
        .args(["mcp", "--listen", "127.0.0.1:0", "--shutdown-timeout", "3s"])
        .arg("--token-file")
        .arg(&token)
        .spawn()
        .unwrap();
    let stderr = serving.stderr.take().unwrap();
    let mut said = BufReader::new(stderr).lines();
    line_with(&mut said, "serving MCP").await;
    serving.stderr = None;
    relay.freeze();
    for (name, child) in [
        ("get --watch", &mut watching),
        ("mcp --listen", &mut serving),
    ] {
        common::terminate(child.id());
        let status = tokio::time::timeout(NEVER, child.wait())
            .await
            .unwrap_or_else(|_| panic!("{name} ends once told to stop"))
            .unwrap();
        assert!(status.code().is_some(), "{name}: {status}");
    }
    let (status, said) = stopped(&mut collecting).await;
    assert!(status.success(), "{status}\n{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alert_stops_within_its_deadline_when_alertmanager_hangs() {
    // An Alertmanager that takes connections and never answers.
    let hanging = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = hanging.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((conn, _)) = hanging.accept().await {
            open.push(conn);
        }
    });
    let sim = common::start().await;
    let mut child = common::fluxfleet()
        .arg("--kubeconfig-dir")
        .arg(sim.dir.path().join("kubeconfigs"))
        .args(["alert", "--alertmanager", &format!("http://{at}")])
        .args(["--every", "1s", "--for", "0s", "--shutdown-timeout", "3s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Once an alert fires, it is being posted into the silence.
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    line_with(&mut out, " firing ").await;
    common::terminate(child.id());
    let status = tokio::time::timeout(NEVER, child.wait())
        .await
        .expect("alert ends once told to stop")
        .unwrap();
    assert!(status.success(), "{status}");
    held.abort();
}
