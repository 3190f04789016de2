//! The Flux kinds fluxfleet knows: API group, plural, short names, and which versions each Flux
//! release serves (FACTS §1, §1.1).

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// Every Flux kind with a CRD in the Flux distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FluxKind {
    GitRepository,
    #[serde(rename = "OCIRepository")]
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

/// One served version of a kind in a given Flux release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServedVersion {
    pub version: &'static str,
    /// The version objects are stored in; exactly one per kind and release.
    pub storage: bool,
    /// Served with `deprecated: true` (the API server adds a warning).
    pub deprecated: bool,
}

// Macros, not functions: struct literals are promoted to statics, function calls are not.
macro_rules! v {
    ($v:literal) => {
        ServedVersion {
            version: $v,
            storage: false,
            deprecated: false,
        }
    };
}
macro_rules! s {
    ($v:literal) => {
        ServedVersion {
            version: $v,
            storage: true,
            deprecated: false,
        }
    };
}
macro_rules! d {
    ($v:literal) => {
        ServedVersion {
            version: $v,
            storage: false,
            deprecated: true,
        }
    };
}

/// A Flux minor release (2.0 … 2.9): what decides which API versions a cluster serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FluxRelease(pub u8);

impl FluxRelease {
    /// The newest release this table knows (FACTS: Flux v2.9.4).
    pub const LATEST: FluxRelease = FluxRelease(9);

    pub fn name(self) -> String {
        format!("v2.{}", self.0)
    }
}

impl FluxKind {
    pub const ALL: [FluxKind; 15] = [
        FluxKind::GitRepository,
        FluxKind::OciRepository,
        FluxKind::HelmRepository,
        FluxKind::HelmChart,
        FluxKind::Bucket,
        FluxKind::ExternalArtifact,
        FluxKind::ArtifactGenerator,
        FluxKind::Kustomization,
        FluxKind::HelmRelease,
        FluxKind::ImageRepository,
        FluxKind::ImagePolicy,
        FluxKind::ImageUpdateAutomation,
        FluxKind::Alert,
        FluxKind::Provider,
        FluxKind::Receiver,
    ];

