//! What the simulated fleet holds and how it moves: a scenario.
//!
//! - **uniform** — failures spread evenly (about one object in ten), churn that holds that share,
//!   a new revision every rollout interval, workspace by workspace: a load for tests and
//!   benchmarks.
//! - **story** — a fleet as on-call finds it (`fluxfleet demo`): most clusters entirely ready,
//!   and the trouble concentrated where a real fleet has it:
//!   - a new revision of the fleet repository promoted dev → staging, not yet to prod, that
//!     fails its `infra-controllers` health check on a share of the clusters that took it — one
//!     root cause, with everything that depends on it waiting;
//!   - a handful of clusters in one region whose API servers flap (5xx, slow answers);
//!   - an outage that began as the demo starts: GitHub answers 503 to a few clusters of
//!     another region, failing their fleet and team repositories — different objects, one
//!     incident;
//!   - three long-standing misconfigurations, each on a few clusters, failing for days;
//!   - objects suspended on purpose, with who suspended them and why;
//!   - two clusters nobody can reach.
//!
//!   Churn keeps that shape: objects flake and recover within a minute, and reconciles
//!   refresh statuses; no new revision rolls out on its own.

use std::time::Duration;

use crate::facts::FluxKind;
use crate::faults::Faults;
use crate::flux::outage::Outage;
use crate::rng::Rng;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scenario {
    #[default]
    Uniform,
    Story,
}

/// The environment that took the bad revision first, and the one after it; prod has not.
pub const TOOK_IT: [&str; 2] = ["dev", "staging"];
/// The share of the clusters that took the bad revision on which it fails.
pub const BAD_SHARE: f64 = 0.13;
/// The object the bad revision breaks, everywhere in the same way.
pub const BAD_OBJECT: (FluxKind, &str, &str) =
    (FluxKind::Kustomization, "flux-system", "infra-controllers");
/// On how many of the clusters whose workload the bad revision crashes `pods/log` is forbidden.
pub const LOGS_FORBIDDEN: usize = 2;
/// Of the clusters the bad revision breaks, every fourth (from the second) runs its new image out
/// of memory; the others cannot pull it (its tag does not exist).
pub const OOM_EVERY: usize = 4;
/// The region whose API servers flap, and the share of its clusters that do.
pub const FLAKY_REGION: &str = "ap-southeast-1";
pub const FLAKY_SHARE: f64 = 0.15;
/// The outage: the host, how it fails, the region whose clusters it hits and their share.
pub const OUTAGE: (&str, Outage) = ("github.com", Outage::ServerError);
pub const OUTAGE_REGION: &str = "us-west-2";
pub const OUTAGE_SHARE: f64 = 0.06;
/// How long a flake lasts before the object recovers.
pub const FLAKE: Duration = Duration::from_secs(20);

/// A long-standing misconfiguration: an object that fails the same way on a few clusters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Misconfig {
    pub kind: FluxKind,
    pub namespace: &'static str,
    pub name: &'static str,
    pub stalled: bool,
    /// On how many prod clusters.
    pub clusters: usize,
}

pub const MISCONFIGS: [Misconfig; 3] = [
    // A chart that ran out of install retries: stalled until someone changes it.
    Misconfig {
        kind: FluxKind::HelmRelease,
        namespace: "data",
        name: "redis",
        stalled: true,
        clusters: 2,
    },
    // A team's deploy key rotated on the forge, not in the cluster.
    Misconfig {
        kind: FluxKind::GitRepository,
        namespace: "flux-system",
        name: "payments",
        stalled: false,
        clusters: 3,
    },
    // An overlay that does not build on these clusters: what depends on it waits.
    Misconfig {
        kind: FluxKind::Kustomization,
        namespace: "flux-system",
        name: "infra-configs",
        stalled: false,
        clusters: 2,
    },
];

