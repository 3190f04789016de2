//! Bulk actions at fleet speed, in-process: the executor against the simulated fleet. A reconcile
//! is done when the watch shows it handled (no GET while waiting), each target's outcome comes as
//! it ends (a slow cluster delays only its own), and `concurrency` bounds the PATCHes in flight.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fluxfleet::actions::{
    self, Ask, Carry, Job, Objects, Progress, Purpose, Rules, Target, Update, Watch,
};
use fluxfleet::config::{Config, Mode};
use fluxfleet::fleet::verbs::{Intent, Outcome, Verb};
use fluxfleet::fleet::{ClusterId, FluxKind};
use fluxfleet::inventory;
use fluxfleet::session::Session;
use fluxfleet_sim::Faults;

use common::Sim;

async fn session(sim: &Sim) -> Session {
    let request = inventory::Lookup {
        dirs: vec![sim.dir.path().join("kubeconfigs")],
        ..inventory::Lookup::default()
    };
    let fleet = inventory::load(&request, &Config::defaults());
    let mut engine = Config::defaults().engine;
    engine.kinds = FluxKind::ALL.to_vec();
    let mut live = Session::kube(&fleet, &engine);
    assert!(live.settle(Duration::from_secs(20)).await);
    live
}

/// `verb` on the Kustomization `flux-system/flux-system` of every cluster, in index order.
fn job(live: &Session, verb: Verb) -> Job {
    job_on(live, verb, usize::MAX)
}

/// [`job`] on the first `clusters` clusters only.
fn job_on(live: &Session, verb: Verb, clusters: usize) -> Job {
    let intent = Intent {
        verb,
        user: "test".into(),
        reason: None,
        token: format!("{verb}-{}", jiff::Timestamp::now()),
    };
    let config = Config::defaults();
    let objects = live
        .index
        .clusters()
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let key = c
                .objects
                .keys()
                .find(|k| k.kind == FluxKind::Kustomization && &*k.name == "flux-system")?;
            Some((ClusterId(i as u32), key.clone()))
        })
        .take(clusters);
    let job = admitted(&live.index, objects.collect(), intent, &config);
    assert!(job.targets().iter().all(|t| t.plan.is_ok()));
    job
}

/// `objects` for `intent` through the one door, writes granted everywhere, as a job.
fn admitted(
    index: &fluxfleet::fleet::Index,
    objects: Vec<(ClusterId, fluxfleet::fleet::ObjectKey)>,
    intent: Intent,
    config: &Config,
) -> Job {
    let rules = Rules {
        writes_refused: None,
        purpose: Purpose::Send { granted: true },
        actions: &config.actions,
        permissions: None,
    };
    let ask = Ask {
        intent,
        objects: Objects::Named(objects),
    };
    actions::admit(index, ask, &rules)
        .unwrap()
        .into_job(1, None)
        .unwrap()
}

/// Carries `job` out on `live`, returning what happened to each target in the order it happened:
/// its cluster, and its outcome once ended (None: requested, not handled yet).
async fn log(live: &mut Session, job: &Job, concurrency: usize) -> Vec<(String, Option<Outcome>)> {
    log_waiting(live, job, concurrency, Duration::from_secs(30)).await
}

/// [`log`], each reconcile waited for at most `wait` (`--timeout`).
async fn log_waiting(
    live: &mut Session,
    job: &Job,
    concurrency: usize,
    wait: Duration,
) -> Vec<(String, Option<Outcome>)> {
    let infos: Vec<_> = live
        .index
        .clusters()
        .iter()
        .map(|c| (*c.info).clone())
        .collect();
    let (grant, permissions) = Config::defaults().writable(Some(Mode::Write), &infos);
    let writer = live.sources.writer(grant.unwrap(), permissions);
    let journal = tempfile::tempdir().unwrap();
    let path = journal.path().join("audit.jsonl");
    let how = Carry {
        writer: Some(&writer),
        wait: Some(wait),
        concurrency,
        journal: Some(&path),
        tool: None,
        events: true,
    };
    let ended = Arc::new(Mutex::new(Vec::new()));
    let seen = ended.clone();
    let report = move |t: &Target, update: Update<'_>, _: &Progress| {
        let outcome = match update {
            Update::Ended(outcome, _) => Some(outcome.clone()),
            Update::Requested => None,
        };
        seen.lock().unwrap().push((t.info.name.clone(), outcome));
    };
    let (_, journaled) = actions::carry_out(job, how, Some(Watch::Session(live)), report).await;
    journaled.unwrap();
    ended.lock().unwrap().clone()
}

