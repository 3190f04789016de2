//! Collectors sharing the fleet: which are alive is read while they renew their announcements;
//! three share it, one killed has its clusters taken over and, restarted, takes its share back,
//! and readers see the truth and its history throughout.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::bus::{Running, TTL, collectors, start_collector, until, until_truth};
use common::nats::NatsServer;
use fluxfleet::bus;
use tokio_util::sync::CancellationToken;

use super::options;

/// Which collectors are alive is read while they renew their announcements, as they always
/// are: the read ends (the KV API's `keys()` followed renewals for as long as they came, and
/// readers and collectors stalled with it), and misses none that renewed meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collectors_alive_are_read_while_they_renew_their_announcements() {
    let nats = NatsServer::start();
    let options = options(&nats);
    let retention = bus::Retention {
        history: Duration::from_secs(3600),
        history_max_bytes: 1 << 30,
        ttl: TTL,
        replicas: 1,
    };
    let client = bus::connect(&options, "test").await.unwrap();
    let stores = bus::open(client, &options, Some(retention)).await.unwrap();
    let ids = ["c1", "c2", "c3"];
    let everyone: BTreeSet<String> = ids.map(String::from).into();
    for id in ids {
        stores.collectors.put(id, "{}".into()).await.unwrap();
    }
    let stop = CancellationToken::new();
    let renewing: Vec<_> = ids
        .into_iter()
        .map(|id| {
            let (collectors, stop) = (stores.collectors.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.is_cancelled() {
                    collectors.put(id, "{}".into()).await.unwrap();
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for _ in 0..10 {
        // A bound against a hang, not a measure of speed: a read takes milliseconds.
        let alive = tokio::time::timeout(
            Duration::from_secs(30),
            bus::collectors_alive(&stores.collectors),
        )
        .await
        .expect("the read ends")
        .unwrap();
        // None is missed for having renewed while it was read.
        assert_eq!(alive, everyone);
    }
    stop.cancel();
    for task in renewing {
        task.await.unwrap();
    }
    // One says goodbye: gone at once, not when its announcement would have expired.
    stores.collectors.delete("c2").await.unwrap();
    let alive = bus::collectors_alive(&stores.collectors).await.unwrap();
    assert_eq!(alive, ["c1", "c3"].map(String::from).into());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_collectors_share_the_fleet_hand_it_over_and_readers_see_the_truth_and_its_history() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let nats = NatsServer::start();
    let options = options(&nats);
    let sim = common::start_with(|c| {
        c.clusters = 300;
        c.workspaces = 6;
        c.objects = 10;
        // Bookmarks every 200 ms on 2,100 watches (the small fleets' setting) kept two cores
        // busy with them alone: on a loaded machine the test then took minutes to converge.
        c.bookmark_interval = Duration::from_secs(5);
    })
    .await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let started = jiff::Timestamp::now();

    let mut running: BTreeMap<&str, Running> = ["c1", "c2", "c3"]
        .into_iter()
        .map(|id| (id, start_collector(id, &options, &inventory)))
        .collect();

    // A reader's view equals the truth, and the three share the fleet.
    until_truth(
        "the view equals the truth",
        &options,
        &sim,
        &names,
        Duration::from_secs(60),
    )
    .await;
    // Nothing a collector publishes holds a credential of the fleet.
    let client = bus::connect(&options, "test").await.unwrap();
    let stores = bus::open(client, &options, None).await.unwrap();
    let everything = bus::last_values(&stores, ">").await.unwrap();
    assert!(everything.len() > 300 * 10);
    let tokens: Vec<String> = inventory
        .clusters
        .iter()
        .filter_map(|c| {
            use secrecy::ExposeSecret;
            let kubeconfig = c.kubeconfig.kubeconfig();
            let auth = kubeconfig.auth_infos.first()?.auth_info.as_ref()?;
            Some(auth.token.as_ref()?.expose_secret().to_string())
        })
        .collect();
    assert!(!tokens.is_empty());
    for (key, value) in &everything {
        let text = String::from_utf8_lossy(value);
        assert!(
            tokens.iter().all(|t| !text.contains(t.as_str())),
            "{key} holds a token"
        );
    }
    for (id, collector) in &running {
        assert!(!collector.task.is_finished(), "collector {id} stopped");
    }
    // Once each has seen the others, every cluster is with the collector ranking highest.
    let all: BTreeSet<String> = running.keys().map(|id| id.to_string()).collect();
    until("the collectors agree", Duration::from_secs(30), || async {
        let owners = collectors(&options).await;
        let misplaced = owners
            .values()
            .filter(|s| bus::rendezvous::owner(&s.name, &all) != Some(s.collector.as_str()))
            .count();
        (misplaced > 0).then(|| format!("{misplaced} clusters with another collector"))
    })
    .await;
    let owners = collectors(&options).await;
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    for state in owners.values() {
        *per.entry(state.collector.clone()).or_default() += 1;
    }
    assert_eq!(per.len(), 3, "{per:?}");
    assert!(per.values().all(|n| *n > 60), "each has a share: {per:?}");

    // c2 dies without a word (its task aborted: no goodbye, its announcement only expires).
    let dead = running.remove("c2").unwrap();
    dead.task.abort();
    let orphans: Vec<String> = owners
        .values()
        .filter(|s| s.collector == "c2")
        .map(|s| s.name.clone())
        .collect();
    // One of c2's clusters changes after it died: only a collector that took it over can say.
    let orphan = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| orphans.contains(&c.name))
        .unwrap();
    let ks = common::truth::breakable_of(&orphan);
    let died = Instant::now();
    assert!(sim.handle.set_ready(
        &orphan.name,
        fluxfleet_sim::facts::FluxKind::Kustomization,
        &ks.namespace,
        &ks.name,
        false
    ));
    until(
        "c2's clusters taken over",
        Duration::from_secs(60),
        || async {
            let owners = collectors(&options).await;
            let left: Vec<&String> = orphans
                .iter()
                .filter(|n| owners.get(*n).is_none_or(|s| s.collector == "c2"))
                .collect();
            (!left.is_empty()).then(|| format!("{} still c2's", left.len()))
        },
    )
    .await;
    let handover = died.elapsed();
    until_truth(
        "the view equals the truth again",
        &options,
        &sim,
        &names,
        Duration::from_secs(60),
    )
    .await;
    assert!(
        handover < TTL * 4 + Duration::from_secs(10),
        "handover took {handover:?}"
    );

    // c2 comes back: it takes its share back, and no cluster is watched twice.
    running.insert("c2", start_collector("c2", &options, &inventory));
    until(
        "c2 takes its clusters back",
        Duration::from_secs(60),
        || async {
            let owners = collectors(&options).await;
            let back = orphans
                .iter()
                .filter(|n| owners.get(*n).is_some_and(|s| s.collector == "c2"))
                .count();
            (back != orphans.len()).then(|| format!("{back} of {} back", orphans.len()))
        },
    )
    .await;
    until(
        "every cluster watched once",
        Duration::from_secs(30),
        || async {
            let owners = collectors(&options).await;
            let stats = sim.handle.stats();
            let twice: Vec<String> = owners
                .values()
                .filter(|s| s.phase == fluxfleet::fleet::Phase::Live)
                // Each kind's watch, and the FluxReport's where the operator runs.
                .filter(|s| {
                    stats["clusters"][&s.name]["openWatches"].as_u64()
                        != Some(s.watching.len() as u64 + u64::from(s.report.is_some()))
                })
                .map(|s| {
                    format!(
                        "{}: {} watches for {} kinds{}",
                        s.name,
                        stats["clusters"][&s.name]["openWatches"],
                        s.watching.len(),
                        if s.report.is_some() {
                            " and a report"
                        } else {
                            ""
                        }
                    )
                })
                .collect();
            (!twice.is_empty()).then(|| format!("{:?}", &twice[..twice.len().min(3)]))
        },
    )
    .await;
    until_truth(
        "the view equals the truth after the return",
        &options,
        &sim,
        &names,
        Duration::from_secs(30),
    )
    .await;

    // A reader that comes later sees what happened: the broken Kustomization, and c2's
    // clusters' connections as they moved.
    let history = bus::history::since(&options, started, Some(&orphan.name))
        .await
        .unwrap();
    assert!(
        history.iter().any(|c| c.what == "health"
            && c.name.as_deref() == Some(&*ks.name)
            && c.to.as_deref().is_some_and(|to| to != "ready")),
        "{history:#?}"
    );
    assert!(history.iter().all(|c| c.cluster == orphan.name));
    assert!(
        history
            .iter()
            .filter(|c| c.what == "connection" && c.to.as_deref() == Some("live"))
            .count()
            >= 2,
        "live under c2, then under the one that took it over: {history:#?}"
    );

    for (_, r) in running {
        r.stop.cancel();
        r.task.await.unwrap().unwrap();
    }
    sim.handle.shutdown().await;
}
