//! A small Flux controller for the simulated fleet: it handles reconcile requests after a short
//! delay, leaves suspended objects alone, honours HelmRelease forceAt/resetAt (FACTS §2.5), makes
//! objects fail and recover at the churn rate, rolls new revisions out workspace by workspace, and
//! fires the time-based faults (410 storms, expiring tokens).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

mod depends;
mod outage;
mod reconcile;
mod resync;
mod rollout;

use super::clock::Clock;
use super::flux::Intent;
use super::flux::{self, Context};
use super::populate::event;
use super::resources::Res;
use super::revisions::{consumed_revision, source_of, source_revision};
use super::rng::Rng;
use super::store::Store;
use super::world::{Cluster, World};
use crate::facts::{FluxKind, Health};

/// Told by the API handlers after a Flux object changed.
#[derive(Debug)]
pub enum Msg {
    Changed {
        cluster: usize,
        kind: FluxKind,
        namespace: String,
        name: String,
    },
    /// A new churn rate (0 stops churn and new rollouts; objects in flight still settle).
    SetChurn(f64),
    /// The workspace at this position moves to the next rollout generation now (a new one if
    /// it already runs the newest).
    Promote(usize),
    /// One object fails (its kind's way) or is fixed now; counted in flight by the sender.
    SetReady {
        cluster: usize,
        key: (FluxKind, String, String),
        ready: bool,
    },
    /// A shared host fails on these clusters (`outage` None: its outage is over); counted in
    /// flight by the sender.
    Outage {
        host: String,
        outage: Option<flux::outage::Outage>,
        clusters: Vec<usize>,
    },
}

pub type Sender = mpsc::UnboundedSender<Msg>;

#[derive(Clone, Debug)]
pub struct Settings {
    pub seed: u64,
    /// Failures and recoveries per second across the fleet; 0 disables churn and rollouts.
    pub churn: f64,
    pub reconcile_delay: Duration,
    pub rollout_interval: Duration,
    pub rollout_step: Duration,
    /// How often the Flux Operator writes each cluster's report.
    pub report_every: Duration,
}

type Key = (FluxKind, String, String);

#[derive(Debug)]
enum Job {
    Start {
        cluster: usize,
        key: Key,
        /// A rollout that fails here: the reconcile ends in this failure.
        fail: Option<crate::flux::Failure>,
    },
    Finish {
        cluster: usize,
        key: Key,
        target: Intent,
    },
    NewRelease,
    Ring {
        workspace: usize,
        generation: usize,
    },
    /// A 410 storm on a cluster, every `faults.gone`, while that fault lasts.
    Compact {
        cluster: usize,
    },
    ExpireTokens {
        cluster: usize,
    },
    /// A dependant's retry while its dependencies are not ready, or after one turned.
    Dependency {
        cluster: usize,
        key: Key,
    },
    /// The Flux Operator writing the cluster's report, every `report_every`.
    Report {
        cluster: usize,
    },
    /// The story's flake ends: the object is ready again.
    Recover {
        cluster: usize,
        key: Key,
    },
    /// Every Kustomization on a cluster reconciled at its interval, finding nothing new.
    Resync {
        cluster: usize,
    },
}

impl Job {
    /// Counted in [`World::in_flight`] until it has run.
    fn moves_objects(&self) -> bool {
        matches!(
            self,
            Job::Start { .. } | Job::Finish { .. } | Job::Ring { .. } | Job::Dependency { .. }
        )
    }
}

struct Controller {
    world: Arc<World>,
    clock: Clock,
    settings: Settings,
    rng: Rng,
    timers: BTreeMap<(Instant, u64), Job>,
    seq: u64,
    /// Rollout generation per workspace.
    rings: Vec<usize>,
    latest: usize,
    /// Sources failing in an outage: its host, and what each was meant to be before.
    outages: HashMap<(usize, Key), (String, Intent)>,
    /// Kustomizations are reconciled at their interval ([`Job::Resync`]): scheduled once churn
    /// starts.
    resyncing: bool,
}

impl Controller {
    fn at(&mut self, when: Instant, job: Job) {
        if job.moves_objects() {
            self.world.in_flight.fetch_add(1, Ordering::Relaxed);
        }
        self.seq += 1;
        self.timers.insert((when, self.seq), job);
    }

    fn after(&mut self, delay: Duration, job: Job) {
        self.at(Instant::now() + delay, job);
    }

    fn cluster(&self, i: usize) -> Option<Arc<Cluster>> {
        self.world.clusters.get(i).cloned()
    }

