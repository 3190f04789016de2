//! Which workloads a simulated cluster runs and what is wrong with each. Nothing is stored: a
//! workload is derived, whenever it is asked for, from the Flux object that deploys it (a
//! Kustomization's one Deployment or Job, a HelmRelease's Deployment), that object's intent and
//! the cluster's part in the story — so 10,000 clusters cost no memory for workloads, and what is
//! served always agrees with the Flux status beside it. Also what [`super::render`] and
//! [`super::said`] both name: its image, its pod sets and their pods' names, its uids and times.

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
    /// Who its labels say applied it: its owner but on a few clusters ([`applied_by`]); None:
    /// by hand.
    pub applied_by: Option<(FluxKind, String, String)>,
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
        let mut labels = vec![("app.kubernetes.io/name", self.name.clone())];
        let Some((kind, ns, name)) = &self.applied_by else {
            return labels;
        };
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
        labels.push((owner_name, name.clone()));
        labels.push((owner_ns, ns.clone()));
        labels
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
                applied_by: applied_by(cluster.index, &owner),
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

/// Who the labels of `owner`'s workload on the cluster at `index` say applied it: `owner`,
/// except for the `apps` Kustomization's Deployment on every seventh cluster from the fourth,
/// which the cluster's own Kustomization (`flux-system`) applied, and every seventh from the
/// sixth, which someone applied by hand — the copies a fleet trace names as breaking the
/// pattern.
pub fn applied_by(
    index: usize,
    owner: &(FluxKind, String, String),
) -> Option<(FluxKind, String, String)> {
    let apps = owner.0 == FluxKind::Kustomization && owner.2 == "apps";
    match index % 7 {
        3 if apps => Some((
            FluxKind::Kustomization,
            "flux-system".into(),
            "flux-system".into(),
        )),
        5 if apps => None,
        _ => Some(owner.clone()),
    }
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

/// The one container of every simulated workload.
pub const CONTAINER: &str = "manager";
/// How many pods a hostile workload has.
pub const HOSTILE_PODS: usize = 5_000;
/// The size of a hostile workload's one log line.
pub const HOSTILE_LOG: usize = 10 * 1024 * 1024;

/// RFC 3339 at whole seconds.
pub fn time(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// The image a revision runs: a chart's version as the tag, else the commit's short hash.
pub fn image(w: &Workload, revision: &str) -> String {
    let tag = match revision.rsplit_once(':') {
        Some((_, digest)) => format!("sha-{}", digest.get(..7).unwrap_or(digest)),
        None => revision.to_string(),
    };
    format!("registry.example.com/{}:{tag}", w.name)
}

pub fn template_hash(w: &Workload, revision: &str) -> String {
    suffix(hash(&[&w.name, revision]), 10)
}

pub fn uid(parts: &[&str]) -> String {
    let h = hash(parts);
    let g = hash(&[&h.to_string()]);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        h >> 32,
        h & 0xffff,
        (g >> 52) & 0xfff,
        (g >> 40) & 0xfff,
        g & 0xffff_ffff_ffff
    )
}

/// A pod of the workload: what its revision runs, how many there are and how they fare.
pub struct Set {
    pub revision: String,
    /// The ReplicaSet's or Job's name; pods are named after it.
    pub owner: String,
    pub pods: usize,
    pub fault: Fault,
}

/// The pod sets of the workload: while a rollout fails, the old ReplicaSet's two ready pods and
/// the new one's failing pod (maxSurge 25%); a new install's failing pods; else two ready pods.
pub fn sets(w: &Workload) -> Vec<Set> {
    let owner = |revision: &str| match w.kind {
        Kind::Job => w.name.clone(),
        Kind::Deployment => format!("{}-{}", w.name, template_hash(w, revision)),
    };
    let new = |pods| Set {
        revision: w.revision.clone(),
        owner: owner(&w.revision),
        pods,
        fault: w.fault,
    };
    match (&w.previous, w.fault) {
        (_, Fault::Healthy) => vec![new(2)],
        (_, Fault::Hostile) => vec![new(HOSTILE_PODS)],
        (_, Fault::BackoffLimit) => vec![new(2)],
        (Some(previous), _) => vec![
            Set {
                revision: previous.clone(),
                owner: owner(previous),
                pods: 2,
                fault: Fault::Healthy,
            },
            new(1),
        ],
        (None, _) => vec![new(2)],
    }
}

/// The name of pod `i` of `s`.
pub fn pod_name(w: &Workload, s: &Set, i: usize) -> String {
    let seed = hash(&[&w.cluster, &s.owner, &i.to_string()]);
    format!("{}-{}", s.owner, suffix(seed, 5))
}

/// The scheduler's message for a pod no node has room for.
/// kube-scheduler v1.35's words (checked on it: "no new claims to deallocate" is the dynamic
/// resource allocation's, in every such message since 1.34).
pub const UNSCHEDULABLE: &str = "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";

/// The pull error of an image that does not exist or may not be pulled.
pub fn pull_error(fault: Fault, image: &str) -> String {
    if fault == Fault::RegistryDenied {
        format!(
            "failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed"
        )
    } else {
        format!(
            "rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
        )
    }
}
