//! The Flux facts the simulator serves, stated here from Flux's own documents — the v2.9.4 CRDs
//! and the sample objects in `shared/flux/`, the flux2 release notes, the controllers' API docs
//! (summarised in FACTS §1, §3) — and never taken from the client's tables. The test
//! `the_simulator_and_the_client_agree_on_flux` (tests/sim_flux/statuses.rs) cross-checks the
//! two statements: if either is wrong, they disagree there, not silently in every other test.
//!
//! - **Kinds** ([`CRDS`]): group, plural, short names, categories, the controller that owns the
//!   kind, whether it has a status, one row per CRD.
//! - **Versions** ([`LIVES`]): each API version's life across Flux releases — the first and last
//!   release that serve it, the releases it is the storage version in, the release that
//!   deprecated it — as the release notes tell it ("2.8 removed source v1beta2, …").
//! - **Conditions and reasons per controller** are written by [`crate::flux`]: Ready as the
//!   summary, Reconciling and Stalled only while True, each controller's reasons and messages.
//! - **dependsOn** ([`is_ready`]): a dependency counts as ready when its Ready condition
//!   is True for the generation it has (kustomize-controller's and helm-controller's
//!   dependency check); otherwise the dependant fails with `DependencyNotReady` and retries.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every Flux kind with a CRD in the Flux distribution, in the order of [`CRDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FluxKind {
    GitRepository,
    OciRepository,
    HelmRepository,
    HelmChart,
    Bucket,
    ExternalArtifact,
    ArtifactGenerator,
    Kustomization,
    HelmRelease,
    ImageRepository,
    ImagePolicy,
    ImageUpdateAutomation,
    Alert,
    Provider,
    Receiver,
}

/// One CRD of the Flux v2.9.4 distribution, as its YAML spells it.
pub struct Crd {
    pub kind: FluxKind,
    /// `spec.names.kind`.
    pub name: &'static str,
    pub group: &'static str,
    pub plural: &'static str,
    pub short_names: &'static [&'static str],
    /// `spec.names.categories` (since the 2.9.x patch releases).
    pub categories: &'static [&'static str],
    pub controller: &'static str,
    /// `subresources.status`: Alert and Provider (v1beta3) have no status at all.
    pub status: bool,
}

const SOURCE: &str = "source.toolkit.fluxcd.io";
const SOURCES: &[&str] = &["all", "fluxcd", "fluxcd-sources"];
const APPLIERS: &[&str] = &["all", "fluxcd", "fluxcd-appliers"];
const IMAGES: &[&str] = &["all", "fluxcd", "fluxcd-images"];
const NOTIFICATIONS: &[&str] = &["all", "fluxcd", "fluxcd-notifications"];

const fn crd(
    kind: FluxKind,
    name: &'static str,
    group: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    controller: &'static str,
) -> Crd {
    Crd {
        kind,
        name,
        group,
        plural,
        short_names,
        categories,
        controller,
        status: true,
    }
}

