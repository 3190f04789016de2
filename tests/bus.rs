//! Collectors sharing a simulated fleet through a real NATS JetStream server, and readers that
//! see it without any connection to a cluster: the view equals the simulator's truth; a
//! collector killed has its clusters taken over; restarted, it takes its share back and no
//! cluster is watched twice; a reader started later sees what changed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::bus::{Running, TTL, collectors, read, start_collector, until, until_truth};
use common::nats::NatsServer;
use fluxfleet::bus::{self, collector};
use fluxfleet::fleet::FluxKind;
use fluxfleet::session::Session;
use tokio_util::sync::CancellationToken;

fn options(nats: &NatsServer) -> bus::Options {
    bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    }
}

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

/// `--nats` takes a comma-separated list of servers, as NATS clients do (it failed with
/// "invalid port number"): one that is down is passed over, and no password in the list is ever
/// shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comma_separated_list_of_servers_is_taken_as_nats_clients_take_it() {
    let nats = NatsServer::start();
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listed = bus::Options {
        url: format!("nats://127.0.0.1:{down}, {}", nats.url),
        ..options(&nats)
    };
    let client = bus::connect(&listed, "test").await.unwrap();
    let retention = bus::Retention {
        history: Duration::from_secs(3600),
        history_max_bytes: 1 << 30,
        ttl: TTL,
        replicas: 1,
    };
    bus::open(client, &listed, Some(retention)).await.unwrap();

    let nowhere = bus::Options {
        url: format!("nats://ops:s3cret@127.0.0.1:{down},nats://ops:s3cret@127.0.0.1:{down}"),
        ..options(&nats)
    };
    let Err(e) = bus::connect(&nowhere, "test").await else {
        panic!("no server is up");
    };
    // No server reached: worth trying again, and said without the password.
    assert!(
        matches!(e, bus::BusError::Connect { .. }) && e.retryable(),
        "{e:?}"
    );
    let said = e.to_string();
    assert!(
        said.contains(&format!("127.0.0.1:{down}")) && !said.contains("s3cret"),
        "{said}"
    );
    let e = bus::connect(
        &bus::Options {
            url: " , ".into(),
            ..options(&nats)
        },
        "test",
    )
    .await
    .err()
    .unwrap();
    // The command line to fix: not worth trying again.
    assert_eq!(e, bus::BusError::NoServer);
    assert!(!e.retryable());
}