/// Objects suspended on purpose, by whom and why.
pub const SUSPENDED: [(FluxKind, &str, &str, &str, &str); 2] = [
    (
        FluxKind::HelmRelease,
        "monitoring",
        "kube-prometheus-stack",
        "maria.lopez@example.com",
        "CHG-2231: Prometheus storage migration, resumes after the maintenance window",
    ),
    (
        FluxKind::Kustomization,
        "flux-system",
        "apps",
        "on-call",
        "INC-4410: traffic drained from this cluster while the node pool is replaced",
    ),
];
/// On how many clusters each suspension is.
pub const SUSPENDED_CLUSTERS: usize = 2;

/// Same revision, different result: a Kustomization whose `postBuild` substitutions differ on
/// a few prod clusters (another digest of what it applied), a HelmRelease given other values on
/// one prod cluster, and one whose live objects were changed by hand on one cluster (Drifted).
pub const SUBSTITUTED: (FluxKind, &str, &str) = (FluxKind::Kustomization, "flux-system", "apps");
pub const SUBSTITUTED_CLUSTERS: usize = 3;
pub const OVERRIDDEN: (FluxKind, &str, &str) =
    (FluxKind::HelmRelease, "ingress-nginx", "ingress-nginx");
pub const LIVE_DRIFT: (FluxKind, &str, &str) =
    (FluxKind::HelmRelease, "cert-manager", "cert-manager");
/// A Kustomization whose applied Deployment someone keeps editing by hand on one cluster:
/// kustomize-controller sets it back at every reconcile, and its events say so.
pub const CORRECTED: (FluxKind, &str, &str) =
    (FluxKind::Kustomization, "flux-system", "flux-system");

/// How reconciles behave: a Kustomization that waits minutes on a health check of its own on a
/// few prod clusters (the slow tail), a HelmRelease whose upgrades fail now and then and get
/// through on a retry on one cluster (flapping), and one prod cluster whose kustomize-controller
/// stopped reconciling hours ago while every Kustomization there still says Ready.
pub const SLOW: (FluxKind, &str, &str) = (FluxKind::Kustomization, "flux-system", "infra-configs");
pub const SLOW_CLUSTERS: usize = 3;
pub const FLAPPING: (FluxKind, &str, &str) = (FluxKind::HelmRelease, "apps", "podinfo");
/// How long ago the stale cluster's kustomize-controller last reconciled anything.
pub const STALE_FOR: i64 = 3 * 3600 + 600;

impl Scenario {
    pub fn parse(name: &str) -> Result<Scenario, String> {
        match name {
            "uniform" => Ok(Scenario::Uniform),
            "story" => Ok(Scenario::Story),
            other => Err(format!(
                "unknown scenario {other:?}: story (a fleet with a story, the demo's) or uniform \
                 (failures spread evenly, for load tests)"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Uniform => "uniform",
            Scenario::Story => "story",
        }
    }
}

/// The story's cast: which workload clusters play which part, picked once from the seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cast {
    /// Took the bad revision and fail on it.
    pub bad: Vec<usize>,
    /// Per misconfiguration (in [`MISCONFIGS`] order), the clusters that have it.
    pub misconfigured: Vec<Vec<usize>>,
    /// Per suspension (in [`SUSPENDED`] order), the clusters where it is suspended.
    pub suspended: Vec<Vec<usize>>,
    pub flaky: Vec<usize>,
    pub unreachable: Vec<usize>,
    /// Where [`OUTAGE`] hits, from the start.
    pub outage: Vec<usize>,
    /// Where [`SUBSTITUTED`], [`OVERRIDDEN`] and [`LIVE_DRIFT`] differ from their copies.
    pub substituted: Vec<usize>,
    pub overridden: Vec<usize>,
    pub live_drift: Vec<usize>,
    /// Where [`CORRECTED`]'s objects are edited by hand (a cluster of no other part: not the
    /// stale one, whose controller corrects nothing).
    pub corrected: Vec<usize>,
    /// Where [`SLOW`] is slow, [`FLAPPING`] flaps, and kustomize-controller stopped.
    pub slow: Vec<usize>,
    pub flapping: Vec<usize>,
    pub stale: Vec<usize>,
}

/// A workload cluster as the story sees it: its index, name and labels.
pub struct Extra<'a> {
    pub index: usize,
    pub name: &'a str,
    pub env: &'a str,
    pub region: &'a str,
}

