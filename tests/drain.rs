//! A server going away, seen at once (issue 79): a server told to stop sends GOAWAY and keeps
//! its open streams for a minute, and a hung one answers nothing while its TCP stays open. The
//! engine moves a cluster's watches to a new connection at the GOAWAY — nothing missed, the
//! cluster live where another replica answers, not live within seconds where none does — and
//! finds a silent connection by its unanswered ping.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::harness as chaos;

use std::time::{Duration, Instant};

use fluxfleet::fleet::{Index, Phase};
use fluxfleet::session::Session;
use fluxfleet_sim::Faults;
use fluxfleet_sim::facts::{FluxKind, Health};

use common::{Sim, engine_settings, fleet_of};

fn phase_of(index: &Index, cluster: &str) -> Phase {
    index.cluster_named(cluster).unwrap().connection.phase
}

/// A cluster's counter in the simulator's stats.
fn stat(sim: &Sim, cluster: &str, what: &str) -> u64 {
    sim.handle.stats()["clusters"][cluster][what]
        .as_u64()
        .unwrap()
}

/// Applies events until `done`, asserting after each batch that `cluster` is still live; fails
/// after `within` (a test timeout, not a measurement).
async fn live_until(
    live: &mut Session,
    cluster: &str,
    within: Duration,
    what: &str,
    mut done: impl FnMut(&Session) -> bool,
) {
    let deadline = Instant::now() + within;
    while !done(live) {
        assert!(Instant::now() < deadline, "never: {what}");
        live.pump(Duration::from_millis(50)).await;
        let connection = &live.index.cluster_named(cluster).unwrap().connection;
        assert_eq!(connection.phase, Phase::Live, "{what}: {connection:?}");
    }
}