/// The CRDs, one row each (`shared/flux/crds/*.yaml`): kind, group, plural, short names,
/// categories, controller. Alert and Provider have no status.
#[rustfmt::skip]
pub const CRDS: [Crd; 15] = {
    use FluxKind::*;
    const IMAGE: &str = "image.toolkit.fluxcd.io";
    const NOTE: &str = "notification.toolkit.fluxcd.io";
    const SC: &str = "source-controller";
    const NC: &str = "notification-controller";
    const IRC: &str = "image-reflector-controller";
    [
        crd(GitRepository, "GitRepository", SOURCE, "gitrepositories", &["gitrepo"], SOURCES, SC),
        crd(OciRepository, "OCIRepository", SOURCE, "ocirepositories", &["ocirepo"], SOURCES, SC),
        crd(HelmRepository, "HelmRepository", SOURCE, "helmrepositories", &["helmrepo"], SOURCES, SC),
        crd(HelmChart, "HelmChart", SOURCE, "helmcharts", &["hc"], SOURCES, SC),
        crd(Bucket, "Bucket", SOURCE, "buckets", &[], SOURCES, SC),
        crd(ExternalArtifact, "ExternalArtifact", SOURCE, "externalartifacts", &["ea"], SOURCES, SC),
        crd(ArtifactGenerator, "ArtifactGenerator", "source.extensions.fluxcd.io", "artifactgenerators",
            &["ag"], SOURCES, "source-watcher"),
        crd(Kustomization, "Kustomization", "kustomize.toolkit.fluxcd.io", "kustomizations",
            &["ks"], APPLIERS, "kustomize-controller"),
        crd(HelmRelease, "HelmRelease", "helm.toolkit.fluxcd.io", "helmreleases",
            &["hr"], APPLIERS, "helm-controller"),
        crd(ImageRepository, "ImageRepository", IMAGE, "imagerepositories",
            &["imgrepo", "imagerepo"], IMAGES, IRC),
        crd(ImagePolicy, "ImagePolicy", IMAGE, "imagepolicies", &["imgpol", "imagepol"], IMAGES, IRC),
        crd(ImageUpdateAutomation, "ImageUpdateAutomation", IMAGE, "imageupdateautomations",
            &["iua", "imgupd", "imgauto"], IMAGES, "image-automation-controller"),
        Crd { status: false, ..crd(Alert, "Alert", NOTE, "alerts", &[], NOTIFICATIONS, NC) },
        Crd { status: false, ..crd(Provider, "Provider", NOTE, "providers", &[], NOTIFICATIONS, NC) },
        crd(Receiver, "Receiver", NOTE, "receivers", &[], NOTIFICATIONS, NC),
    ]
};

/// A Flux minor release, 2.0 … 2.9: what decides the versions a cluster serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FluxRelease(pub u8);

impl FluxRelease {
    /// Flux v2.9, the newest release the simulator serves.
    pub const LATEST: FluxRelease = FluxRelease(9);

    pub fn name(self) -> String {
        format!("v2.{}", self.0)
    }
}

/// One version a cluster serves for a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServedVersion {
    pub version: &'static str,
    /// The version objects are stored in: one per kind and release.
    pub storage: bool,
    /// Served with `deprecated: true`: the API server adds a warning header.
    pub deprecated: bool,
}

/// One API version's life across Flux 2.x minor releases (inclusive ranges).
pub struct Life {
    pub kinds: &'static [FluxKind],
    pub version: &'static str,
    /// First and last release that serve it.
    pub served: (u8, u8),
    /// First and last release it is the storage version in.
    pub stored: Option<(u8, u8)>,
    /// The release from which it is served with `deprecated: true`.
    pub deprecated: Option<u8>,
}

const fn life(
    kinds: &'static [FluxKind],
    version: &'static str,
    served: (u8, u8),
    stored: Option<(u8, u8)>,
    deprecated: Option<u8>,
) -> Life {
    Life {
        kinds,
        version,
        served,
        stored,
        deprecated,
    }
}

