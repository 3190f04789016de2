//! Root causes on the simulator: fix a root and what it held back recovers after the dependency
//! requeue interval, as Flux's dependants do; break it again and they wait on it again — and the
//! index's root causes follow, equal to a solve from scratch all along.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use common::truth::sim_kind;
use std::time::Duration;

use fluxfleet::fleet::graph::{self, Cause};
use fluxfleet::fleet::{Health, ObjectKey};
use fluxfleet::session::Session;

/// Pumps events until `done` holds for the index and the simulator is still.
async fn until(live: &mut Session, sim: &common::Sim, what: &str, done: impl Fn(&Session) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        live.pump(Duration::from_millis(100)).await;
        let still = sim.handle.quiet();
        if still && done(live) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "never: {what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixing_a_root_lets_what_it_held_back_recover_and_breaking_it_holds_them_again() {
    let sim = common::start_with(|c| c.clusters = 12).await;
    let mut live = common::settled(&sim.handle.files.fleet).await;
    until(&mut live, &sim, "settled", |_| true).await;
    // A root that holds others back, with what it holds.
    let (cluster, root, held): (String, ObjectKey, Vec<ObjectKey>) =
        live.index
            .entries()
            .find_map(|(_, c)| {
                let (root, _) = c.graph.causes().iter().find(|(k, cause)| {
                    **cause == Cause::Root && !c.graph.held_back(k).is_empty()
                })?;
                let held = c.graph.held_back(root).into_iter().cloned().collect();
                Some((c.info.name.clone(), root.clone(), held))
            })
            .expect("the simulated fleet has a root holding others back");
    let consistent = |live: &Session| {
        live.index
            .entries()
            .all(|(_, c)| c.graph.causes() == &graph::causes(&c.objects))
    };
    assert!(consistent(&live));

    assert!(sim.handle.set_ready(
        &cluster,
        sim_kind(root.kind),
        &root.namespace,
        &root.name,
        true
    ));
    until(
        &mut live,
        &sim,
        "what the root held back recovers",
        |live| {
            let c = live.index.cluster_named(&cluster).unwrap();
            c.objects
                .get(&root)
                .is_some_and(|o| o.health == Health::Ready)
                && held.iter().all(|k| {
                    c.objects.get(k).is_some_and(|o| o.health == Health::Ready)
                        && c.graph.cause(k).is_none()
                })
        },
    )
    .await;
    assert!(consistent(&live));

    assert!(sim.handle.set_ready(
        &cluster,
        sim_kind(root.kind),
        &root.namespace,
        &root.name,
        false
    ));
    until(&mut live, &sim, "they wait on the root again", |live| {
        let c = live.index.cluster_named(&cluster).unwrap();
        // Those that depend on it directly say so; all of them are held back by it.
        held.iter().all(|k| {
            matches!(c.graph.cause(k), Some(Cause::Blocked(roots)) if roots[..] == [root.clone()])
        })
    })
    .await;
    let c = live.index.cluster_named(&cluster).unwrap();
    let waiting = held
        .iter()
        .filter(|k| c.objects.get(k).unwrap().reason.as_deref() == Some("DependencyNotReady"))
        .count();
    assert!(waiting > 0, "the dependants report DependencyNotReady");
    assert!(consistent(&live));
    live.shutdown().await;
    sim.handle.shutdown().await;
}
