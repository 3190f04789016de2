//! Chaos as a measurement: the engine watches a simulated fleet while every fault the simulator
//! has, churn and rollouts run for a while; then the faults that can end do, the churn stops,
//! and the fleet's index must come to equal the simulator's truth exactly. The report counts
//! what the index lost, duplicated, invented or shows with the wrong health, and how long it took
//! to agree. `cargo bench --bench chaos` runs it at full scale; `tests/chaos.rs` runs a small one and `tests/engine.rs` compares
//! with it. It lives beside the tests, not in either crate: it drives the client against the
//! simulator.

// Each user takes what it needs: the test, the engine's tests and the benchmark.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use fluxfleet::config;
use fluxfleet::fleet::{FluxKind, Health, Index, Phase};
use fluxfleet::inventory;
use fluxfleet::session::Session;
use fluxfleet_sim::{Config, Error, Handle, faults};

// The includer provides `truth` (tests/common/truth.rs) at its root.
use crate::truth;

/// Every fault kind the simulator has, at shares that touch each at least once.
pub const EVERY_FAULT: &str = "unreachable=1%,slow=2%:4s,flap=3%:5s,gone=3%:4s,error5xx=3%:30%,\
expired-token=2%:10s,no-flux=1%,old-flux=3%,forbidden=2%:HelmRelease,drain=1%:60s,\
handover=2%:20s,silent=1%";

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan {
    pub clusters: usize,
    pub objects: usize,
    pub faults: faults::Spec,
    /// Failures and recoveries per second across the fleet.
    pub churn: f64,
    pub rollout_interval: Duration,
    pub rollout_step: Duration,
    /// How long the faults, the churn and the rollouts run.
    pub active: Duration,
    /// How long the index may take to agree with the truth once they stop.
    pub settle_within: Duration,
    pub seed: u64,
    /// The faults keep running while the index is compared (only the churn and the rollouts
    /// stop): flapping watches must not make a cluster look down, nor lose a change.
    pub faults_stay: bool,
    /// How long the index is watched on once it agreed, compared every quarter second: the
    /// report keeps the most objects ever seen on clusters not shown live, and ends with the
    /// last comparison's differences.
    pub observe: Duration,
}

/// What the index showed once everything stopped, against what the simulator holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Clusters compared (reachable workload clusters).
    pub clusters: usize,
    /// Flux objects the simulator holds on them.
    pub objects: usize,
    /// Held by the simulator, missing from the index.
    pub lost: usize,
    /// Shown more than once: a cluster listed twice counts each of its objects again.
    pub duplicated: usize,
    /// Shown, but the simulator does not hold them (deleted, or on another cluster).
    pub extra: usize,
    /// Shown with a health or suspension other than the simulator's.
    pub wrong_health: usize,
    /// Writes the simulator made while active (objects changed by churn, rollouts and
    /// reconciles, and their events).
    pub changes: u64,
    /// How long after the stop the index agreed; None when it never did.
    pub agreed_after: Option<Duration>,
    /// Of `objects`, those on clusters the index did not show live: at the comparison that
    /// agreed, or the most at any comparison while observed after it.
    pub not_live: usize,
    /// Clusters shown with watch restarts at the end.
    pub restarted: usize,
    /// A few differences, for the reader: `cluster: kind namespace/name (what is wrong)`.
    pub examples: Vec<String>,
}

impl Report {
    /// Nothing lost, duplicated, invented or wrong.
    pub fn exact(&self) -> bool {
        self.lost == 0 && self.duplicated == 0 && self.extra == 0 && self.wrong_health == 0
    }
}

type Object = (FluxKind, String, String);
/// One cluster's objects with their health and whether they are suspended.
type Objects = BTreeMap<Object, (Health, bool)>;
type Picture = BTreeMap<String, Objects>;

/// Runs `plan` with the simulator's files in `dir`, the engine configured by `engine`.
pub async fn run(plan: &Plan, dir: &Path, engine: &config::EngineSection) -> Result<Report, Error> {
    let workspaces = (plan.clusters / 50).clamp(1, 12);
    let sim = fluxfleet_sim::start(Config {
        clusters: plan.clusters,
        workspaces,
        objects: plan.objects,
        seed: plan.seed,
        out: dir.to_path_buf(),
        faults: plan.faults.clone(),
        churn: plan.churn,
        reconcile_delay: Duration::from_millis(300),
        rollout_interval: plan.rollout_interval,
        rollout_step: plan.rollout_step,
        bookmark_interval: Duration::from_secs(5),
        ..Config::default()
    })
    .await?;
    let request = inventory::Lookup {
        dirs: vec![sim.files.dir.join("kubeconfigs")],
        ..inventory::Lookup::default()
    };
    let fleet = inventory::load(&request, &config::Config::defaults());
    let mut live = Session::kube(&fleet, engine);
    let writes_before = sim.writes();
    live.pump(plan.active).await;
    let changes = sim.writes() - writes_before;
    if plan.faults_stay {
        // Its rollouts stop with it.
        sim.set_churn(0.0);
    } else {
        sim.calm();
    }

    let stopped = Instant::now();
    let deadline = stopped + plan.settle_within;
    let mut report;
    loop {
        live.pump(Duration::from_millis(250)).await;
        report = difference(&live.index, &sim);
        if report.exact() {
            report.agreed_after = Some(stopped.elapsed());
            break;
        }
        if Instant::now() > deadline {
            break;
        }
    }
    if report.agreed_after.is_some() {
        let (agreed_after, mut not_live) = (report.agreed_after, report.not_live);
        let until = Instant::now() + plan.observe;
        while Instant::now() < until {
            live.pump(Duration::from_millis(250)).await;
            report = difference(&live.index, &sim);
            not_live = not_live.max(report.not_live);
        }
        report.agreed_after = agreed_after;
        report.not_live = not_live;
    }
    report.changes = changes;
    live.shutdown().await;
    sim.shutdown().await;
    Ok(report)
}