/// Applies events until `cluster` is no longer live; how long that took. Fails after `within`.
async fn until_not_live(live: &mut Session, cluster: &str, within: Duration) -> Duration {
    let started = Instant::now();
    while phase_of(&live.index, cluster) == Phase::Live {
        assert!(
            started.elapsed() < within,
            "{cluster} still live after {within:?}"
        );
        live.pump(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

/// Applies events until `cluster` is live again (after its fault was lifted).
async fn until_live(live: &mut Session, cluster: &str, within: Duration) {
    let started = Instant::now();
    while phase_of(&live.index, cluster) != Phase::Live {
        let connection = &live.index.cluster_named(cluster).unwrap().connection;
        assert!(started.elapsed() < within, "not live again: {connection:?}");
        live.pump(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_goaway_with_another_replica_answering_the_watches_move_and_nothing_is_missed() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let mut live = Session::kube(&fleet_of(&sim), &engine_settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    let cluster = sim.handle.cluster_names()[0].clone();
    let kinds = live
        .index
        .cluster_named(&cluster)
        .unwrap()
        .connection
        .watching
        .len() as u64;
    let connections = stat(&sim, &cluster, "connectionsTotal");
    assert_eq!(stat(&sim, &cluster, "connections"), 1);

    // A replica behind the load balancer goes away: GOAWAY, its streams kept for a minute,
    // new connections served by another.
    let handover = Faults {
        handover: Some(Duration::from_secs(60)),
        ..Faults::default()
    };
    sim.handle.set_faults(&cluster, handover);
    live_until(
        &mut live,
        &cluster,
        Duration::from_secs(10),
        "the GOAWAY",
        |_| stat(&sim, &cluster, "goaways") == 1,
    )
    .await;

    // A change made after the GOAWAY is seen.
    let truth = sim.handle.truth();
    let ready = truth
        .iter()
        .find(|c| c.name == cluster)
        .unwrap()
        .objects
        .iter()
        .find(|o| o.kind == "Kustomization" && o.health == Health::Ready)
        .unwrap()
        .clone();
    assert!(sim.handle.set_ready(
        &cluster,
        FluxKind::Kustomization,
        &ready.namespace,
        &ready.name,
        false
    ));
    live_until(
        &mut live,
        &cluster,
        Duration::from_secs(20),
        "the index equal to the truth",
        |live| sim.handle.quiet() && chaos::difference(&live.index, &sim.handle).exact(),
    )
    .await;
    let shown = live.index.cluster_named(&cluster).unwrap();
    let broken = shown
        .objects
        .iter()
        .find(|(k, _)| k.name.as_ref() == ready.name && k.namespace.as_ref() == ready.namespace)
        .unwrap();
    assert!(broken.1.health.is_failing(), "{:?}", broken.1);

    // The watches are on a new connection, and the old one was let go long before its server
    // would have closed it.
    live_until(
        &mut live,
        &cluster,
        Duration::from_secs(20),
        "one connection, the new one",
        |_| {
            stat(&sim, &cluster, "connections") == 1
                && stat(&sim, &cluster, "connectionsTotal") == connections + 1
        },
    )
    .await;
    assert!(stat(&sim, &cluster, "openWatches") >= kinds);
    let connection = &live.index.cluster_named(&cluster).unwrap().connection;
    assert_eq!(
        connection.restarts, 0,
        "a move is no restart: {connection:?}"
    );
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_told_to_stop_is_not_live_within_seconds_of_its_goaway() {
    // Each cluster on a port of its own, so that a draining server's port is really closed.
    let sim = common::start_with(|c| {
        c.clusters = 2;
        c.port_per_cluster = true;
    })
    .await;
    let mut live = Session::kube(&fleet_of(&sim), &engine_settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    let cluster = sim.handle.cluster_names()[0].clone();
    let drain = Faults {
        drain: Some(Duration::from_secs(60)),
        ..Faults::default()
    };
    sim.handle.set_faults(&cluster, drain);
    // Its streams would stay open for a minute: the cluster is not live long before.
    let took = until_not_live(&mut live, &cluster, Duration::from_secs(5)).await;
    eprintln!("not live {took:?} after the GOAWAY");
    let connection = &live.index.cluster_named(&cluster).unwrap().connection;
    assert_eq!(connection.phase, Phase::Unreachable, "{connection:?}");
    let error = connection.error.as_deref().unwrap_or_default();
    assert!(error.contains("GOAWAY"), "{error}");
    assert!(error.contains("refused"), "{error}");
    assert!(stat(&sim, &cluster, "goaways") >= 1);
    // The other cluster is not touched; the drained one is live again once its server is back.
    assert_eq!(
        phase_of(&live.index, &sim.handle.cluster_names()[1]),
        Phase::Live
    );
    sim.handle.set_faults(&cluster, Faults::default());
    until_live(&mut live, &cluster, Duration::from_secs(15)).await;
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_is_not_live_within_the_silent_deadline() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let mut live = Session::kube(&fleet_of(&sim), &engine_settings());
    assert!(live.settle(Duration::from_secs(20)).await);
    let cluster = sim.handle.cluster_names()[0].clone();
    let silent = Faults {
        silent: true,
        ..Faults::default()
    };
    sim.handle.set_faults(&cluster, silent);
    // Found by its unanswered ping: 10 s of quiet and 5 s more (docs/engine.md); the bound
    // here is the test's timeout, with room for a loaded machine.
    let deadline = fluxfleet_h2::SILENT_DEADLINE;
    let took = until_not_live(&mut live, &cluster, deadline + Duration::from_secs(5)).await;
    eprintln!("not live {took:?} after the server went silent");
    let connection = &live.index.cluster_named(&cluster).unwrap().connection;
    assert_eq!(connection.phase, Phase::TimedOut, "{connection:?}");
    let error = connection.error.as_deref().unwrap_or_default();
    assert!(error.contains("did not answer a ping"), "{error}");
    sim.handle.set_faults(&cluster, Faults::default());
    until_live(&mut live, &cluster, Duration::from_secs(20)).await;
    live.shutdown().await;
    sim.handle.shutdown().await;
}
