//! Which workloads a simulated cluster runs and what is wrong with each. Nothing is stored: a
//! workload is derived, whenever it is asked for, from the Flux object that deploys it (a
//! Kustomization's one Deployment or Job, a HelmRelease's Deployment), that object's intent and
//! the cluster's part in the story — so 10,000 clusters cost no memory for workloads, and what is
//! served always agrees with the Flux status beside it.

use serde_json::Value;

use crate::facts::{FluxKind, Health};
use crate::flux::{Failure, workload_kind, workload_namespace};
use crate::scenario::{Cast, Part};
use crate::store::Store;
use crate::world::Cluster;

/// What is wrong with a workload, as `/sim/truth` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Healthy,
    /// Its new image's tag does not exist: ImagePullBackOff, "not found".
    ImageNotFound,
    /// The registry refuses the pull: ImagePullBackOff, "pull access denied".
    RegistryDenied,
    /// The new container exits 1 at start with a panic in its log: CrashLoopBackOff.
    CrashLoop,
    /// The new container is killed for memory: CrashLoopBackOff, last state OOMKilled.
    OomKilled,
    /// No node has room for the new pod: Pending, "Insufficient cpu".
    Unschedulable,
    /// The new container runs and never passes its readiness probe.
    ReadinessProbe,
    /// A Job whose pods all failed: BackoffLimitExceeded.
    BackoffLimit,
    /// 5,000 pods, a 10 MB log line, terminal escapes in events (the `hostile-workloads` fault).
    Hostile,
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Fault::Healthy => "healthy",
            Fault::ImageNotFound => "image-not-found",
            Fault::RegistryDenied => "registry-denied",
            Fault::CrashLoop => "crash-loop",
            Fault::OomKilled => "oom-killed",
            Fault::Unschedulable => "unschedulable",
            Fault::ReadinessProbe => "readiness-probe",
            Fault::BackoffLimit => "backoff-limit",
            Fault::Hostile => "hostile",
        }
    }

    /// The faults a failing Deployment is given in the uniform fleet, by turns.
    const DEPLOYMENT: [Fault; 6] = [
        Fault::ImageNotFound,
        Fault::RegistryDenied,
        Fault::CrashLoop,
        Fault::OomKilled,
        Fault::Unschedulable,
        Fault::ReadinessProbe,
    ];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Deployment,
    Job,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Deployment => "Deployment",
            Kind::Job => "Job",
        }
    }
}

/// One workload, as the simulator means it.
#[derive(Clone, Debug)]
pub struct Workload {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
    /// The Flux object that deploys it: kind, namespace, name.
    pub owner: (FluxKind, String, String),
    pub fault: Fault,
    /// The revision its newest pods run (the owner's last attempted one).
    pub revision: String,
    /// The revision its older pods still run, while a rollout of `revision` fails.
    pub previous: Option<String>,
    /// The cluster's name, which makes pod names differ between clusters.
    pub cluster: String,
}

impl Workload {
    /// Its labels, as kustomize-controller or helm-controller set them, with the app's own.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        let (kind, ns, name) = &self.owner;
        let (owner_name, owner_ns) = match kind {
            FluxKind::HelmRelease => (
                "helm.toolkit.fluxcd.io/name",
                "helm.toolkit.fluxcd.io/namespace",
            ),
            _ => (
                "kustomize.toolkit.fluxcd.io/name",
                "kustomize.toolkit.fluxcd.io/namespace",
            ),
        };
        vec![
            ("app.kubernetes.io/name", self.name.clone()),
            (owner_name, name.clone()),
            (owner_ns, ns.clone()),
        ]
    }

    /// Whether its newest pods fail (it is the object's trouble).
    pub fn failing(&self) -> bool {
        self.fault != Fault::Healthy
    }
}

/// Every workload of `cluster`, from the Flux objects in its store.
pub fn all(cluster: &Cluster, store: &Store, story: Option<&Cast>) -> Vec<Workload> {
    let mut out = Vec::new();
    for kind in [FluxKind::Kustomization, FluxKind::HelmRelease] {
        for object in store.list(crate::resources::Res::Flux(kind), None) {
            let value = object.value();
            let (namespace, wkind) = match kind {
                FluxKind::Kustomization => (
                    workload_namespace(&object.name).to_string(),
                    if workload_kind(&object.name) == "Job" {
                        Kind::Job
                    } else {
                        Kind::Deployment
                    },
                ),
                _ => (
                    value
                        .pointer("/spec/targetNamespace")
                        .and_then(Value::as_str)
                        .unwrap_or(&object.namespace)
                        .to_string(),
                    Kind::Deployment,
                ),
            };
            let failing = !object.suspended
                && object.intent.is_some_and(|i| {
                    matches!(i.health, Health::Failed | Health::Stalled)
                        && matches!(
                            i.failure,
                            Some(
                                Failure::HealthCheck
                                    | Failure::InstallFailed
                                    | Failure::RetriesExceeded
                                    | Failure::UpgradeRolledBack
                            )
                        )
                });
            let owner = (kind, object.namespace.clone(), object.name.clone());
            let fault = if !failing {
                Fault::Healthy
            } else {
                fault_of(cluster, &owner, wkind, story)
            };
            let text = |path: &str| value.pointer(path).and_then(Value::as_str);
            let applied = match kind {
                FluxKind::HelmRelease => text("/status/history/0/chartVersion"),
                _ => text("/status/lastAppliedRevision"),
            };
            let attempted = text("/status/lastAttemptedRevision").or(applied);
            let revision = attempted.unwrap_or("v1").to_string();
            let previous = applied
                .filter(|a| *a != revision && fault != Fault::Healthy)
                .map(str::to_string);
            out.push(Workload {
                kind: wkind,
                namespace,
                name: object.name.clone(),
                owner,
                fault,
                revision,
                previous,
                cluster: cluster.name.clone(),
            });
        }
    }
    out
}

/// What is wrong with a failing object's workload on `cluster`.
fn fault_of(
    cluster: &Cluster,
    owner: &(FluxKind, String, String),
    kind: Kind,
    story: Option<&Cast>,
) -> Fault {
    if cluster.faults().hostile_workloads {
        return Fault::Hostile;
    }
    if kind == Kind::Job {
        return Fault::BackoffLimit;
    }
    if let Some(cast) = story {
        return match cast.part(cluster.index, owner.0, &owner.1, &owner.2) {
            Part::Bad if cast.oom_killed(cluster.index) => Fault::OomKilled,
            Part::Bad => Fault::ImageNotFound,
            // The chart that ran out of install retries asks for more CPU than any node has.
            Part::Misconfigured(_) => Fault::Unschedulable,
            _ => Fault::CrashLoop,
        };
    }
    let turn = hash(&[&cluster.name, &owner.1, &owner.2]) as usize;
    Fault::DEPLOYMENT[turn % Fault::DEPLOYMENT.len()]
}

/// FNV-1a over `parts`: stable names and picks.
pub fn hash(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// `n` characters of the alphabet Kubernetes names pods with, from `seed`.
pub fn suffix(seed: u64, n: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            char::from(ALPHABET[((x >> 33) % ALPHABET.len() as u64) as usize])
        })
        .collect()
}