impl Cast {
    /// Casts the workload clusters: each part goes to clusters no other part has, so that every
    /// trouble stands on its own.
    pub fn pick(seed: u64, clusters: &[Extra<'_>]) -> Cast {
        let mut rng = Rng::fork(seed, "story");
        let mut taken = vec![false; clusters.iter().map(|c| c.index + 1).max().unwrap_or(0)];
        let mut cast = Cast::default();
        let took: Vec<&Extra> = clusters
            .iter()
            .filter(|c| TOOK_IT.contains(&c.env))
            .collect();
        let mut pick = |from: &mut dyn Iterator<Item = &Extra>, n: usize, rng: &mut Rng| {
            let free: Vec<usize> = from.map(|c| c.index).filter(|i| !taken[*i]).collect();
            let mut chosen = Vec::new();
            while chosen.len() < n.min(free.len()) {
                let i = free[rng.below(free.len())];
                if !chosen.contains(&i) {
                    chosen.push(i);
                }
            }
            for i in &chosen {
                taken[*i] = true;
            }
            chosen.sort_unstable();
            chosen
        };
        let bad = ((took.len() as f64 * BAD_SHARE).round() as usize).max(1);
        cast.bad = pick(&mut took.iter().copied(), bad, &mut rng);
        for m in MISCONFIGS {
            let prod = &mut clusters.iter().filter(|c| c.env == "prod");
            cast.misconfigured.push(pick(prod, m.clusters, &mut rng));
        }
        for _ in SUSPENDED {
            let all = &mut clusters.iter();
            cast.suspended.push(pick(all, SUSPENDED_CLUSTERS, &mut rng));
        }
        let region: Vec<&Extra> = clusters
            .iter()
            .filter(|c| c.region == FLAKY_REGION)
            .collect();
        let flaky = ((region.len() as f64 * FLAKY_SHARE).round() as usize).max(1);
        cast.flaky = pick(&mut region.into_iter(), flaky, &mut rng);
        cast.unreachable = pick(&mut clusters.iter(), 2, &mut rng);
        let region: Vec<&Extra> = clusters
            .iter()
            .filter(|c| c.region == OUTAGE_REGION)
            .collect();
        let hit = ((region.len() as f64 * OUTAGE_SHARE).round() as usize).max(2);
        cast.outage = pick(&mut region.into_iter(), hit, &mut rng);
        // The variants stay a few among many copies, so that most copies are the norm.
        let prod = clusters.iter().filter(|c| c.env == "prod").count();
        let substituted = SUBSTITUTED_CLUSTERS.min(prod / 5);
        let prods = &mut clusters.iter().filter(|c| c.env == "prod");
        cast.substituted = pick(prods, substituted, &mut rng);
        let prods = &mut clusters.iter().filter(|c| c.env == "prod");
        cast.overridden = pick(prods, usize::from(prod >= 3), &mut rng);
        let all = &mut clusters.iter();
        cast.live_drift = pick(all, usize::from(clusters.len() >= 3), &mut rng);
        let prods = &mut clusters.iter().filter(|c| c.env == "prod");
        cast.slow = pick(prods, SLOW_CLUSTERS.min(prod / 5), &mut rng);
        let all = &mut clusters.iter();
        cast.flapping = pick(all, usize::from(clusters.len() >= 3), &mut rng);
        let prods = &mut clusters.iter().filter(|c| c.env == "prod");
        cast.stale = pick(prods, usize::from(prod >= 5), &mut rng);
        let all = &mut clusters.iter();
        cast.corrected = pick(all, usize::from(clusters.len() >= 3), &mut rng);
        cast
    }

    /// The faults the story gives cluster `index`, over those the spec gave it.
    pub fn faults(&self, index: usize, mut faults: Faults) -> Faults {
        if self.flaky.contains(&index) {
            faults.error5xx = Some(0.25);
            faults.slow = Some(Duration::from_millis(1500));
        }
        if self.unreachable.contains(&index) {
            faults.unreachable = true;
        }
        // RBAC that keeps logs from fluxfleet's role on the first clusters whose workload the bad
        // revision crashes: their evidence says so instead of a log tail.
        if self
            .bad_position(index)
            .is_some_and(|p| self.oom_killed(index) && p < LOGS_FORBIDDEN * OOM_EVERY)
        {
            faults.forbidden_logs = true;
        }
        faults
    }

    /// Where cluster `index` stands among those the bad revision breaks.
    pub fn bad_position(&self, index: usize) -> Option<usize> {
        self.bad.iter().position(|&i| i == index)
    }

    /// Whether the bad revision's workload runs out of memory on cluster `index` (else its
    /// image cannot be pulled).
    pub fn oom_killed(&self, index: usize) -> bool {
        self.bad_position(index).is_some_and(|p| p % OOM_EVERY == 1)
    }

    /// The rollout generation cluster `index` in `env` runs: the newest where the bad revision
    /// arrived, the one before in prod.
    pub fn generation(env: &str, latest: usize) -> usize {
        if TOOK_IT.contains(&env) {
            latest
        } else {
            latest.saturating_sub(1)
        }
    }

    /// What the story does to object `kind` `namespace/name` on cluster `index`.
    pub fn part(&self, index: usize, kind: FluxKind, namespace: &str, name: &str) -> Part {
        if self.bad.contains(&index) && (kind, namespace, name) == BAD_OBJECT {
            return Part::Bad;
        }
        for (m, on) in MISCONFIGS.iter().zip(&self.misconfigured) {
            if on.contains(&index) && (m.kind, m.namespace, m.name) == (kind, namespace, name) {
                return Part::Misconfigured(*m);
            }
        }
        for (s, on) in SUSPENDED.iter().zip(&self.suspended) {
            if on.contains(&index) && (s.0, s.1, s.2) == (kind, namespace, name) {
                return Part::Suspended { by: s.3, why: s.4 };
            }
        }
        for (object, on, drift) in [
            (SUBSTITUTED, &self.substituted, Drift::Substituted),
            (OVERRIDDEN, &self.overridden, Drift::Overridden),
            (LIVE_DRIFT, &self.live_drift, Drift::Live),
            (CORRECTED, &self.corrected, Drift::Corrected),
        ] {
            if on.contains(&index) && object == (kind, namespace, name) {
                return Part::Drift(drift);
            }
        }
        if self.stale.contains(&index) && kind == FluxKind::Kustomization {
            return Part::Runs(Runs::Stale);
        }
        for (object, on, runs) in [
            (SLOW, &self.slow, Runs::Slow),
            (FLAPPING, &self.flapping, Runs::Flapping),
        ] {
            if on.contains(&index) && object == (kind, namespace, name) {
                return Part::Runs(runs);
            }
        }
        Part::None
    }
}

/// How a copy differs from the others on its revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drift {
    /// Its `postBuild` substitutions differ: it applied other manifests.
    Substituted,
    /// Its values differ: another config digest.
    Overridden,
    /// Its live objects were changed by hand: Drifted=True.
    Live,
    /// Its live objects are changed by hand again and again, and its controller sets them
    /// back (a Kustomization: its events tell each apply that changed them).
    Corrected,
}

impl Drift {
    pub fn name(self) -> &'static str {
        match self {
            Drift::Substituted => "substituted",
            Drift::Overridden => "values",
            Drift::Live => "live",
            Drift::Corrected => "corrected",
        }
    }
}

/// How a copy's runs differ from its other copies'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// It waits minutes on a health check of its own.
    Slow,
    /// Its upgrades fail now and then and a retry gets through.
    Flapping,
    /// Its controller stopped reconciling it [`STALE_FOR`] ago.
    Stale,
}

impl Runs {
    pub fn name(self) -> &'static str {
        match self {
            Runs::Slow => "slow",
            Runs::Flapping => "flapping",
            Runs::Stale => "stale",
        }
    }
}

/// An object's part in the story.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    None,
    /// Fails on the bad revision.
    Bad,
    Misconfigured(Misconfig),
    Suspended {
        by: &'static str,
        why: &'static str,
    },
    Drift(Drift),
    Runs(Runs),
}