    /// The `kind` field as the API server spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FluxKind::GitRepository => "GitRepository",
            FluxKind::OciRepository => "OCIRepository",
            FluxKind::HelmRepository => "HelmRepository",
            FluxKind::HelmChart => "HelmChart",
            FluxKind::Bucket => "Bucket",
            FluxKind::ExternalArtifact => "ExternalArtifact",
            FluxKind::ArtifactGenerator => "ArtifactGenerator",
            FluxKind::Kustomization => "Kustomization",
            FluxKind::HelmRelease => "HelmRelease",
            FluxKind::ImageRepository => "ImageRepository",
            FluxKind::ImagePolicy => "ImagePolicy",
            FluxKind::ImageUpdateAutomation => "ImageUpdateAutomation",
            FluxKind::Alert => "Alert",
            FluxKind::Provider => "Provider",
            FluxKind::Receiver => "Receiver",
        }
    }

    pub fn from_kind(kind: &str) -> Option<FluxKind> {
        FluxKind::ALL.into_iter().find(|k| k.as_str() == kind)
    }

    /// Reads a kind the way kubectl and flux take it on the command line: the kind, its plural,
    /// a short name, or the singular in lower case, in any letter case (`ks`, `helmreleases`,
    /// `GitRepository`, `ocirepository`).
    pub fn parse(text: &str) -> Option<FluxKind> {
        let t = text.to_ascii_lowercase();
        FluxKind::ALL.into_iter().find(|k| {
            k.as_str().eq_ignore_ascii_case(&t) || k.plural() == t || k.short_names().contains(&&*t)
        })
    }

    pub fn group(self) -> &'static str {
        match self {
            FluxKind::GitRepository
            | FluxKind::OciRepository
            | FluxKind::HelmRepository
            | FluxKind::HelmChart
            | FluxKind::Bucket
            | FluxKind::ExternalArtifact => "source.toolkit.fluxcd.io",
            FluxKind::ArtifactGenerator => "source.extensions.fluxcd.io",
            FluxKind::Kustomization => "kustomize.toolkit.fluxcd.io",
            FluxKind::HelmRelease => "helm.toolkit.fluxcd.io",
            FluxKind::ImageRepository | FluxKind::ImagePolicy | FluxKind::ImageUpdateAutomation => {
                "image.toolkit.fluxcd.io"
            }
            FluxKind::Alert | FluxKind::Provider | FluxKind::Receiver => {
                "notification.toolkit.fluxcd.io"
            }
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            FluxKind::GitRepository => "gitrepositories",
            FluxKind::OciRepository => "ocirepositories",
            FluxKind::HelmRepository => "helmrepositories",
            FluxKind::HelmChart => "helmcharts",
            FluxKind::Bucket => "buckets",
            FluxKind::ExternalArtifact => "externalartifacts",
            FluxKind::ArtifactGenerator => "artifactgenerators",
            FluxKind::Kustomization => "kustomizations",
            FluxKind::HelmRelease => "helmreleases",
            FluxKind::ImageRepository => "imagerepositories",
            FluxKind::ImagePolicy => "imagepolicies",
            FluxKind::ImageUpdateAutomation => "imageupdateautomations",
            FluxKind::Alert => "alerts",
            FluxKind::Provider => "providers",
            FluxKind::Receiver => "receivers",
        }
    }

    /// Short names as served by Flux v2.9 (`kubectl get ks`).
    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            FluxKind::GitRepository => &["gitrepo"],
            FluxKind::OciRepository => &["ocirepo"],
            FluxKind::HelmRepository => &["helmrepo"],
            FluxKind::HelmChart => &["hc"],
            FluxKind::ExternalArtifact => &["ea"],
            FluxKind::ArtifactGenerator => &["ag"],
            FluxKind::Kustomization => &["ks"],
            FluxKind::HelmRelease => &["hr"],
            FluxKind::ImageRepository => &["imgrepo", "imagerepo"],
            FluxKind::ImagePolicy => &["imgpol", "imagepol"],
            FluxKind::ImageUpdateAutomation => &["iua", "imgupd", "imgauto"],
            FluxKind::Bucket | FluxKind::Alert | FluxKind::Provider | FluxKind::Receiver => &[],
        }
    }

    /// CRD categories (Flux 2.9.x patch releases).
    pub fn categories(self) -> &'static [&'static str] {
        match self {
            FluxKind::GitRepository
            | FluxKind::OciRepository
            | FluxKind::HelmRepository
            | FluxKind::HelmChart
            | FluxKind::Bucket
            | FluxKind::ExternalArtifact
            | FluxKind::ArtifactGenerator => &["all", "fluxcd", "fluxcd-sources"],
            FluxKind::Kustomization | FluxKind::HelmRelease => {
                &["all", "fluxcd", "fluxcd-appliers"]
            }
            FluxKind::ImageRepository | FluxKind::ImagePolicy | FluxKind::ImageUpdateAutomation => {
                &["all", "fluxcd", "fluxcd-images"]
            }
            FluxKind::Alert | FluxKind::Provider | FluxKind::Receiver => {
                &["all", "fluxcd", "fluxcd-notifications"]
            }
        }
    }

    /// Sources whose artifact is what their consumers apply, revision by revision: Git, OCI,
    /// Bucket, HelmChart, ExternalArtifact. (A HelmRepository's artifact is its index, which
    /// nothing applies.)
    pub fn has_artifact(self) -> bool {
        matches!(
            self,
            FluxKind::GitRepository
                | FluxKind::OciRepository
                | FluxKind::Bucket
                | FluxKind::HelmChart
                | FluxKind::ExternalArtifact
        )
    }

    /// The kinds a `sourceRef` or `chartRef` names: what source-controller (and, for an
    /// ExternalArtifact, another controller) serves as an artifact.
    pub fn is_source(self) -> bool {
        self.group() == "source.toolkit.fluxcd.io"
    }

    /// Alert and Provider (v1beta3) have no status at all: nothing to reconcile or wait for.
    pub fn is_static(self) -> bool {
        matches!(self, FluxKind::Alert | FluxKind::Provider)
    }

    /// Whether the CRD has a `status` subresource.
    pub fn has_status_subresource(self) -> bool {
        !self.is_static()
    }

    /// Every version of this kind some Flux release serves, the newest release's first (what
    /// `--version` lists).
    pub fn known_versions(self) -> Vec<&'static str> {
        let mut known = Vec::new();
        for release in (0..=FluxRelease::LATEST.0).rev() {
            for v in self.served_versions(FluxRelease(release)) {
                if !known.contains(&v.version) {
                    known.push(v.version);
                }
            }
        }
        known
    }

    /// The versions a cluster running `release` serves for this kind (FACTS §1.1). Empty when
    /// that release does not have the kind at all.
    pub fn served_versions(self, release: FluxRelease) -> &'static [ServedVersion] {
        let r = release.0;
        match self {
            FluxKind::GitRepository | FluxKind::Kustomization => match r {
                0..=6 => &[s!("v1"), d!("v1beta1"), d!("v1beta2")],
                7 => &[s!("v1"), d!("v1beta2")],
                _ => &[s!("v1")],
            },
            FluxKind::HelmRepository | FluxKind::HelmChart => match r {
                0..=2 => &[v!("v1beta1"), s!("v1beta2")],
                3..=6 => &[s!("v1"), d!("v1beta1"), d!("v1beta2")],
                7 => &[s!("v1"), d!("v1beta2")],
                _ => &[s!("v1")],
            },
            FluxKind::Bucket => match r {
                0..=2 => &[v!("v1beta1"), s!("v1beta2")],
                3 => &[d!("v1beta1"), s!("v1beta2")],
                4..=6 => &[s!("v1"), d!("v1beta1"), d!("v1beta2")],
                7 => &[s!("v1"), d!("v1beta2")],
                _ => &[s!("v1")],
            },
            FluxKind::OciRepository => match r {
                0..=5 => &[s!("v1beta2")],
                6 | 7 => &[s!("v1"), d!("v1beta2")],
                _ => &[s!("v1")],
            },
            FluxKind::HelmRelease => match r {
                0 | 1 => &[s!("v2beta1")],
                2 => &[d!("v2beta1"), s!("v2beta2")],
                3..=6 => &[s!("v2"), d!("v2beta1"), d!("v2beta2")],
                7 => &[s!("v2"), d!("v2beta2")],
                _ => &[s!("v2")],
            },
            FluxKind::Alert | FluxKind::Provider => match r {
                0 | 1 => &[v!("v1beta1"), s!("v1beta2")],
                2..=6 => &[d!("v1beta1"), d!("v1beta2"), s!("v1beta3")],
                7 | 8 => &[d!("v1beta2"), s!("v1beta3")],
                _ => &[s!("v1beta3")],
            },
            FluxKind::Receiver => match r {
                0..=6 => &[s!("v1"), d!("v1beta1"), d!("v1beta2")],
                7 | 8 => &[s!("v1"), d!("v1beta2")],
                _ => &[s!("v1")],
            },
            FluxKind::ImageRepository | FluxKind::ImagePolicy => match r {
                0..=6 => &[v!("v1beta1"), s!("v1beta2")],
                7 | 8 => &[s!("v1"), d!("v1beta2")],
                _ => &[s!("v1")],
            },
            FluxKind::ImageUpdateAutomation => match r {
                0..=2 => &[s!("v1beta1")],
                3..=6 => &[d!("v1beta1"), s!("v1beta2")],
                7 | 8 => &[s!("v1"), d!("v1beta2")],
                _ => &[s!("v1")],
            },
            FluxKind::ExternalArtifact => match r {
                0..=6 => &[],
                _ => &[s!("v1")],
            },
            FluxKind::ArtifactGenerator => match r {
                0..=6 => &[],
                _ => &[s!("v1beta1")],
            },
        }
    }

    /// The storage version of this kind in `release`, if the release has the kind.
    pub fn storage_version(self, release: FluxRelease) -> Option<&'static str> {
        self.served_versions(release)
            .iter()
            .find(|sv| sv.storage)
            .map(|sv| sv.version)
    }
}