/// Collectors started together race to make the buckets and the history stream: every one of
/// them opens the stores (the losers take the winner's), none fails for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collectors_starting_together_all_open_the_stores() {
    let retention = bus::Retention {
        history: Duration::from_secs(3600),
        history_max_bytes: 1 << 30,
        ttl: TTL,
        replicas: 1,
    };
    // The race is lost now and then: thirty fresh servers, eight collectors each.
    for _ in 0..30 {
        let nats = NatsServer::start();
        let options = options(&nats);
        let opening = (0..8).map(|_| {
            let options = options.clone();
            tokio::spawn(async move {
                let client = bus::connect(&options, "test").await?;
                bus::open(client, &options, Some(retention))
                    .await
                    .map(|_| ())
            })
        });
        for opened in futures::future::join_all(opening).await {
            opened.unwrap().unwrap();
        }
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_says_what_is_missing_when_nothing_was_published() {
    let nats = NatsServer::start();
    let Err(e) = bus::reader::Bus::connect(&options(&nats)).await else {
        panic!("a bucket nobody wrote");
    };
    assert!(
        matches!(&e, bus::BusError::NotPublished { bucket, .. } if bucket == "fleet"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("has a collector published to bucket \"fleet\""),
        "{e}"
    );
}

/// A small simulated fleet published by one collector, once a reader sees all of it.
async fn one_collector() -> (
    NatsServer,
    bus::Options,
    common::Sim,
    fluxfleet::inventory::Inventory,
    Running,
) {
    let nats = NatsServer::start();
    let options = options(&nats);
    let sim = common::start().await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let only = start_collector("only", &options, &inventory);
    let within = Duration::from_secs(30);
    until_truth("the view equals the truth", &options, &sim, &names, within).await;
    (nats, options, sim, inventory, only)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_whose_collector_died_shows_so_with_what_it_last_published() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let (_nats, options, sim, _inventory, only) = one_collector().await;
    // A reader that is open when the collector dies, and one that starts after.
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let mut open = Session::start(vec![Box::new(bus)]);
    open.settle(Duration::from_secs(10)).await;
    // Events and YAML are on the cluster, which a reader does not connect to: it says so.
    let entry = &open.index.clusters()[0];
    let key = entry.objects.keys().next().unwrap().clone();
    let why = open
        .reader()
        .events(&entry.info, std::slice::from_ref(&key))
        .await
        .unwrap_err();
    assert!(
        matches!(&why, fluxfleet::fleet::read::ReadError::NoKubeconfig(text) if text.contains("comes from collectors through NATS")),
        "{why:?}"
    );
    only.task.abort();
    let gone = |s: &Session| {
        let wrong: Vec<String> = s
            .index
            .clusters()
            .iter()
            .filter(|c| {
                c.connection.phase != fluxfleet::fleet::Phase::TimedOut
                    || !c
                        .connection
                        .error
                        .as_deref()
                        .unwrap_or("")
                        .contains("its collector only stopped announcing itself")
                    || c.objects.is_empty()
            })
            .map(|c| format!("{}: {:?}", c.info.name, c.connection.phase))
            .collect();
        (!wrong.is_empty()).then(|| format!("{wrong:?}"))
    };
    common::until(&mut open, TTL * 4 + Duration::from_secs(5), gone).await;
    // The reader that saw it go says since when its clusters are stale.
    for c in open.index.clusters() {
        let since = c.connection.since.expect("stale since the collector went");
        let said = c.connection.error.as_deref().unwrap_or("");
        assert!(
            said.contains(&format!("stopped announcing itself at {since:.0}")),
            "{said}"
        );
    }
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let mut later = Session::start(vec![Box::new(bus)]);
    later.settle(Duration::from_secs(10)).await;
    assert_eq!(gone(&later), None);
    // One that started after cannot know when.
    assert!(
        later
            .index
            .clusters()
            .iter()
            .all(|c| c.connection.since.is_none())
    );
    open.shutdown().await;
    later.shutdown().await;
    sim.handle.shutdown().await;
}

/// Every object a session shows, by cluster: what "missing" is counted on.
fn shown_objects(s: &Session) -> BTreeSet<(String, String)> {
    s.index
        .clusters()
        .iter()
        .flat_map(|c| {
            let cluster = c.info.name.clone();
            c.objects.keys().map(move |k| {
                (
                    cluster.clone(),
                    format!("{}/{}/{}", k.kind.as_str(), k.namespace, k.name),
                )
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_loses_the_bus_has_its_clusters_shown_stale_until_it_is_back() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let nats = NatsServer::start();
    let options = options(&nats);
    // The collector reaches the server through a relay that can be cut; the reader directly.
    let relay = common::freeze::Freezer::start(&nats.url).await;
    let through = bus::Options {
        url: relay.url("nats"),
        ..options.clone()
    };
    let sim = common::start().await;
    let inventory = common::fleet_of(&sim);
    let names: BTreeSet<String> = inventory.clusters.iter().map(|c| c.name.clone()).collect();
    let only = start_collector("only", &through, &inventory);
    let within = Duration::from_secs(30);
    until_truth("the view equals the truth", &options, &sim, &names, within).await;
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let mut reader = Session::start(vec![Box::new(bus)]);
    reader.settle(Duration::from_secs(10)).await;
    let all = shown_objects(&reader);
    assert!(!all.is_empty());
    relay.cut();
    // A change the collector sees while it cannot say it.
    let (cluster, namespace, name) = sim
        .handle
        .truth()
        .into_iter()
        .find_map(|c| {
            let cluster = c.name.clone();
            c.objects
                .into_iter()
                .find(common::truth::breakable)
                .map(|o| (cluster, o.namespace, o.name))
        })
        .expect("an object that can be made not ready");
    sim.handle.set_ready(
        &cluster,
        fluxfleet_sim::facts::FluxKind::Kustomization,
        &namespace,
        &name,
        false,
    );
    // Its announcement expires: every cluster says its collector stopped announcing itself, and
    // since when, with every object still shown.
    let stale = |s: &Session| {
        let shown = shown_objects(s);
        let missing: Vec<_> = all.difference(&shown).take(3).collect();
        assert!(
            missing.is_empty(),
            "objects gone while the collector is away: {missing:?}"
        );
        let fresh: Vec<String> = s
            .index
            .clusters()
            .iter()
            .filter(|c| {
                c.connection.phase != fluxfleet::fleet::Phase::TimedOut
                    || c.connection.since.is_none()
                    || !c
                        .connection
                        .error
                        .as_deref()
                        .unwrap_or("")
                        .contains("its collector only stopped announcing itself at")
            })
            .map(|c| format!("{}: {:?}", c.info.name, c.connection.phase))
            .collect();
        (!fresh.is_empty()).then(|| format!("not shown stale: {fresh:?}"))
    };
    common::until(&mut reader, TTL * 4 + Duration::from_secs(5), stale).await;
    // Back on the bus, it says what it saw meanwhile, and its clusters are live again.
    relay.restore();
    let truth_now = || common::bus::truth(&sim, &names);
    let back = |s: &Session| {
        let shown = shown_objects(s);
        let missing: Vec<_> = all.difference(&shown).take(3).collect();
        assert!(
            missing.is_empty(),
            "objects gone as the collector comes back: {missing:?}"
        );
        let stale: Vec<&str> = s
            .index
            .clusters()
            .iter()
            .filter(|c| c.connection.phase == fluxfleet::fleet::Phase::TimedOut)
            .map(|c| c.info.name.as_str())
            .collect();
        if !stale.is_empty() {
            return Some(format!("still stale: {stale:?}"));
        }
        common::bus::difference(&common::bus::view_of(&s.index), &truth_now())
            .map(|d| format!("not the truth: {d}"))
    };
    common::until(&mut reader, Duration::from_secs(60), back).await;
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    reader.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_reads_and_acts_directly_on_the_clusters_its_own_kubeconfigs_reach() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    use fluxfleet::fleet::verbs::{Intent, Outcome, Verb};
    let (_nats, options, sim, inventory, only) = one_collector().await;

    // This user's kubeconfigs reach every cluster but the first.
    let (far, near) = (&inventory.clusters[0], &inventory.clusters[1]);
    let own: Vec<_> = inventory.clusters[1..].to_vec();
    let direct = fluxfleet::k8s::direct::Direct::new(own, &common::engine_settings());
    let bus = bus::reader::Bus::connect(&options)
        .await
        .unwrap()
        .reaching(direct);
    let mut session = Session::start(vec![Box::new(bus)]);
    session.settle(Duration::from_secs(10)).await;
    let entry = |name: &str| session.index.cluster_named(name).unwrap();
    let ks = |name: &str| {
        entry(name)
            .objects
            .values()
            .find(|o| o.key.kind == FluxKind::Kustomization && !o.suspended)
            .cloned()
            .unwrap()
    };

    // Reads go to the cluster the user reaches, never to the one they do not.
    let target = ks(&near.name);
    let yaml = session
        .reader()
        .yaml(&entry(&near.name).info, &target.key)
        .await
        .unwrap();
    assert!(yaml.contains("kind: Kustomization"), "{yaml}");
    let why = session
        .reader()
        .events(
            &entry(&far.name).info,
            std::slice::from_ref(&ks(&far.name).key),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&why, fluxfleet::fleet::read::ReadError::NoKubeconfig(text) if text.contains("none of your kubeconfigs reaches it")),
        "{why:?}"
    );

    // Actions only with the write grant, over the user's own connection.
    let config = fluxfleet::config::Config::defaults();
    let infos: Vec<_> = session
        .index
        .clusters()
        .iter()
        .map(|c| (*c.info).clone())
        .collect();
    let (grant, permissions) = config.writable(Some(fluxfleet::config::Mode::Write), infos.iter());
    let writer = session.sources.writer(grant.unwrap(), permissions);
    let intent = Intent {
        verb: Verb::Suspend,
        user: "alice".into(),
        reason: Some("bus test".into()),
        token: "2026-11-24T10:00:00Z".into(),
    };
    let steps = fluxfleet::fleet::verbs::plan(&intent, &target, |_| None).unwrap();
    let outcome = writer
        .apply(&entry(&near.name).info, &steps, &intent.token, None)
        .await;
    assert_eq!(outcome, Outcome::Done);
    let suspended = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| c.name == near.name)
        .unwrap()
        .objects
        .into_iter()
        .find(|o| o.kind == "Kustomization" && o.name == *target.key.name)
        .unwrap()
        .suspended;
    assert!(suspended, "the cluster itself has it suspended");
    // The history, through the session as the TUI's `:history` reads it, has the suspension.

    let suspended_seen = async {
        for _ in 0..50 {
            let changes = session
                .reader()
                .history(jiff::Timestamp::UNIX_EPOCH)
                .await
                .unwrap();
            if changes.iter().any(|c| {
                c.cluster == near.name
                    && c.name.as_deref() == Some(&*target.key.name)
                    && c.to.as_deref() == Some("suspended")
            }) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        false
    };
    assert!(suspended_seen.await, "the suspension is in the history");
    let far_steps = fluxfleet::fleet::verbs::plan(&intent, &ks(&far.name), |_| None).unwrap();
    let refused = writer
        .apply(&entry(&far.name).info, &far_steps, &intent.token, None)
        .await;
    assert!(
        matches!(&refused, Outcome::Refused(why) if why.contains("none of your kubeconfigs")),
        "{refused:?}"
    );
    // The planner, which a dry run prints and a run follows, says the same beforehand: the
    // target no kubeconfig reaches is refused with the writer's words, the other is sent.
    let rules = fluxfleet::actions::Rules {
        writes_refused: None,
        purpose: fluxfleet::actions::Purpose::Preview,
        actions: &config.actions,
        permissions: None,
    };
    let objects = [far, near].map(|c| {
        let id = session.index.id_of(&entry(&c.name).info.key).unwrap();
        (id, ks(&c.name).key)
    });
    let ask = fluxfleet::actions::Ask {
        intent: intent.clone(),
        objects: fluxfleet::actions::Objects::Named(objects.to_vec()),
    };
    let admitted = fluxfleet::actions::admit(&session.index, ask, &rules).unwrap();
    let planned = admitted.targets();
    assert!(
        matches!(&planned[0].plan, Err(fluxfleet::fleet::verbs::Refusal::Unreachable(why))
            if matches!(&refused, Outcome::Refused(said) if said == why)),
        "{:?}",
        planned[0].plan
    );
    assert!(planned[1].plan.is_ok(), "{:?}", planned[1].plan);
    assert_eq!(
        fluxfleet::actions::Tally::of(planned),
        fluxfleet::actions::Tally {
            sent: 1,
            clusters: 1,
            refused: 1
        }
    );
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    session.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asking_for_a_password_gets_it_from_the_url_and_errors_never_show_it() {
    let nats = NatsServer::start_with(&["--user", "fleet", "--pass", "s3cret-pw"]);
    let address = nats.url.trim_start_matches("nats://");
    let wrong = bus::Options {
        url: format!("nats://fleet:wrong-pw@{address}"),
        bucket: "fleet".into(),
        ..bus::Options::default()
    };
    let e = bus::reader::Bus::connect(&wrong)
        .await
        .err()
        .expect("refused");
    assert!(matches!(e, bus::BusError::Refused { .. }), "{e:?}");
    let said = e.to_string();
    assert!(!said.contains("wrong-pw"), "{said}");
    assert!(said.contains("nats://…@"), "{said}");
    let right = bus::Options {
        url: format!("nats://fleet:s3cret-pw@{address}"),
        ..wrong
    };
    // Authenticated: what is missing now is a collector, not the password.
    let e = bus::reader::Bus::connect(&right)
        .await
        .err()
        .expect("nothing published");
    assert!(matches!(e, bus::BusError::NotPublished { .. }), "{e:?}");
    assert!(!e.to_string().contains("s3cret-pw"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_on_the_bus_shows_the_fleet_its_clusters_and_their_history() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    use crossterm::event::KeyCode;
    let (_nats, options, sim, inventory, only) = one_collector().await;
    let bus = bus::reader::Bus::connect(&options).await.unwrap();
    let clusters = inventory.clusters.len();
    let cluster = &inventory.clusters[0].name;
    let (mut person, app, _) = common::tui::session_of(fluxfleet::tui::Start {
        config: fluxfleet::config::Config::defaults(),
        config_path: None,
        warnings: Vec::new(),
        fleet: fluxfleet::session::open::Fleet::Bus(Box::new(bus)),
        theme: None,
        mode: Some(fluxfleet::config::Mode::ReadOnly),
        journal: None,
    });
    let drive = async {
        let all = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&all))
            .await;
        person.command(&format!("cluster {cluster}"));
        person
            .sees("the cluster's objects", |s| {
                s.contains(&format!("Flux objects on {cluster}")) && s.contains("Kustomization")
            })
            .await;
        person.command("history 1h");
        person
            .sees("its history", |s| {
                s.contains("history since 60m ago") && s.contains("connection syncing → live")
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_follows_its_management_cluster_as_clusters_join_and_leave() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    use fluxfleet::k8s::management::{Management, extend};
    let nats = NatsServer::start();
    let options = options(&nats);
    let sim = common::start().await;
    let mut settings = common::engine_settings();
    settings.discovery_interval = Duration::from_millis(300);
    let management = sim.handle.files.management.clone();
    let load = {
        let settings = settings.clone();
        move || {
            let (management, settings) = (management.clone(), settings.clone());
            async move {
                let request = fluxfleet::inventory::Lookup {
                    kubeconfigs: vec![management],
                    ..Default::default()
                };
                let config = fluxfleet::config::Config::defaults();
                let mut inventory = fluxfleet::inventory::load(&request, &config);
                let managements = [Management {
                    context: "management".into(),
                    workspace_label: None,
                    depth: 1,
                }];
                extend(&mut inventory, &settings, &managements).await;
                match inventory.problems.first() {
                    Some(p) => Err(p.clone()),
                    None => Ok(inventory.clusters),
                }
            }
        }
    };
    let clusters = load().await.unwrap();
    let stop = CancellationToken::new();
    let refresh: collector::Refresh =
        std::sync::Arc::new(move || Box::pin(futures::FutureExt::map(load(), |r| r.map(Some))));
    let task = tokio::spawn(collector::run(
        collector::Collecting {
            options: options.clone(),
            id: "follower".into(),
            retention: bus::Retention {
                history: Duration::from_secs(3600),
                history_max_bytes: 1 << 30,
                ttl: TTL,
                replicas: 1,
            },
            clusters: clusters.clone(),
            // Every cluster but the management cluster is discovered, credentials and all.
            reread: common::bus::reread_of(&fluxfleet::inventory::Inventory {
                clusters: clusters.clone(),
                ..Default::default()
            }),
            settings,
            refresh: Some(refresh),
            shutdown: Duration::from_secs(10),
            status: Default::default(),
            rings: None,
        },
        stop.clone(),
    ));
    let names = sim.handle.cluster_names();
    let (template, leaving) = (&names[0], &names[1]);
    until(
        "every discovered cluster on the bus",
        Duration::from_secs(30),
        || async {
            let view = read(&options).await.ok()?;
            let missing: Vec<&String> = names.iter().filter(|n| !view.contains_key(*n)).collect();
            (!missing.is_empty()).then(|| format!("missing {missing:?}"))
        },
    )
    .await;
    assert!(sim.handle.copy_capi_cluster(template, "newcomer"));
    assert!(sim.handle.remove_capi_cluster(leaving));
    until(
        "the newcomer in, the leaver out",
        Duration::from_secs(30),
        || async {
            let view = match read(&options).await {
                Ok(v) => v,
                Err(e) => return Some(e.to_string()),
            };
            let newcomer = view
                .get("newcomer")
                .is_some_and(|objects| !objects.is_empty());
            let gone = !view.contains_key(leaving.as_str());
            (!(newcomer && gone)).then(|| format!("newcomer seen: {newcomer}, leaver gone: {gone}"))
        },
    )
    .await;
    stop.cancel();
    task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_nats_trusts_the_ca_it_is_given_and_only_that() {
    let dir = tempfile::tempdir().unwrap();
    common::server_certificate(dir.path());
    let path = |name: &str| dir.path().join(name);
    let nats = NatsServer::start_with(&[
        "--tls",
        "--tlscert",
        path("server.pem").to_str().unwrap(),
        "--tlskey",
        path("server.key").to_str().unwrap(),
    ]);
    let url = nats.url.replace("nats://", "tls://");
    let untrusted = bus::Options {
        url: url.clone(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    };
    let e = bus::reader::Bus::connect(&untrusted)
        .await
        .err()
        .expect("an unknown CA");
    assert!(
        matches!(&e, bus::BusError::Connect { url: at, .. } if *at == url),
        "{e:?}"
    );
    let trusted = bus::Options {
        ca: Some(path("ca.pem")),
        ..untrusted
    };
    // Over TLS with the CA given: connected, and what is missing is a collector.
    let e = bus::reader::Bus::connect(&trusted)
        .await
        .err()
        .expect("nothing published");
    assert!(matches!(e, bus::BusError::NotPublished { .. }), "{e:?}");
}

#[test]
fn the_collectors_manifest_reads_and_its_arguments_are_the_collectors() {
    let (docs, args) = common::manifest("collectors.yaml", "fluxfleet-collector-0");
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 3);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let cli = fluxfleet::cli::Cli::parse_words(&args).unwrap();
    let Some(fluxfleet::cli::Command::Collect(collect)) = cli.command else {
        panic!("{args:?} is not `collect`");
    };
    assert_eq!(collect.id.as_deref(), Some("fluxfleet-collector-0"));
    assert_eq!(collect.ttl, Duration::from_secs(15));
    assert_eq!(
        collect.fleet.bus.nats.as_deref(),
        Some("nats://nats.nats.svc:4222")
    );
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    // The probes ask the port the collector serves them on.
    let health = collect.probes.health_addr.unwrap().port();
    let ports = container["ports"].as_array().unwrap();
    let named = |name: &str| {
        ports
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["containerPort"].as_u64().unwrap() as u16)
    };
    assert_eq!(named("healthz"), Some(health));
    assert_eq!(
        named("http-metrics"),
        collect.probes.metrics_addr.map(|a| a.port())
    );
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(container[probe]["httpGet"]["path"], path);
        assert_eq!(container[probe]["httpGet"]["port"], "healthz");
    }
}

#[test]
fn the_history_view_shows_the_changes_of_its_scope_newest_first() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use fluxfleet::app::model::{Model, View};
    use fluxfleet::app::update::{Effect, Msg, update};
    use fluxfleet::fleet::history::Change;
    use fluxfleet::fleet::{ClusterInfo, ClusterKey, Index};
    let now: jiff::Timestamp = "2026-11-24T10:00:00Z".parse().unwrap();
    let mut index = Index::new();
    for (name, ws) in [("pay-eu", "payments"), ("shop-1", "retail")] {
        index.add_cluster(ClusterInfo {
            key: ClusterKey::new(name),
            ..ClusterInfo::new(name, ws)
        });
    }
    let (keymap, _) =
        fluxfleet::app::keymap::Keymap::from_config(&fluxfleet::config::Config::defaults().keymap);
    let mut m = Model::new(index, keymap, Vec::new(), now);
    let payments = m.index.workspace_id("payments").unwrap();
    m.push(View::Workspace(payments));
    let mut effects = Vec::new();
    for c in ":history 2h"
        .chars()
        .map(KeyCode::Char)
        .chain([KeyCode::Enter])
    {
        effects = update(&mut m, Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
    }
    let since = now - jiff::SignedDuration::from_secs(7200);
    assert_eq!(effects, [Effect::ReadHistory(since)]);
    let change = |minutes: i64, cluster: &str, ws: &str, what: &str, to: &str| Change {
        at: now - jiff::SignedDuration::from_mins(minutes),
        cluster: cluster.into(),
        workspace: ws.into(),
        what: what.into(),
        kind: Some(FluxKind::Kustomization),
        namespace: Some("flux-system".into()),
        name: Some("apps".into()),
        from: Some("ready".into()),
        to: Some(to.into()),
        message: None,
        happened: None,
    };
    update(
        &mut m,
        Msg::History(Ok(vec![
            change(90, "pay-eu", "payments", "health", "failed"),
            change(30, "shop-1", "retail", "health", "stalled"),
            change(10, "pay-eu", "payments", "health", "ready"),
        ])),
    );
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(110, 12)).unwrap();
    let theme = fluxfleet::config::theme::Theme::dark();
    terminal
        .draw(|f| fluxfleet::ui::render(f, &m, &theme))
        .unwrap();
    let screen = terminal.backend().to_string();
    assert!(screen.contains("history since 2h ago"), "{screen}");
    let failed = screen.find("health ready → failed").expect(&screen);
    let ready = screen.find("health ready → ready").expect(&screen);
    assert!(ready < failed, "newest first:\n{screen}");
    assert!(
        !screen.contains("shop-1"),
        "only the workspace's clusters:\n{screen}"
    );
}

/// How a command is told where the bus is.
#[derive(Clone, Copy, Debug)]
enum Told {
    Flag,
    Variable,
}

/// The binary, told where the bus is, with a kubeconfig of the whole fleet at hand (as a user
/// of both has), never the developer's own config.
async fn on_bus(
    told: Told,
    url: &str,
    kubeconfigs: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    bus_command(told, url, kubeconfigs, args)
        .output()
        .await
        .unwrap()
}

/// [`on_bus`]'s command, to be run as the caller likes.
fn bus_command(
    told: Told,
    url: &str,
    kubeconfigs: &std::path::Path,
    args: &[&str],
) -> tokio::process::Command {
    let mut cmd = common::bus::command(kubeconfigs);
    cmd.args(args);
    match told {
        Told::Flag => cmd.arg("--nats").arg(url),
        Told::Variable => cmd.env("FLUXFLEET_NATS", url),
    };
    cmd
}

/// How many connections each cluster has ever served, as the simulator counted them.
fn connections(sim: &common::Sim) -> BTreeMap<String, u64> {
    let stats = sim.handle.stats();
    stats["clusters"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, c)| (name.clone(), c["connectionsTotal"].as_u64().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_reads_the_bus_from_its_flag_or_variable_and_opens_no_socket_to_a_cluster() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    let (_nats, options, sim, inventory, only) = one_collector().await;
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let clusters = inventory.clusters.len();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let json = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)))
    };
    let ok = |out: &std::process::Output| {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    };
    let truth = sim.handle.truth();
    let ks = truth[1]
        .objects
        .iter()
        .find(|o| o.kind == "Kustomization" && !o.suspended)
        .unwrap();
    let target = truth[1].name.clone();
    let names: BTreeSet<&str> = inventory.clusters.iter().map(|c| c.name.as_str()).collect();
    let copies = truth
        .iter()
        .filter(|c| names.contains(c.name.as_str()))
        .flat_map(|c| &c.objects)
        .filter(|o| o.kind == "Kustomization" && o.name == ks.name && o.namespace == ks.namespace)
        .count();
    let before = connections(&sim);
    for told in [Told::Flag, Told::Variable] {
        let run = |args: &'static [&'static str]| on_bus(told, &options.url, &kubeconfigs, args);

        let out = run(&["get", "-o", "json", "--timeout", "10s"]).await;
        ok(&out);
        assert_eq!(json(&out)["clusters"].as_array().unwrap().len(), clusters);

        let out = run(&["get", "--root-causes", "-o", "json", "--timeout", "10s"]).await;
        ok(&out);
        assert!(json(&out).is_object(), "{told:?}");

        // One round of alerts, printed instead of sent: one per incident and one per other
        // failing root cause's object and reason, as get --root-causes finds them on the bus.
        let out = run(&["get", "--root-causes", "--status", "failing", "-o", "json"]).await;
        ok(&out);
        let doc = json(&out);
        let mut causes: BTreeSet<String> = doc["rootCauses"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["incident"].is_null())
            .map(|c| {
                format!(
                    "{} {} {} {}",
                    c["kind"], c["namespace"], c["name"], c["reason"]
                )
            })
            .collect();
        causes.extend(
            doc["incidents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| format!("incident {} {}", i["endpoint"], i["class"])),
        );
        assert!(!causes.is_empty(), "the fleet has failures to alert on");
        // From the bus alone: what broke inside would be read from the clusters themselves.
        let args = [
            "alert",
            "--dry-run",
            "--no-workloads",
            "--every",
            "1s",
            "--for",
            "0s",
        ];
        let mut alert = bus_command(told, &options.url, &kubeconfigs, &args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = alert.stdout.take().unwrap();
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        let round: serde_json::Value = loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("alert prints a round");
            if line.starts_with('[') {
                break serde_json::from_str(&line).unwrap();
            }
        };
        alert.kill().await.unwrap();
        let alerted: BTreeSet<String> = round
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let l = &a["labels"];
                match l["alertname"].as_str() {
                    Some("FluxIncident") => format!("incident {} {}", l["endpoint"], l["class"]),
                    _ => format!(
                        "{} {} {} {}",
                        l["kind"], l["namespace"], l["name"], l["reason"]
                    ),
                }
            })
            .collect();
        assert_eq!(alerted, causes, "{told:?}");

        let out = run(&["rollout", "ks", "-o", "json", "--timeout", "10s"]).await;
        ok(&out);
        let doc = json(&out);
        let rows = doc["rollouts"].as_array().unwrap();
        assert!(!rows.is_empty(), "{told:?}: {doc}");
        assert!(rows.iter().all(|r| r["kind"] == "Kustomization"), "{doc}");

        let out = run(&["inventory", "-o", "json"]).await;
        ok(&out);
        let doc = json(&out);
        let listed = doc["clusters"].as_array().unwrap();
        assert_eq!(listed.len(), clusters, "{doc}");
        assert!(listed.iter().all(|c| c["collector"] == "only"), "{doc}");

        let out = on_bus(
            told,
            &options.url,
            &kubeconfigs,
            &["suspend", "ks", &ks.name, "-n", &ks.namespace, "--dry-run"],
        )
        .await;
        ok(&out);
        assert!(
            text(&out.stderr).contains(&format!("would suspend {copies} objects")),
            "{told:?}: {}",
            text(&out.stderr)
        );

        // The commands with a fleet of their own take no --nats: given one, they refuse it by
        // name (the variable, ambient, is not theirs to read).
        for own in [&["demo"][..], &["sim", "--clusters", "1"]] {
            let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
                .args(own)
                .args(["--nats", &options.url])
                .output()
                .await
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{own:?}");
            assert!(
                text(&out.stderr).contains("'--nats'"),
                "{}",
                text(&out.stderr)
            );
        }
    }
    // Nothing above reached a cluster: every answer came from the bus.
    assert_eq!(connections(&sim), before);

    // Acting goes through the user's own kubeconfig, to the one cluster acted on.
    let out = on_bus(
        Told::Variable,
        &options.url,
        &kubeconfigs,
        &[
            "suspend",
            "ks",
            &ks.name,
            "-n",
            &ks.namespace,
            "--cluster",
            &target,
            "--write",
            "--yes",
        ],
    )
    .await;
    ok(&out);
    let now = sim.handle.truth();
    let acted = now.iter().find(|c| c.name == target).unwrap();
    assert!(
        acted
            .objects
            .iter()
            .any(|o| o.kind == "Kustomization" && o.name == ks.name && o.suspended),
        "{}",
        text(&out.stderr)
    );
    let after = connections(&sim);
    let reached: Vec<&String> = after
        .iter()
        .filter(|(name, n)| before.get(*name) != Some(n))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(reached, vec![&target]);

    // Reading what broke inside goes to the clusters read too, through the user's own
    // kubeconfig: the bus carries summaries only.
    let out = on_bus(
        Told::Flag,
        &options.url,
        &kubeconfigs,
        &[
            "workloads",
            "ks",
            &ks.name,
            "-n",
            &ks.namespace,
            "--all",
            "--cluster",
            &target,
            "-o",
            "json",
        ],
    )
    .await;
    ok(&out);
    let doc = json(&out);
    assert_eq!(doc["objects"][0]["read"], 1, "{doc}");
    assert!(
        !doc["objects"][0]["lines"].as_array().unwrap().is_empty(),
        "{doc}"
    );
    let again = connections(&sim);
    let reached: Vec<&String> = again
        .iter()
        .filter(|(name, n)| after.get(*name) != Some(n))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(reached, vec![&target]);
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}