/// Every Flux API version from 2.0 to 2.9. The removals follow the release notes: 2.7 dropped
/// v1beta1 of source, kustomize, helm's v2beta1, notification and image v1beta1; 2.8 removed
/// source v1beta2, kustomize v1beta2 and helm v2beta2; 2.9 removed image v1beta2 and
/// notification v1beta2.
pub const LIVES: &[Life] = {
    use FluxKind::*;
    const GIT_KS: &[FluxKind] = &[GitRepository, Kustomization];
    const HELM_SOURCES: &[FluxKind] = &[HelmRepository, HelmChart];
    const ALERTING: &[FluxKind] = &[Alert, Provider];
    const IMAGE_READ: &[FluxKind] = &[ImageRepository, ImagePolicy];
    &[
        life(GIT_KS, "v1", (0, 9), Some((0, 9)), None),
        life(GIT_KS, "v1beta1", (0, 6), None, Some(0)),
        life(GIT_KS, "v1beta2", (0, 7), None, Some(0)),
        life(HELM_SOURCES, "v1", (3, 9), Some((3, 9)), None),
        life(HELM_SOURCES, "v1beta1", (0, 6), None, Some(3)),
        life(HELM_SOURCES, "v1beta2", (0, 7), Some((0, 2)), Some(3)),
        life(&[Bucket], "v1", (4, 9), Some((4, 9)), None),
        life(&[Bucket], "v1beta1", (0, 6), None, Some(3)),
        life(&[Bucket], "v1beta2", (0, 7), Some((0, 3)), Some(4)),
        life(&[OciRepository], "v1", (6, 9), Some((6, 9)), None),
        life(&[OciRepository], "v1beta2", (0, 7), Some((0, 5)), Some(6)),
        life(&[HelmRelease], "v2", (3, 9), Some((3, 9)), None),
        life(&[HelmRelease], "v2beta1", (0, 6), Some((0, 1)), Some(2)),
        life(&[HelmRelease], "v2beta2", (2, 7), Some((2, 2)), Some(3)),
        life(ALERTING, "v1beta3", (2, 9), Some((2, 9)), None),
        life(ALERTING, "v1beta1", (0, 6), None, Some(2)),
        life(ALERTING, "v1beta2", (0, 8), Some((0, 1)), Some(2)),
        life(&[Receiver], "v1", (0, 9), Some((0, 9)), None),
        life(&[Receiver], "v1beta1", (0, 6), None, Some(0)),
        life(&[Receiver], "v1beta2", (0, 8), None, Some(0)),
        life(IMAGE_READ, "v1", (7, 9), Some((7, 9)), None),
        life(IMAGE_READ, "v1beta1", (0, 6), None, None),
        life(IMAGE_READ, "v1beta2", (0, 8), Some((0, 6)), Some(7)),
        life(&[ImageUpdateAutomation], "v1", (7, 9), Some((7, 9)), None),
        life(
            &[ImageUpdateAutomation],
            "v1beta1",
            (0, 6),
            Some((0, 2)),
            Some(3),
        ),
        life(
            &[ImageUpdateAutomation],
            "v1beta2",
            (3, 8),
            Some((3, 6)),
            Some(7),
        ),
        life(&[ExternalArtifact], "v1", (7, 9), Some((7, 9)), None),
        life(&[ArtifactGenerator], "v1beta1", (7, 9), Some((7, 9)), None),
    ]
};

impl FluxKind {
    pub const ALL: [FluxKind; 15] = {
        let mut all = [FluxKind::GitRepository; 15];
        let mut i = 0;
        while i < CRDS.len() {
            all[i] = CRDS[i].kind;
            i += 1;
        }
        all
    };

    pub fn crd(self) -> &'static Crd {
        &CRDS[self as usize]
    }

    /// The `kind` field as the API server spells it.
    pub fn as_str(self) -> &'static str {
        self.crd().name
    }

    pub fn from_kind(kind: &str) -> Option<FluxKind> {
        CRDS.iter().find(|c| c.name == kind).map(|c| c.kind)
    }

    pub fn group(self) -> &'static str {
        self.crd().group
    }

    pub fn plural(self) -> &'static str {
        self.crd().plural
    }

    pub fn short_names(self) -> &'static [&'static str] {
        self.crd().short_names
    }

    pub fn categories(self) -> &'static [&'static str] {
        self.crd().categories
    }

    pub fn controller(self) -> &'static str {
        self.crd().controller
    }

    pub fn has_status_subresource(self) -> bool {
        self.crd().status
    }

    /// No status to reconcile or wait for (Alert, Provider).
    pub fn is_static(self) -> bool {
        !self.crd().status
    }

    /// The versions a cluster running `release` serves for this kind, preferred first; empty
    /// when the release does not have the kind.
    pub fn served_versions(self, release: FluxRelease) -> Vec<ServedVersion> {
        let r = release.0;
        let within = |(first, last): (u8, u8)| (first..=last).contains(&r);
        let mut served: Vec<ServedVersion> = LIVES
            .iter()
            .filter(|l| l.kinds.contains(&self) && within(l.served))
            .map(|l| ServedVersion {
                version: l.version,
                storage: l.stored.is_some_and(within),
                deprecated: l.deprecated.is_some_and(|from| r >= from),
            })
            .collect();
        served.sort_by(|a, b| compare_versions(a.version, b.version));
        served
    }
}

impl fmt::Display for FluxKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the simulator means an object's state to be: the ground truth its status shows, in the
/// words of FACTS §3.8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Health {
    /// Stalled=True and Ready=False: terminal until the spec changes.
    Stalled,
    /// Ready=False, Reconciling=True (ProgressingWithRetry): failing, retrying.
    Failed,
    /// Reconciling=True and Ready=Unknown.
    Progressing,
    /// `spec.suspend: true`.
    Suspended,
    /// Ready=True for the current generation.
    Ready,
    /// A kind without status (Alert, Provider).
    NotApplicable,
}

