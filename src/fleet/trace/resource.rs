//! Where a kind a trace reads is served: the kinds every cluster serves and Flux's, by the
//! names kubectl takes (`Deployment`, `deploy`, `deployments`); any other as `kind.group`,
//! found in each cluster's discovery. Secrets are never read.

use crate::fleet::FluxKind;

/// Where a kind is served: its API path (`/api/v1`, `/apis/apps/v1`), plural, and whether its
/// objects live in namespaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    pub kind: String,
    pub api: String,
    pub plural: String,
    pub namespaced: bool,
}

/// Why a kind cannot be traced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Untraceable {
    #[error("fluxfleet never reads Secrets")]
    Secret,
    #[error(
        "{0:?} is not a kind fluxfleet knows: write it as kubectl does with its group \
         (`rollouts.argoproj.io`, `Certificate.cert-manager.io`)"
    )]
    Unknown(String),
}

/// The kinds every cluster serves that a trace starts from or passes through, with kubectl's
/// short names.
const BUILT_IN: &[(&str, &str, &str, bool, &[&str])] = &[
    ("Pod", "/api/v1", "pods", true, &["po"]),
    ("Service", "/api/v1", "services", true, &["svc"]),
    ("ConfigMap", "/api/v1", "configmaps", true, &["cm"]),
    (
        "ServiceAccount",
        "/api/v1",
        "serviceaccounts",
        true,
        &["sa"],
    ),
    (
        "PersistentVolumeClaim",
        "/api/v1",
        "persistentvolumeclaims",
        true,
        &["pvc"],
    ),
    ("Namespace", "/api/v1", "namespaces", false, &["ns"]),
    (
        "Deployment",
        "/apis/apps/v1",
        "deployments",
        true,
        &["deploy"],
    ),
    ("ReplicaSet", "/apis/apps/v1", "replicasets", true, &["rs"]),
    (
        "StatefulSet",
        "/apis/apps/v1",
        "statefulsets",
        true,
        &["sts"],
    ),
    ("DaemonSet", "/apis/apps/v1", "daemonsets", true, &["ds"]),
    ("Job", "/apis/batch/v1", "jobs", true, &[]),
    ("CronJob", "/apis/batch/v1", "cronjobs", true, &["cj"]),
    (
        "Ingress",
        "/apis/networking.k8s.io/v1",
        "ingresses",
        true,
        &["ing"],
    ),
    (
        "NetworkPolicy",
        "/apis/networking.k8s.io/v1",
        "networkpolicies",
        true,
        &["netpol"],
    ),
    (
        "HorizontalPodAutoscaler",
        "/apis/autoscaling/v2",
        "horizontalpodautoscalers",
        true,
        &["hpa"],
    ),
    (
        "PodDisruptionBudget",
        "/apis/policy/v1",
        "poddisruptionbudgets",
        true,
        &["pdb"],
    ),
    (
        "Role",
        "/apis/rbac.authorization.k8s.io/v1",
        "roles",
        true,
        &[],
    ),
    (
        "RoleBinding",
        "/apis/rbac.authorization.k8s.io/v1",
        "rolebindings",
        true,
        &[],
    ),
    (
        "ClusterRole",
        "/apis/rbac.authorization.k8s.io/v1",
        "clusterroles",
        false,
        &[],
    ),
    (
        "ClusterRoleBinding",
        "/apis/rbac.authorization.k8s.io/v1",
        "clusterrolebindings",
        false,
        &[],
    ),
];

pub fn built_in(kind: &str, api: Option<&str>) -> Option<Resource> {
    let lower = kind.to_ascii_lowercase();
    BUILT_IN
        .iter()
        .find(|(k, a, plural, _, short)| {
            let named = k.eq_ignore_ascii_case(&lower)
                || *plural == lower
                || plural.strip_suffix('s') == Some(lower.as_str())
                || short.contains(&lower.as_str());
            named && api.is_none_or(|api| api == *a)
        })
        .map(|(k, a, plural, namespaced, _)| Resource {
            kind: k.to_string(),
            api: a.to_string(),
            plural: plural.to_string(),
            namespaced: *namespaced,
        })
}

/// The Flux kinds, at the version the cluster serves (else their newest known).
pub fn flux(kind: FluxKind, served: Option<&str>) -> Resource {
    let version = served
        .map(str::to_string)
        .or_else(|| kind.known_versions().first().map(|v| v.to_string()))
        .unwrap_or_else(|| "v1".into());
    Resource {
        kind: kind.as_str().to_string(),
        api: format!("/apis/{}/{version}", kind.group()),
        plural: kind.plural().to_string(),
        namespaced: true,
    }
}

impl Resource {
    /// A kind as the user wrote it, where it is known without asking the cluster; `Ok(None)`:
    /// `kind.group`, asked of each cluster's discovery.
    pub fn named(text: &str) -> Result<Option<Resource>, Untraceable> {
        let lower = text.to_ascii_lowercase();
        // `Secret`, `secrets`, `secret.v1`, `Secret.v1.core`: whatever follows the kind.
        let first = lower.split('.').next().unwrap_or_default();
        if matches!(first, "secret" | "secrets") {
            return Err(Untraceable::Secret);
        }
        if let Some(r) = built_in(text, None) {
            return Ok(Some(r));
        }
        // `deployments.apps`, `Deployment.apps`, `ingresses.networking.k8s.io`.
        if let Some((kind, group)) = text.split_once('.')
            && let Some(r) = built_in(kind, None)
            && r.api
                .strip_prefix("/apis/")
                .and_then(|gv| gv.rsplit_once('/'))
                .map(|(g, _)| g)
                == Some(group)
        {
            return Ok(Some(r));
        }
        if let Some(kind) = FluxKind::parse(text) {
            return Ok(Some(flux(kind, None)));
        }
        match text.split_once('.') {
            Some((_, group)) if !group.is_empty() => Ok(None),
            _ => Err(Untraceable::Unknown(text.to_string())),
        }
    }

    /// Whether this is where Secrets are served: never read.
    pub fn is_secret(&self) -> bool {
        self.api == "/api/v1" && self.plural == "secrets" || self.kind == "Secret"
    }

    pub fn path(&self, namespace: &str, name: &str) -> String {
        match self.namespaced && !namespace.is_empty() {
            true => format!("{}/namespaces/{namespace}/{}/{name}", self.api, self.plural),
            false => format!("{}/{}/{name}", self.api, self.plural),
        }
    }
}
