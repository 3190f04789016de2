//! Who may change what: read-only or write per cluster (`[ui] mode`, `[[modes]]`, the command
//! line), and the guardrails of actions (`[actions]`).

use serde::Deserialize;

use super::Config;
use crate::inventory::ClusterSpec;
use crate::inventory::rules::glob_match;
use crate::k8s::WriteGrant;

/// The mode of the clusters it matches (every field it names matches; globs).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeRule {
    pub workspace: Option<String>,
    pub cluster: Option<String>,
    pub mode: Mode,
}

impl Config {
    /// Which clusters actions may change: `flag` (`--write` / `--read-only`) decides for all;
    /// else the last `[[modes]]` rule matching the cluster, else `[ui] mode`. The grant exists
    /// when at least one cluster is writable.
    pub fn writable(
        &self,
        flag: Option<Mode>,
        clusters: &[ClusterSpec],
    ) -> (Option<WriteGrant>, Vec<bool>) {
        let fits =
            |p: &Option<String>, text: &str| p.as_deref().is_none_or(|p| glob_match(p, text));
        let writable: Vec<bool> = clusters
            .iter()
            .map(|c| {
                let mode = flag.unwrap_or_else(|| {
                    self.modes
                        .iter()
                        .rev()
                        .find(|r| fits(&r.workspace, &c.workspace) && fits(&r.cluster, &c.name))
                        .map_or(self.ui.mode, |r| r.mode)
                });
                mode == Mode::Write
            })
            .collect();
        let any = writable.iter().any(|w| *w);
        (any.then_some(WriteGrant(())), writable)
    }
}

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
}

/// Refuses every target it matches: all the fields it names match (globs: `*`, `?`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenyRule {
    pub workspace: Option<String>,
    pub cluster: Option<String>,
    /// The kind as Flux names it: `HelmRelease`, `Kustomization`, …
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl Actions {
    /// Why no action may touch this object, if a deny rule says so.
    pub fn denied(
        &self,
        workspace: &str,
        cluster: &str,
        key: &crate::fleet::ObjectKey,
    ) -> Option<String> {
        use crate::inventory::rules::glob_match;
        let fits = |pattern: &Option<String>, text: &str| {
            pattern.as_deref().is_none_or(|p| glob_match(p, text))
        };
        self.deny.iter().enumerate().find_map(|(i, rule)| {
            let hit = fits(&rule.workspace, workspace)
                && fits(&rule.cluster, cluster)
                && fits(&rule.kind, key.kind.as_str())
                && fits(&rule.namespace, &key.namespace)
                && fits(&rule.name, &key.name);
            hit.then(|| format!("denied by actions.deny[{i}] in the config"))
        })
    }
}

/// Read-only (the default) or write. In read-only mode the engine never hands out a
/// [`crate::k8s::Writer`]: no code path can send a mutating request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    #[default]
    ReadOnly,
    Write,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn modes_per_workspace_and_cluster_the_last_rule_winning_and_flags_over_all() {
        let user = r#"
            [ui]
            mode = "read-only"
            [[modes]]
            workspace = "dev-*"
            mode = "write"
            [[modes]]
            cluster = "dev-db-*"
            mode = "read-only"
        "#;
        let (config, warnings) = Config::parse(Some(user), std::path::Path::new("user.toml"));
        assert_eq!(warnings, []);
        let spec = |workspace: &str, name: &str| crate::inventory::ClusterSpec {
            name: name.into(),
            context: name.into(),
            workspace: workspace.into(),
            server: format!("https://{name}"),
            labels: Default::default(),
            source: Default::default(),
            kubeconfig: Default::default(),
            discovered: None,
        };
        let clusters = [
            spec("dev-eu", "dev-web-1"),
            spec("dev-eu", "dev-db-1"),
            spec("prod", "prod-web-1"),
        ];
        let (grant, writable) = config.writable(None, &clusters);
        assert!(grant.is_some());
        assert_eq!(writable, [true, false, false]);
        let (grant, writable) = config.writable(Some(Mode::ReadOnly), &clusters);
        assert!(grant.is_none(), "--read-only: no grant at all");
        assert_eq!(writable, [false, false, false]);
        let (_, writable) = config.writable(Some(Mode::Write), &clusters);
        assert_eq!(writable, [true, true, true]);
        // The defaults: read-only everywhere.
        let (grant, _) = Config::defaults().writable(None, &clusters);
        assert!(grant.is_none());
    }
}
