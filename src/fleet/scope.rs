//! The scope: which clusters and objects a person or an assistant names — the command line's
//! `[KIND] [NAME] --workspace --cluster -n`, an MCP tool's arguments, a proposal's selection —
//! one type read by every front door and made a [`Filter`] in one place.

use serde::{Deserialize, Serialize};

use super::filter::{self, Filter, StatusFilter};

/// Which clusters and objects, as named: the kind and name, the workspace, cluster globs and
/// the namespace. As JSON (an MCP tool's arguments, a proposal kept on disk or the bus) each
/// field is optional and left out when empty.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, clap::Args,
)]
pub struct Scope {
    /// Only clusters of this workspace.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Only clusters whose name matches one of these globs (`prod-*`, `eu-??-1`).
    #[arg(long = "cluster", value_name = "GLOB")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<String>,
    /// The Flux kind: Kustomization, HelmRelease, GitRepository, OCIRepository, HelmRepository,
    /// HelmChart, Bucket … (kind, plural or short name: ks, hr, gitrepo), or `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only objects in this namespace.
    #[arg(short, long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Only objects with this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The kind named is no Flux kind (nor a plural or short name of one, nor `all`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a Flux kind")]
pub struct NotAKind(pub String);

impl Scope {
    /// Whether the kind given is `all` (every Flux kind), rather than none (the watched kinds).
    pub fn names_every_kind(&self) -> bool {
        self.kind.as_deref() == Some("all")
    }

    /// The filter that selects what this scope names, with `status`.
    pub fn filter(&self, status: Option<StatusFilter>) -> Result<Filter, NotAKind> {
        let kind = filter::kind(self.kind.as_deref()).map_err(|k| NotAKind(k.to_string()))?;
        Ok(Filter {
            kind,
            name: self.name.clone(),
            workspace: self.workspace.clone(),
            clusters: self.clusters.clone(),
            namespace: self.namespace.clone(),
            status,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::FluxKind;

    #[test]
    fn a_scope_is_one_filter_and_the_same_json_wherever_it_is_named() {
        let scope = Scope {
            clusters: vec!["prod-*".into()],
            kind: Some("hr".into()),
            name: Some("redis".into()),
            ..Scope::default()
        };
        let filter = scope.filter(Some(StatusFilter::Failing)).unwrap();
        assert_eq!(filter.kind, Some(FluxKind::HelmRelease));
        assert_eq!(filter.clusters, ["prod-*"]);
        assert_eq!(filter.status, Some(StatusFilter::Failing));
        // Empty fields are left out: a proposal kept before reads the same.
        assert_eq!(
            serde_json::to_value(&scope).unwrap(),
            serde_json::json!({"clusters": ["prod-*"], "kind": "hr", "name": "redis"})
        );
        let all = Scope {
            kind: Some("all".into()),
            ..Scope::default()
        };
        assert!(all.names_every_kind());
        assert_eq!(all.filter(None).unwrap().kind, None);
        let wrong = Scope {
            kind: Some("deployment".into()),
            ..Scope::default()
        };
        assert_eq!(wrong.filter(None), Err(NotAKind("deployment".into())));
    }
}
