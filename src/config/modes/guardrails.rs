//! The guardrails of actions (`[actions]`): their limits, the deny rules, and whether Flux's own
//! verbs are asked first.

use serde::Deserialize;

use super::matching::{fits, fits_origin, fits_workspace};
use crate::fleet::{ClusterInfo, FluxKind};

/// Guardrails and limits of suspend, resume and reconcile.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Actions {
    /// Objects changed at once.
    pub concurrency: usize,
    /// Above this many targets, confirming means typing their number.
    pub confirm_above: usize,
    /// The most targets one action may have.
    pub max_targets: usize,
    /// Objects no action may touch.
    #[serde(default)]
    pub deny: Vec<DenyRule>,
    /// Each action also records a Kubernetes Event on its target, saying who, through what and
    /// why.
    #[serde(default = "recorded")]
    pub events: bool,
    /// Before acting, ask each cluster whether Flux's own verbs allow it (`suspend`, `resume`,
    /// `reconcile` on the object, as the Flux web UI asks): `off` (the default) or `check`.
    #[serde(default)]
    pub flux_verbs: FluxVerbs,
    /// Per cluster, over `flux_verbs`: the last rule that matches a cluster decides.
    #[serde(default)]
    pub flux_verbs_rules: Vec<FluxVerbsRule>,
}

/// Whether Flux's own RBAC verbs are asked before an action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FluxVerbs {
    /// The cluster's RBAC answers each patch (`patch` on the kind), as the flux CLI relies on.
    #[default]
    Off,
    /// A `SelfSubjectAccessReview` for Flux's verb on each object first; a target it denies is
    /// refused and nothing is sent to it.
    Check,
}

/// `flux_verbs` for the clusters it matches (every field it names matches; globs, any letter
/// case). Turning the check off applies to a discovered cluster only when the rule names its
/// `origin`, as granting write does: a management cluster must not be able to relabel a
/// cluster out of a check.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FluxVerbsRule {
    pub workspace: Option<String>,
    pub cluster: Option<String>,
    pub origin: Option<String>,
    pub flux_verbs: FluxVerbs,
}

impl FluxVerbsRule {
    fn matches(&self, cluster: &ClusterInfo) -> bool {
        let (allowed, workspace) = match self.flux_verbs {
            FluxVerbs::Off => (
                cluster.origin.is_none() || self.origin.is_some(),
                fits(&self.workspace, &cluster.workspace),
            ),
            FluxVerbs::Check => (true, fits_workspace(&self.workspace, cluster)),
        };
        allowed
            && workspace
            && fits(&self.cluster, &cluster.name)
            && fits_origin(&self.origin, cluster)
    }
}

fn recorded() -> bool {
    true
}

/// Refuses every target it matches: all the fields it names match (globs: `*`, `?`; any letter
/// case). `workspace` also matches a discovered cluster's namespace on its management cluster.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenyRule {
    pub workspace: Option<String>,
    pub cluster: Option<String>,
    /// `<management path>/<namespace>` of a discovered cluster.
    pub origin: Option<String>,
    /// The kind as Flux names it, its plural or a short name (`HelmRelease`, `hr`,
    /// `kustomizations`), or a glob over kind names (`Helm*`).
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl DenyRule {
    fn fits_kind(&self, kind: FluxKind) -> bool {
        match self.kind.as_deref() {
            None => true,
            Some(k) if k.contains(['*', '?']) => fits(&self.kind, kind.as_str()),
            Some(k) => FluxKind::parse(k) == Some(kind),
        }
    }
}

impl Actions {
    /// Whether Flux's verbs are asked of `cluster` before an action.
    pub fn checks_flux_verbs(&self, cluster: &ClusterInfo) -> bool {
        let verbs = self
            .flux_verbs_rules
            .iter()
            .rev()
            .find(|r| r.matches(cluster))
            .map_or(self.flux_verbs, |r| r.flux_verbs);
        verbs == FluxVerbs::Check
    }

    /// Why no action may touch this object, if a deny rule says so.
    pub fn denied(&self, cluster: &ClusterInfo, key: &crate::fleet::ObjectKey) -> Option<String> {
        self.deny.iter().enumerate().find_map(|(i, rule)| {
            let hit = fits_workspace(&rule.workspace, cluster)
                && fits(&rule.cluster, &cluster.name)
                && fits_origin(&rule.origin, cluster)
                && rule.fits_kind(key.kind)
                && fits(&rule.namespace, &key.namespace)
                && fits(&rule.name, &key.name);
            hit.then(|| format!("denied by actions.deny[{i}] in the config"))
        })
    }

    /// Why a program that may change anything on `cluster` (a writing plugin) is refused: any
    /// deny rule that matches the cluster, whatever objects it names, since the program could
    /// touch them.
    pub fn denied_cluster(&self, cluster: &ClusterInfo) -> Option<String> {
        self.deny.iter().enumerate().find_map(|(i, rule)| {
            let hit = fits_workspace(&rule.workspace, cluster)
                && fits(&rule.cluster, &cluster.name)
                && fits_origin(&rule.origin, cluster);
            hit.then(|| {
                format!(
                    "denied by actions.deny[{i}] in the config (a program that writes may \
                     touch any object of the cluster)"
                )
            })
        })
    }

    /// Every deny rule value that cannot mean what it says: a kind Flux does not have.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (i, rule) in self.deny.iter().enumerate() {
            let Some(kind) = rule.kind.as_deref() else {
                continue;
            };
            if !FluxKind::ALL.into_iter().any(|k| rule.fits_kind(k)) {
                problems.push(format!(
                    "actions.deny[{i}].kind {kind:?} is not a Flux kind (HelmRelease, hr, \
                     kustomizations, Helm* …)"
                ));
            }
        }
        problems
    }
}