/// How the index differs from what the simulator holds now, on every workload cluster a client
/// can reach.
pub fn difference(index: &Index, sim: &Handle) -> Report {
    let truth = truth(sim);
    let mut report = compare(&shown(index), &truth);
    let live: BTreeSet<&str> = index
        .clusters()
        .iter()
        .filter(|c| c.connection.phase == Phase::Live)
        .map(|c| c.info.name.as_str())
        .collect();
    report.not_live = truth
        .iter()
        .filter(|(name, _)| !live.contains(name.as_str()))
        .map(|(_, objects)| objects.len())
        .sum();
    report.restarted = index
        .clusters()
        .iter()
        .filter(|c| c.connection.restarts > 0)
        .count();
    report
}

/// What the index shows, per cluster; a cluster listed twice keeps its first entry and the
/// second counts as duplicated.
fn shown(index: &Index) -> Vec<(String, Objects)> {
    index
        .clusters()
        .iter()
        .map(|c| {
            let objects = c
                .objects
                .values()
                .map(|s| {
                    (
                        (
                            s.key.kind,
                            s.key.namespace.to_string(),
                            s.key.name.to_string(),
                        ),
                        (s.health, s.suspended),
                    )
                })
                .collect();
            (c.info.name.clone(), objects)
        })
        .collect()
}

/// What the simulator holds on every workload cluster a client can reach.
fn truth(sim: &Handle) -> Picture {
    sim.truth()
        .into_iter()
        .filter(|c| !c.management && !c.faults.iter().any(|f| f == "unreachable"))
        .map(|c| {
            let objects = c
                .objects
                .into_iter()
                .filter_map(|o| {
                    let kind = FluxKind::from_kind(&o.kind)?;
                    Some((
                        (kind, o.namespace, o.name),
                        (truth::seen(o.health), o.suspended),
                    ))
                })
                .collect();
            (c.name, objects)
        })
        .collect()
}

fn compare(shown: &[(String, Objects)], truth: &Picture) -> Report {
    let mut report = Report {
        clusters: truth.len(),
        objects: truth.values().map(BTreeMap::len).sum(),
        ..Report::default()
    };
    let note = |report: &mut Report, cluster: &str, o: &Object, what: String| {
        if report.examples.len() < 10 {
            report
                .examples
                .push(format!("{cluster}: {} {}/{} ({what})", o.0, o.1, o.2));
        }
    };
    let mut seen = BTreeSet::new();
    for (cluster, objects) in shown {
        if !seen.insert(cluster.as_str()) {
            report.duplicated += objects.len();
            continue;
        }
        let held = truth.get(cluster);
        for (o, state) in objects {
            match held.and_then(|h| h.get(o)) {
                None => {
                    report.extra += 1;
                    note(&mut report, cluster, o, "not on the cluster".into());
                }
                Some(t) if t != state => {
                    report.wrong_health += 1;
                    note(
                        &mut report,
                        cluster,
                        o,
                        format!("shown {:?}, is {:?}", state, t),
                    );
                }
                Some(_) => {}
            }
        }
    }
    let empty = BTreeMap::new();
    for (cluster, held) in truth {
        let objects = shown
            .iter()
            .find(|(name, _)| name == cluster)
            .map_or(&empty, |(_, o)| o);
        for o in held.keys().filter(|o| !objects.contains_key(*o)) {
            report.lost += 1;
            note(&mut report, cluster, o, "missing".into());
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str) -> Object {
        (FluxKind::Kustomization, "flux-system".into(), name.into())
    }

    #[test]
    fn every_kind_of_difference_is_counted() {
        let ready = (Health::Ready, false);
        let truth: Picture = BTreeMap::from([
            (
                "a".to_string(),
                BTreeMap::from([(object("apps"), ready), (object("infra"), ready)]),
            ),
            ("b".to_string(), BTreeMap::from([(object("apps"), ready)])),
        ]);
        let shown = vec![
            (
                "a".to_string(),
                BTreeMap::from([
                    (object("apps"), (Health::Failed, false)),
                    (object("gone"), ready),
                ]),
            ),
            ("a".to_string(), BTreeMap::from([(object("apps"), ready)])),
        ];
        let report = compare(&shown, &truth);
        assert_eq!(
            (
                report.lost,
                report.duplicated,
                report.extra,
                report.wrong_health
            ),
            (2, 1, 1, 1),
            "a lost infra and b lost apps; a listed twice; gone invented; apps failed: {report:?}"
        );
        assert!(!report.exact());
        let same: Vec<_> = truth.clone().into_iter().collect();
        assert!(compare(&same, &truth).exact());
    }
}
