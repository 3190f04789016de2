//! The fleet engine against the simulated fleet, over real HTTPS: states per fault, the picture
//! equal to the simulator's truth, recovery from 410 storms and dropped connections, and one
//! connection per cluster.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use crate::harness as chaos;

use std::time::Duration;

use fluxfleet::config::Config;
use fluxfleet::fleet::{FluxKind, Index, Phase};
use fluxfleet::inventory;
use fluxfleet::session::Session;
use fluxfleet_sim::Faults;

use common::Sim;

use common::{engine_settings as settings, fleet_of};

/// Applies events until the index shows exactly the truth, or fails with the difference.
pub(crate) async fn until_truth(live: &mut Session, sim: &Sim, within: Duration) {
    let deadline = std::time::Instant::now() + within;
    loop {
        live.pump(Duration::from_millis(200)).await;
        let report = chaos::difference(&live.index, &sim.handle);
        if report.exact() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the index never matched the simulator's truth: {report:#?}"
        );
    }
}

fn phase_of(index: &Index, cluster: &str) -> Phase {
    index.cluster_named(cluster).unwrap().connection.phase
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_faulty_cluster_ends_in_the_right_state_with_a_useful_message() {
    let sim = common::start_with(|c| {
        c.clusters = 10;
        c.faults = fluxfleet_sim::faults::Spec::parse(
            "unreachable=1%,no-flux=1%,old-flux=1%:2.0,expired-token=1%:0s,error5xx=1%:100%,slow=1%:10s,forbidden=1%",
        )
        .unwrap();
    })
    .await;
    let mut live = Session::kube(&fleet_of(&sim), &settings());
    assert!(
        live.settle(Duration::from_secs(20)).await,
        "every cluster answers"
    );
    let expected = [
        ("unreachable", Phase::Unreachable, "refused"),
        (
            "no-flux",
            Phase::FluxNotInstalled,
            "none of the watched Flux kinds",
        ),
        ("expired-token", Phase::Unauthorized, "401 Unauthorized"),
        ("error5xx", Phase::ServerError, "503 Service Unavailable"),
        ("slow", Phase::TimedOut, "no answer within 3s"),
        ("old-flux", Phase::Live, ""),
        (
            "forbidden",
            Phase::Live,
            "forbidden to list HelmRelease; the other kinds are visible",
        ),
    ];
    let truth = sim.handle.truth();
    for (fault, phase, text) in expected {
        let cluster = truth
            .iter()
            .find(|c| c.faults.iter().any(|f| f.starts_with(fault)))
            .unwrap();
        // A failing cluster retries, and shows `Connecting` while it does: look while it is
        // in the state its fault leads to.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while live
            .index
            .cluster_named(&cluster.name)
            .unwrap()
            .connection
            .phase
            != phase
            && std::time::Instant::now() < deadline
        {
            live.pump(Duration::from_millis(50)).await;
        }
        let entry = live.index.cluster_named(&cluster.name).unwrap();
        let conn = &entry.connection;
        // A 503 on one request can also surface as a failed watch; both are server errors.
        assert_eq!(conn.phase, phase, "{fault}: {conn:?}");
        let error = conn.error.as_deref().unwrap_or("");
        assert!(error.contains(text), "{fault}: {error:?} lacks {text:?}");
        if phase != Phase::Live {
            assert!(conn.retry_at.is_some(), "{fault}: a retry is scheduled");
            assert!(entry.objects.is_empty(), "{fault}: nothing shown");
        }
    }
    // The old-Flux cluster shows its HelmReleases, watched at the version it serves.
    let old = truth
        .iter()
        .find(|c| c.faults.iter().any(|f| f.starts_with("old-flux")))
        .unwrap();
    let entry = live.index.cluster_named(&old.name).unwrap();
    let hr_version = entry
        .connection
        .watching
        .iter()
        .find(|s| s.kind == FluxKind::HelmRelease)
        .map(|s| s.version.to_string());
    assert_eq!(hr_version.as_deref(), Some("v2beta1"));
    let releases = entry
        .objects
        .keys()
        .filter(|k| k.kind == FluxKind::HelmRelease)
        .count();
    let truth_releases = old
        .objects
        .iter()
        .filter(|o| o.kind == "HelmRelease")
        .count();
    assert!(releases > 0);
    assert_eq!(releases, truth_releases);
    // A kind RBAC forbids is named as such; every other kind is still shown, complete.
    let limited = truth
        .iter()
        .find(|c| c.faults.iter().any(|f| f.starts_with("forbidden")))
        .unwrap();
    let entry = live.index.cluster_named(&limited.name).unwrap();
    assert_eq!(&*entry.connection.forbidden, [FluxKind::HelmRelease]);
    let shown = entry.objects.len();
    let visible = limited
        .objects
        .iter()
        .filter(|o| o.kind != "HelmRelease")
        .count();
    assert!(
        limited.objects.len() > visible,
        "the cluster has HelmReleases"
    );
    assert_eq!(shown, visible);
    // Healthy clusters are live and complete.
    for c in truth
        .iter()
        .filter(|c| !c.management && c.faults.is_empty())
    {
        assert_eq!(phase_of(&live.index, &c.name), Phase::Live, "{}", c.name);
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_churn_stops_the_index_equals_the_truth() {
    let sim = common::start_with(|c| {
        c.clusters = 8;
        c.churn = 40.0;
        c.rollout_interval = Duration::from_millis(700);
        c.rollout_step = Duration::from_millis(100);
    })
    .await;
    // Small pages: every list is paginated with continue tokens while objects change.
    let mut paged = settings();
    paged.chunk_size = 4;
    paged.streaming_lists = false;
    let mut live = Session::kube(&fleet_of(&sim), &paged);
    assert!(live.settle(Duration::from_secs(20)).await);
    live.pump(Duration::from_secs(2)).await;
    sim.handle.set_churn(0.0);
    until_truth(&mut live, &sim, Duration::from_secs(20)).await;
    let stats = sim.handle.stats();
    for name in sim.handle.cluster_names() {
        let lists = stats["clusters"][&name]["list"].as_u64().unwrap();
        assert!(
            lists > FluxKind::ALL.len() as u64,
            "{name}: {lists} list requests"
        );
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_storm_and_dropped_connections_lose_and_duplicate_nothing() {
    let sim = common::start_with(|c| {
        c.clusters = 6;
        c.churn = 30.0;
        c.history = 20;
    })
    .await;
    let names = sim.handle.cluster_names();
    let mut live = Session::kube(&fleet_of(&sim), &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    let lists = |sim: &Sim| -> u64 {
        let stats = sim.handle.stats();
        names
            .iter()
            .map(|n| {
                let cluster = &stats["clusters"][n];
                cluster["list"].as_u64().unwrap() + cluster["streamed"].as_u64().unwrap()
            })
            .sum()
    };
    let before = lists(&sim);
    // Watches are cut every 300 ms on two clusters; every cluster's history is forgotten
    // repeatedly, so every watch gets 410 Gone and relists while objects keep changing.
    for name in &names[..2] {
        sim.handle.set_faults(
            name,
            Faults {
                flap: Some(Duration::from_millis(300)),
                ..Faults::default()
            },
        );
    }
    for _ in 0..6 {
        for name in &names {
            sim.handle.compact(name);
        }
        live.pump(Duration::from_millis(250)).await;
    }
    for name in &names[..2] {
        sim.handle.set_faults(name, Faults::default());
    }
    sim.handle.set_churn(0.0);
    until_truth(&mut live, &sim, Duration::from_secs(25)).await;
    // Every watch of every cluster really was sent back to list again (by streaming).
    let relists = lists(&sim) - before;
    assert!(
        relists >= (names.len() * 15) as u64,
        "only {relists} relists"
    );
    // Watches cut just before the flapping stopped are re-opened after a short backoff.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while names
        .iter()
        .any(|n| phase_of(&live.index, n) != Phase::Live)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "not live again: {:?}",
            names
                .iter()
                .map(|n| (n, phase_of(&live.index, n)))
                .collect::<Vec<_>>()
        );
        live.pump(Duration::from_millis(200)).await;
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_watches_of_a_cluster_share_one_connection() {
    let sim = common::start_with(|c| c.clusters = 5).await;
    let inventory = fleet_of(&sim);
    let mut live = Session::kube(&inventory, &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    for c in live.index.clusters() {
        assert_eq!(c.connection.phase, Phase::Live);
        assert_eq!(c.connection.protocol, Some("HTTP/2"));
        assert!(c.connection.watching.len() >= 7);
    }
    // Live means every kind's watch is open, not merely listed; where the Flux Operator runs,
    // its FluxReport is watched too once read (on the same connection).
    let stats = sim.handle.stats();
    for c in live.index.clusters() {
        let open = stats["clusters"][&c.info.name]["openWatches"]
            .as_u64()
            .unwrap();
        let kinds = c.connection.watching.len() as u64;
        let report = u64::from(c.report.is_some());
        assert!(open >= kinds && open <= kinds + report, "{stats:#}");
    }
    let n = inventory.clusters.len() as u64;
    // Never more than one connection per cluster, not even briefly at start.
    assert_eq!(stats["connectionsTotal"].as_u64(), Some(n), "{stats:#}");
    assert_eq!(stats["h2ConnectionsOpen"].as_u64(), Some(n), "{stats:#}");
    assert_eq!(stats["http1ConnectionsOpen"].as_u64(), Some(0), "{stats:#}");
    for c in &inventory.clusters {
        assert_eq!(
            stats["clusters"][&c.name]["connections"].as_u64(),
            Some(1),
            "{}",
            c.name
        );
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_asks_once_where_aggregated_and_group_by_group_on_an_older_kubernetes() {
    // Eight clusters: half on a Kubernetes before aggregated discovery, six on Flux 2.0
    // (HelmRelease at v2beta1), so that each way of asking meets each Flux (aggregated
    // discovery of the latest Flux is what every other test's fleet does).
    let sim = common::start_with(|c| {
        c.clusters = 8;
        c.faults = fluxfleet_sim::faults::Spec::parse("old-kube=50%,old-flux=75%:2.0").unwrap();
    })
    .await;
    let mut live = Session::kube(&fleet_of(&sim), &settings());
    until_truth(&mut live, &sim, Duration::from_secs(20)).await;
    let stats = sim.handle.stats();
    let truth = sim.handle.truth();
    let mut seen = std::collections::BTreeSet::new();
    for cluster in &truth {
        let old_kube = cluster.faults.iter().any(|f| f == "old-kube");
        let old_flux = cluster.faults.iter().any(|f| f.starts_with("old-flux"));
        // The simulator's management cluster is not in the fleet.
        let Some(entry) = live.index.cluster_named(&cluster.name) else {
            continue;
        };
        seen.insert((old_kube, old_flux));
        assert_eq!(entry.connection.phase, Phase::Live);
        let asked = stats["clusters"][&cluster.name]["discovery"]
            .as_u64()
            .unwrap();
        if old_kube {
            assert!(
                asked > 2,
                "{}: /apis, then each group version",
                cluster.name
            );
        } else {
            assert_eq!(asked, 1, "{}: one aggregated answer", cluster.name);
        }
    }
    assert_eq!(seen.len(), 3, "every combination met: {seen:?}");
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_without_http2_are_watched_over_http1() {
    let sim = common::start_with(|c| {
        c.clusters = 3;
        c.http1_only = true;
    })
    .await;
    let inventory = fleet_of(&sim);
    let mut live = Session::kube(&inventory, &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    let mut watches = 0;
    for c in live.index.clusters() {
        assert_eq!(c.connection.phase, Phase::Live, "{:?}", c.connection);
        assert_eq!(c.connection.protocol, Some("HTTP/1.1"));
        watches += c.connection.watching.len() as u64;
    }
    until_truth(&mut live, &sim, Duration::from_secs(10)).await;
    // HTTP/1.1 cannot multiplex: one connection per open watch, and none of them h2.
    let stats = sim.handle.stats();
    assert_eq!(stats["h2ConnectionsOpen"].as_u64(), Some(0), "{stats:#}");
    assert!(
        stats["http1ConnectionsOpen"].as_u64() >= Some(watches),
        "{stats:#}"
    );
    live.shutdown().await;
    sim.handle.shutdown().await;
}

/// A minimal HTTP CONNECT proxy on localhost; counts the tunnels it opened.
async fn connect_proxy() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let tunnels = Arc::new(AtomicUsize::new(0));
    let counted = tunnels.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read_exact(&mut byte).await.is_err() {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let mut words = head.split_whitespace();
                if words.next() != Some("CONNECT") {
                    let _ = client
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                        .await;
                    return;
                }
                let target = words.next().unwrap_or_default().to_string();
                let Ok(mut upstream) = tokio::net::TcpStream::connect(&target).await else {
                    let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                    return;
                };
                let _ = client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (url, tunnels)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_behind_a_proxy_url_are_reached_through_it() {
    let sim = common::start_with(|c| c.clusters = 3).await;
    let (proxy, tunnels) = connect_proxy().await;
    // The same kubeconfigs, each cluster with `proxy-url` pointing at the proxy.
    let proxied = tempfile::tempdir().unwrap();
    let mut files = 0;
    for entry in walk(&sim.dir.path().join("kubeconfigs")) {
        let text = std::fs::read_to_string(&entry).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            out.push_str(line);
            out.push('\n');
            if line.trim_start().starts_with("server: ") {
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(&format!("{indent}proxy-url: {proxy}\n"));
            }
        }
        files += 1;
        std::fs::write(proxied.path().join(format!("{files}.yaml")), out).unwrap();
    }
    let request = inventory::Lookup {
        dirs: vec![proxied.path().to_path_buf()],
        ..inventory::Lookup::default()
    };
    let inventory = inventory::load(&request, &Config::defaults());
    assert_eq!(inventory.problems, []);
    let mut live = Session::kube(&inventory, &settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    until_truth(&mut live, &sim, Duration::from_secs(10)).await;
    for c in live.index.clusters() {
        assert_eq!(c.connection.phase, Phase::Live, "{:?}", c.connection);
    }
    // One tunnel per cluster (HTTP/2 inside it), and no connection that bypassed the proxy.
    let n = inventory.clusters.len();
    assert_eq!(tunnels.load(std::sync::atomic::Ordering::SeqCst), n);
    let stats = sim.handle.stats();
    assert_eq!(
        stats["connectionsTotal"].as_u64(),
        Some(n as u64),
        "{stats:#}"
    );
    live.shutdown().await;
    sim.handle.shutdown().await;
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A server that turns away a third of all requests (API Priority and Fairness under load):
/// its reads are retried, one kind's trouble never restarts the others, and every such cluster
/// shows all of its objects within 30 s — with the default backoff, not a test's short one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_whose_server_turns_away_a_third_of_requests_are_complete_within_30s() {
    let sim = common::start_with(|c| {
        c.clusters = 12;
        c.faults = fluxfleet_sim::faults::Spec::parse("error5xx=50%:30%").unwrap();
    })
    .await;
    let flaky = sim
        .handle
        .truth()
        .iter()
        .filter(|c| c.faults.iter().any(|f| f.starts_with("error5xx")))
        .count();
    assert!(flaky >= 3, "{flaky} flaky clusters");
    let mut engine = Config::defaults().engine;
    engine.kinds = FluxKind::ALL.to_vec();
    let mut live = Session::kube(&fleet_of(&sim), &engine);
    until_truth(&mut live, &sim, Duration::from_secs(30)).await;
    live.shutdown().await;
    sim.handle.shutdown().await;
}