impl Health {
    /// The controller gave up or its last attempt failed.
    pub fn is_failing(self) -> bool {
        matches!(self, Health::Stalled | Health::Failed)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Health::Stalled => "stalled",
            Health::Failed => "failed",
            Health::Progressing => "progressing",
            Health::Suspended => "suspended",
            Health::Ready => "ready",
            Health::NotApplicable => "not-applicable",
        }
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The annotations by which a user asks a controller for something (`flux reconcile`).
pub mod annotations {
    use serde_json::Value;

    /// Reconcile now; the token comes back in `status.lastHandledReconcileAt`.
    pub const REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";
    /// HelmRelease (`flux reconcile hr --force`): a one-off upgrade.
    pub const FORCE_AT: &str = "reconcile.fluxcd.io/forceAt";
    /// HelmRelease (`--reset`): the failure counters start again.
    pub const RESET_AT: &str = "reconcile.fluxcd.io/resetAt";
    /// Who suspended an object, as fluxfleet records it (its README, "Security").
    pub const SUSPENDED_BY: &str = "fluxfleet.dev/suspended-by";
    /// Why, as fluxfleet records it (`--reason`).
    pub const SUSPEND_REASON: &str = "fluxfleet.dev/suspend-reason";
    /// Who suspended an object, as the Flux Operator's UI reads it.
    pub const OPERATOR_SUSPENDED_BY: &str = "fluxcd.controlplane.io/suspendedBy";

    /// The annotation `key` of `object`, when it is a string.
    pub fn get<'v>(object: &'v Value, key: &str) -> Option<&'v str> {
        object.pointer("/metadata/annotations")?.get(key)?.as_str()
    }
}

/// Ready for the generation it has: what a `dependsOn` check reads, and what the Flux Operator
/// reports as a sync's readiness. Its Ready condition is True and observed the object's
/// generation — the condition's own `observedGeneration` where set (ArtifactGenerator keeps no
/// other), else the status's.
pub fn is_ready(object: &Value) -> bool {
    let Some(ready) = ready_condition(object) else {
        return false;
    };
    let observed = match ready.get("observedGeneration").and_then(Value::as_i64) {
        Some(generation) if generation != 0 => Some(generation),
        _ => object
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64),
    };
    // A document without a generation (written by hand, not served) has nothing to be behind.
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    ready["status"] == "True" && (generation.is_none() || observed == generation)
}

/// Ready=False, retrying or stalled, but not only waiting on a dependency (reason
/// `DependencyNotReady`): what the Flux Operator counts as failing in a FluxReport (its
/// reporter, v0.58, checked on it).
pub fn is_failing(object: &Value) -> bool {
    ready_condition(object)
        .is_some_and(|c| c["status"] == "False" && c["reason"] != "DependencyNotReady")
}

/// The Ready condition, if there is one.
pub fn ready_condition(object: &Value) -> Option<&Value> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
}

/// Orders API versions as the API server's discovery does: GA, then beta, then alpha, the
/// higher major and then the higher minor first; a version not in that form sorts last, by
/// name. `Less` means listed earlier.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (x, y) => y.is_some().cmp(&x.is_some()).then_with(|| a.cmp(b)),
    }
}

/// `v2` → (2, 2, 0), `v1beta3` → (1, 1, 3), `v1alpha1` → (0, 1, 1): stability, major, minor.
fn rank(version: &str) -> Option<(u8, u32, u32)> {
    let body = version.strip_prefix('v')?;
    let split = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let (major, rest) = body.split_at(split);
    let major = major.parse().ok()?;
    for (stability, word) in [(2, ""), (1, "beta"), (0, "alpha")] {
        if word.is_empty() && rest.is_empty() {
            return Some((stability, major, 0));
        }
        if let Some(minor) = rest.strip_prefix(word).filter(|_| !word.is_empty()) {
            return Some((stability, major, minor.parse().ok()?));
        }
    }
    None
}

#[cfg(test)]
mod tests;