impl fmt::Display for FluxKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Orders Kubernetes API versions the way the API server does ("kube-aware" sorting): GA before
/// beta before alpha, higher major and minor first, and anything that is not a Kubernetes-style
/// version last, alphabetically. `Ordering::Less` means "preferred".
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    match (parse_version(a), parse_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// (stability rank, major, minor) with higher meaning more preferred.
fn parse_version(version: &str) -> Option<(u8, u32, u32)> {
    let rest = version.strip_prefix('v')?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let major: u32 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((3, major, 0));
    }
    let (rank, num) = if let Some(n) = tail.strip_prefix("beta") {
        (2, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n)
    } else {
        return None;
    };
    Some((rank, major, num.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_release_has_one_storage_version_per_served_kind() {
        for r in 0..=9 {
            for kind in FluxKind::ALL {
                let served = kind.served_versions(FluxRelease(r));
                if served.is_empty() {
                    continue;
                }
                let storage = served.iter().filter(|v| v.storage).count();
                assert_eq!(storage, 1, "{kind} in 2.{r}");
            }
        }
    }

    #[test]
    fn old_releases_serve_what_facts_says() {
        assert_eq!(
            FluxKind::HelmRelease.storage_version(FluxRelease(0)),
            Some("v2beta1")
        );
        assert_eq!(
            FluxKind::OciRepository.storage_version(FluxRelease(5)),
            Some("v1beta2")
        );
        assert_eq!(
            FluxKind::Alert.storage_version(FluxRelease::LATEST),
            Some("v1beta3")
        );
        assert_eq!(
            FluxKind::ExternalArtifact.storage_version(FluxRelease(6)),
            None
        );
    }

    #[test]
    fn kube_aware_version_order() {
        let mut vs = vec![
            "v1beta1", "v1alpha1", "v2", "v1", "v1beta3", "foo", "v2beta1",
        ];
        vs.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            vs,
            [
                "v2", "v1", "v2beta1", "v1beta3", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }

    #[test]
    fn kind_names_round_trip() {
        for kind in FluxKind::ALL {
            assert_eq!(FluxKind::from_kind(kind.as_str()), Some(kind));
        }
        assert_eq!(FluxKind::from_kind("Deployment"), None);
    }

    #[test]
    fn command_line_names_parse_like_kubectl() {
        for (text, kind) in [
            ("ks", FluxKind::Kustomization),
            ("Kustomizations", FluxKind::Kustomization),
            ("helmrelease", FluxKind::HelmRelease),
            ("HR", FluxKind::HelmRelease),
            ("OCIRepository", FluxKind::OciRepository),
            ("imgpol", FluxKind::ImagePolicy),
        ] {
            assert_eq!(FluxKind::parse(text), Some(kind), "{text}");
        }
        assert_eq!(FluxKind::parse("deployments"), None);
    }
}