/// Each target's cluster with its outcome, in the order they ended.
async fn carry(live: &mut Session, job: &Job, concurrency: usize) -> Vec<(String, Outcome)> {
    log(live, job, concurrency)
        .await
        .into_iter()
        .filter_map(|(c, o)| Some((c, o?)))
        .collect()
}

fn gets(sim: &Sim) -> u64 {
    let stats = sim.handle.stats();
    stats["clusters"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c["get"].as_u64().unwrap())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_is_seen_handled_in_the_watch_without_a_single_get() {
    let sim = common::start_with(|c| {
        c.clusters = 8;
        c.reconcile_delay = Duration::from_millis(600);
    })
    .await;
    let mut live = session(&sim).await;
    let job = job(&live, Verb::Reconcile);
    let before = gets(&sim);
    let ended = carry(&mut live, &job, 20).await;
    assert_eq!(ended.len(), 8);
    assert!(ended.iter().all(|(_, o)| *o == Outcome::Done), "{ended:?}");
    assert_eq!(gets(&sim) - before, 0, "no object was polled while waiting");
    // Handled, not merely accepted: the simulator's objects say so.
    for c in sim.handle.truth().iter().filter(|c| !c.management) {
        let client = common::client(&sim.handle.files.fleet, &c.name).await;
        let api: kube::Api<kube::core::DynamicObject> =
            kube::Api::namespaced_with(client, "flux-system", &common::kustomizations());
        let ks = api.get("flux-system").await.unwrap();
        assert_eq!(
            ks.data["status"]["lastHandledReconcileAt"],
            job.intent().token.as_str()
        );
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_cluster_delays_only_its_own_outcome() {
    let sim = common::start_with(|c| {
        c.clusters = 6;
        c.reconcile_delay = Duration::from_millis(200);
    })
    .await;
    let mut live = session(&sim).await;
    let job = job(&live, Verb::Reconcile);
    // The first target's cluster now answers every request 2 s late.
    let slow = job.targets()[0].info.name.clone();
    sim.handle.set_faults(
        &slow,
        Faults {
            slow: Some(Duration::from_secs(2)),
            ..Faults::default()
        },
    );
    let ended = carry(&mut live, &job, 4).await;
    assert!(ended.iter().all(|(_, o)| *o == Outcome::Done), "{ended:?}");
    let order: Vec<&str> = ended.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(order.last(), Some(&slow.as_str()), "{order:?}");
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_bounds_the_patches_in_flight_not_the_waiting() {
    let sim = common::start_with(|c| {
        c.clusters = 12;
        // Controllers slower than all the patches together: waiting must hold no slot.
        c.reconcile_delay = Duration::from_secs(3);
    })
    .await;
    let mut live = session(&sim).await;
    for name in sim.handle.cluster_names() {
        sim.handle.set_faults(
            &name,
            Faults {
                slow: Some(Duration::from_millis(150)),
                ..Faults::default()
            },
        );
    }
    let job = job(&live, Verb::Reconcile);
    let log = log(&mut live, &job, 3).await;
    let ended: Vec<_> = log.iter().filter_map(|(_, o)| o.as_ref()).collect();
    assert_eq!(ended.len(), 12);
    assert!(ended.iter().all(|o| **o == Outcome::Done), "{log:?}");
    // Every reconcile was requested before the first was handled: 4 rounds of 150 ms patches
    // take far less than the controllers' 3 s, and waiting holds no slot.
    let last_requested = log.iter().rposition(|(_, o)| o.is_none()).unwrap();
    let first_ended = log.iter().position(|(_, o)| o.is_some()).unwrap();
    assert!(last_requested < first_ended, "{log:?}");
    let most = sim.handle.stats()["patchesInFlightMax"].as_u64().unwrap();
    assert!(
        (2..=3).contains(&most),
        "{most} patches were in flight at once"
    );
    live.shutdown().await;
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_sharing_a_source_request_it_once_and_each_waits_for_it() {
    let sim = common::start_with(|c| {
        c.clusters = 2;
        c.reconcile_delay = Duration::from_millis(300);
    })
    .await;
    let mut live = session(&sim).await;
    let intent = Intent {
        verb: Verb::ReconcileWithSource,
        user: "test".into(),
        reason: None,
        token: format!("with-source-{}", jiff::Timestamp::now()),
    };
    // Every Kustomization that is not suspended, on both clusters.
    let objects: Vec<_> = live
        .index
        .clusters()
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            c.objects
                .values()
                .filter(|s| s.key.kind == FluxKind::Kustomization && !s.suspended)
                .map(move |s| (ClusterId(i as u32), s.key.clone()))
        })
        .collect();
    let config = Config::defaults();
    let job = admitted(&live.index, objects, intent, &config);
    let planned: Vec<_> = job
        .targets()
        .iter()
        .filter(|t| t.plan.is_ok())
        .cloned()
        .collect();
    assert!(planned.len() >= 4, "{} Kustomizations", planned.len());
    // Patches expected per cluster: one per target, plus one per distinct source.
    let mut expected = std::collections::BTreeMap::<String, usize>::new();
    let mut sources = std::collections::BTreeSet::new();
    for t in &planned {
        let steps = t.plan.as_ref().unwrap();
        *expected.entry(t.info.name.clone()).or_default() += 1;
        for s in steps.iter().filter(|s| s.wait) {
            if sources.insert((t.info.name.clone(), s.key.clone())) {
                *expected.entry(t.info.name.clone()).or_default() += 1;
            }
        }
    }
    assert!(sources.len() < planned.len(), "sources are shared");
    let before = sim.handle.stats();
    let ended = carry(&mut live, &job, 20).await;
    let done = ended.iter().filter(|(_, o)| *o == Outcome::Done).count();
    assert_eq!(done, planned.len(), "{ended:?}");
    let after = sim.handle.stats();
    for (cluster, patches) in expected {
        let sent = after["clusters"][&cluster]["patch"].as_u64().unwrap()
            - before["clusters"][&cluster]["patch"].as_u64().unwrap();
        assert_eq!(sent, patches as u64, "{cluster}");
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

/// `reconcile --with-source --timeout 2s` whose source's controller does not get to it: the
/// source is waited for as the object is, within the timeout the command was given — not
/// within ten times the request timeout (150 s, seen on source-controller stopped) — and the
/// outcome names the source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_not_handled_is_waited_for_within_the_timeout_given() {
    let sim = common::start_with(|c| {
        c.clusters = 1;
        c.workspaces = 1;
        c.reconcile_delay = Duration::from_secs(3_600);
    })
    .await;
    let mut live = session(&sim).await;
    let job = job_on(&live, Verb::ReconcileWithSource, 1);
    let ended = log_waiting(&mut live, &job, 4, Duration::from_secs(2)).await;
    let outcomes: Vec<&Outcome> = ended.iter().filter_map(|(_, o)| o.as_ref()).collect();
    assert_eq!(outcomes.len(), 1, "{ended:?}");
    let said = outcomes[0].message();
    assert!(
        said.contains("source GitRepository") && said.contains("within 2s"),
        "{said}"
    );
    assert!(!said.contains("150s"), "{said}");
    live.shutdown().await;
    sim.handle.shutdown().await;
}