    /// The revision an object should reach now: its source's artifact for appliers, its own
    /// artifact (or its ring's revision) for sources.
    fn revision(&self, store: &Store, cluster: &Cluster, kind: FluxKind, obj: &Value) -> String {
        if let Some((skind, sns, sname)) = source_of(kind, obj) {
            if let Some(src) = store.get(Res::Flux(skind), &sns, &sname)
                && let Some(rev) = src
                    .value()
                    .pointer("/status/artifact/revision")
                    .and_then(Value::as_str)
            {
                return consumed_revision(kind, skind, rev);
            }
            return obj
                .pointer("/status/lastAttemptedRevision")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
        }
        if let Some(rev) = obj
            .pointer("/status/artifact/revision")
            .and_then(Value::as_str)
        {
            return rev.to_string();
        }
        let ring = self
            .world
            .workspaces
            .iter()
            .position(|w| *w == cluster.workspace)
            .and_then(|i| self.rings.get(i))
            .copied()
            .unwrap_or(self.latest);
        source_revision(self.settings.seed, kind, obj, ring)
    }

    /// Re-renders one object's status for `intent`, stores it, and records an event.
    fn write(
        &mut self,
        cluster: &Cluster,
        key: &Key,
        intent: Intent,
        handled: Option<String>,
        revision: Option<String>,
        emit: bool,
    ) {
        let mut store = cluster.store();
        let Some(current) = store.get(Res::Flux(key.0), &key.1, &key.2).cloned() else {
            return;
        };
        let mut obj = current.value();
        let revision = revision.unwrap_or_else(|| self.revision(&store, cluster, key.0, &obj));
        let now = self.clock.now();
        let ctx = Context {
            kind: key.0,
            revision: &revision,
            now: &now,
            handled: handled.as_deref(),
            flux: cluster.flux.unwrap_or(crate::facts::FluxRelease::LATEST),
        };
        obj["status"] = flux::status::render_status(&obj, intent, &ctx);
        let ev = emit.then(|| {
            let (reason, message, warning) = match (intent.health, intent.failure) {
                (Health::Failed | Health::Stalled, Some(f)) => {
                    let (r, m) = flux::failure_text(f, &obj, &ctx);
                    (r.to_string(), m, true)
                }
                _ => {
                    let m = match key.0 {
                        FluxKind::Kustomization | FluxKind::HelmRelease => format!(
                            "Reconciliation finished in 1.204s, next run in {}",
                            obj.pointer("/spec/interval")
                                .and_then(Value::as_str)
                                .unwrap_or("10m0s")
                        ),
                        _ => format!("stored artifact for revision '{revision}'"),
                    };
                    ("ReconciliationSucceeded".to_string(), m, false)
                }
            };
            event(
                &mut self.rng,
                &self.clock,
                &obj,
                key.0,
                &reason,
                &message,
                warning,
            )
        });
        let stored = store.put(Res::Flux(key.0), obj, Some(intent));
        let mut rv = stored.rv;
        if let Some(ev) = ev {
            rv = store.put(Res::Event, ev, None).rv;
        }
        drop(store);
        cluster.notify(rv);
        if ready(current.intent) != ready(Some(intent)) {
            self.readiness_changed(cluster.index, key);
        }
    }

    fn run_job(&mut self, job: Job) {
        match job {
            Job::Start { cluster, key, fail } => self.start(cluster, key, fail),
            Job::Finish {
                cluster,
                key,
                target,
            } => self.finish(cluster, key, target),
            Job::NewRelease => {
                self.latest += 1;
                for w in 0..self.world.workspaces.len() {
                    let step = self.settings.rollout_step * w as u32;
                    self.after(
                        step,
                        Job::Ring {
                            workspace: w,
                            generation: self.latest,
                        },
                    );
                }
                if self.settings.churn > 0.0 {
                    self.after(self.settings.rollout_interval, Job::NewRelease);
                }
            }
            Job::Ring {
                workspace,
                generation,
            } => self.ring(workspace, generation),
            Job::Recover { cluster, key } => self.recover(cluster, key),
            Job::Resync { cluster } => self.resync(cluster),
            Job::Report { cluster } => {
                if let Some(c) = self.cluster(cluster) {
                    super::operator::refresh(&c, &self.clock);
                    self.after(self.settings.report_every, Job::Report { cluster });
                }
            }
            Job::Compact { cluster } => {
                if let Some(c) = self.cluster(cluster) {
                    // The storm ends when the fault is lifted (`Handle::calm`, `set_faults`).
                    let Some(every) = c.faults().gone else {
                        return;
                    };
                    let rv = {
                        let mut store = c.store();
                        store.compact();
                        store.resource_version()
                    };
                    // Wake every watch so that each sees its resourceVersion is gone.
                    c.changed.send_modify(|v| *v = rv);
                    self.after(every, Job::Compact { cluster });
                }
            }
            Job::Dependency { cluster, key } => self.recheck(cluster, key),
            Job::ExpireTokens { cluster } => {
                if let Some(c) = self.cluster(cluster)
                    && c.faults().expired_token.is_some()
                {
                    c.tokens_valid.store(false, Ordering::Relaxed);
                }
            }
        }
    }
}

