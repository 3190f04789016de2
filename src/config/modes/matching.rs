//! A rule's fields against a cluster: globs in any letter case, a workspace also by a discovered
//! cluster's namespace on its management cluster, an origin only for discovered clusters.

use crate::fleet::ClusterInfo;
use crate::glob::glob_match;

/// A glob matched in any letter case. Guardrails err towards matching: `Platform` and
/// `platform` are one workspace to a deny rule.
pub(super) fn fits(pattern: &Option<String>, text: &str) -> bool {
    pattern
        .as_deref()
        .is_none_or(|p| glob_match(&p.to_lowercase(), &text.to_lowercase()))
}

/// `workspace` of a rule against a cluster: its workspace, and for a discovered cluster also
/// its namespace on the management cluster (which a relabelled Cluster cannot leave).
pub(super) fn fits_workspace(pattern: &Option<String>, cluster: &ClusterInfo) -> bool {
    fits(pattern, &cluster.workspace)
        || pattern.is_some()
            && cluster
                .origin
                .as_deref()
                .and_then(|o| o.rsplit('/').next())
                .is_some_and(|namespace| fits(pattern, namespace))
}

/// `origin` of a rule: only discovered clusters have one.
pub(super) fn fits_origin(pattern: &Option<String>, cluster: &ClusterInfo) -> bool {
    match (pattern, &cluster.origin) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(_), Some(origin)) => fits(pattern, origin),
    }
}