/// Runs until shutdown. `rings` holds each workspace's starting rollout generation.
pub async fn run(
    world: Arc<World>,
    clock: Clock,
    settings: Settings,
    rings: Vec<usize>,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    shutdown: CancellationToken,
) {
    let latest = rings.iter().copied().max().unwrap_or(0);
    let mut ctl = Controller {
        rng: Rng::fork(settings.seed, "controller"),
        world,
        clock,
        settings,
        timers: BTreeMap::new(),
        seq: 0,
        rings,
        latest,
        outages: HashMap::new(),
        resyncing: false,
    };
    ctl.schedule_start();
    let tick = Duration::from_millis(100);
    let mut next_tick = Instant::now() + tick;
    let mut budget = 0.0f64;
    loop {
        let next_timer = ctl.timers.keys().next().map(|(t, _)| *t);
        let churn = ctl.settings.churn;
        tokio::select! {
            _ = shutdown.cancelled() => return,
            msg = rx.recv() => match msg {
                Some(msg) => {
                    if ctl.on_message(msg) {
                        next_tick = Instant::now() + tick;
                    }
                }
                None => return,
            },
            _ = async { match next_timer { Some(t) => sleep_until(t).await, None => std::future::pending().await } } => {
                ctl.run_due(Instant::now());
            }
            _ = sleep_until(next_tick), if churn > 0.0 => {
                next_tick += tick;
                budget += churn * tick.as_secs_f64();
                while budget >= 1.0 {
                    budget -= 1.0;
                    ctl.churn_once();
                }
            }
        }
    }
}

impl Controller {
    /// The jobs a fleet starts with: each cluster's timed faults, each operator's first report
    /// (spread over the interval, as operators started at different times are), and with churn
    /// the first new release.
    fn schedule_start(&mut self) {
        for c in self.world.clone().clusters.iter() {
            let f = c.faults();
            if let Some(every) = f.gone {
                self.after(every, Job::Compact { cluster: c.index });
            }
            if let Some(after) = f.expired_token {
                self.after(after, Job::ExpireTokens { cluster: c.index });
            }
            if c.operator {
                let every = self.settings.report_every;
                let first = every.mul_f64((c.index % 97 + 1) as f64 / 97.0);
                self.after(first, Job::Report { cluster: c.index });
            }
        }
        if self.settings.churn > 0.0 && self.world.story.is_none() {
            let interval = self.settings.rollout_interval;
            self.after(interval, Job::NewRelease);
        }
        if self.settings.churn > 0.0 {
            self.schedule_resyncs();
        }
        // The story's outage begins as the demo starts.
        if let Some(hit) = self.world.story.as_ref().map(|c| c.outage.clone()) {
            let (host, outage) = crate::scenario::OUTAGE;
            self.outage(host, Some(outage), &hit);
        }
    }

    /// Handles one message from the server or the handle; true when it set the churn rate.
    fn on_message(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Changed {
                cluster,
                kind,
                namespace,
                name,
            } => self.changed(cluster, (kind, namespace, name)),
            Msg::Promote(workspace) => {
                let at = self.rings.get(workspace).copied().unwrap_or(self.latest);
                if at >= self.latest {
                    self.latest += 1;
                }
                self.ring(workspace, at + 1);
                self.world.in_flight.fetch_sub(1, Ordering::Relaxed);
            }
            Msg::SetReady {
                cluster,
                key,
                ready,
            } => {
                if let Some(c) = self.cluster(cluster) {
                    let intent = if ready {
                        Intent {
                            health: Health::Ready,
                            failure: None,
                        }
                    } else {
                        let failure = *self.rng.pick(flux::Failure::for_kind(key.0).0);
                        Intent {
                            health: Health::Failed,
                            failure: Some(failure),
                        }
                    };
                    self.write(&c, &key, intent, None, None, true);
                }
                self.world.in_flight.fetch_sub(1, Ordering::Relaxed);
            }
            Msg::Outage {
                host,
                outage,
                clusters,
            } => {
                self.outage(&host, outage, &clusters);
                self.world.in_flight.fetch_sub(1, Ordering::Relaxed);
            }
            Msg::SetChurn(rate) => {
                if self.settings.churn <= 0.0 && rate > 0.0 && self.world.story.is_none() {
                    let interval = self.settings.rollout_interval;
                    self.after(interval, Job::NewRelease);
                }
                self.settings.churn = rate;
                if rate > 0.0 {
                    self.schedule_resyncs();
                }
                return true;
            }
        }
        false
    }

    /// Runs every job due by `now`, in order.
    fn run_due(&mut self, now: Instant) {
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let job = entry.remove();
            let counted = job.moves_objects();
            self.run_job(job);
            if counted {
                self.world.in_flight.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}
/// Whether an intent leaves the object ready (what its dependants read).
fn ready(intent: Option<Intent>) -> bool {
    intent.is_none_or(|i| i.health == Health::Ready)
}
