//! Who may change what: read-only or write per cluster (`[ui] mode`, `[[modes]]`, the command
//! line), and the guardrails of actions (`[actions]`).

use serde::Deserialize;

use crate::fleet::ClusterInfo;

mod guardrails;
mod matching;

pub use guardrails::{Actions, DenyRule, FluxVerbs, FluxVerbsRule};
use matching::{fits, fits_origin, fits_workspace};

/// Proof that writes are enabled: only [`Config::writable`] makes one, when some cluster's mode
/// allows writes and the guardrails can be read exactly. Whatever sends a mutating request
/// wants one; a read-only session never has one.
#[derive(Debug)]
pub struct WriteGrant(());

/// Which clusters actions may change, for every cluster, also those that join while running:
/// the flag (`--write` / `--read-only`) decides for all; else the last `[[modes]]` rule
/// matching the cluster, else `[ui] mode`. Nothing is writable while the guardrails cannot be
/// read exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Permissions {
    flag: Option<Mode>,
    default: Mode,
    rules: Vec<ModeRule>,
    refused: bool,
}

impl Permissions {
    /// Nothing is writable.
    pub fn read_only() -> Permissions {
        Permissions {
            flag: Some(Mode::ReadOnly),
            default: Mode::ReadOnly,
            rules: Vec::new(),
            refused: true,
        }
    }

    pub fn writable(&self, cluster: &ClusterInfo) -> bool {
        let mode = self.flag.unwrap_or_else(|| {
            self.rules
                .iter()
                .rev()
                .find(|r| r.matches(cluster))
                .map_or(self.default, |r| r.mode)
        });
        !self.refused && mode == Mode::Write
    }
}

/// The mode of the clusters it matches (every field it names matches; globs, any letter case).
///
/// A rule that grants write applies to a cluster discovered on a management cluster only when it
/// names that cluster's `origin`: its workspace and name come from the management cluster, which
/// must not be able to move a cluster into write mode by relabelling it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeRule {
    pub workspace: Option<String>,
    pub cluster: Option<String>,
    /// `<management path>/<namespace>` of a discovered cluster (`mgmt/prod-*`).
    pub origin: Option<String>,
    pub mode: Mode,
}

impl ModeRule {
    fn matches(&self, cluster: &ClusterInfo) -> bool {
        // Granting write: by the workspace shown only, and for a discovered cluster only when
        // the rule names where it comes from. Taking write away: by any name it has.
        let (allowed, workspace) = if self.mode == Mode::Write {
            (
                cluster.origin.is_none() || self.origin.is_some(),
                fits(&self.workspace, &cluster.workspace),
            )
        } else {
            (true, fits_workspace(&self.workspace, cluster))
        };
        allowed
            && workspace
            && fits(&self.cluster, &cluster.name)
            && fits_origin(&self.origin, cluster)
    }
}

/// Which clusters actions may change, by `flag` over the `rules` over the `default` mode (none
/// when the guardrails could not be read: `refused`), and the grant to change them when at
/// least one of `clusters` is writable. [`crate::config::Config::writable`] is its one caller.
pub(super) fn writable<'a>(
    (flag, default): (Option<Mode>, Mode),
    rules: Vec<ModeRule>,
    refused: bool,
    clusters: impl IntoIterator<Item = &'a ClusterInfo>,
) -> (Option<WriteGrant>, Permissions) {
    let permissions = Permissions {
        flag,
        default,
        rules,
        refused,
    };
    let any = clusters.into_iter().any(|c| permissions.writable(c));
    (any.then_some(WriteGrant(())), permissions)
}

/// Read-only (the default) or write. In read-only mode there is no [`WriteGrant`], so no writer
/// exists: no code path can send a mutating request.
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
    use crate::config::Config;
    use crate::fleet::FluxKind;

    /// A cluster of a kubeconfig, or found on `mgmt` in `namespace`.
    fn spec(workspace: &str, name: &str, namespace: Option<&str>) -> ClusterInfo {
        ClusterInfo {
            key: crate::fleet::ClusterKey::new(name),
            source: Default::default(),
            name: name.into(),
            workspace: workspace.into(),
            server: format!("https://{name}"),
            labels: Default::default(),
            management: namespace.map(|_| vec!["mgmt".into()]).unwrap_or_default(),
            origin: namespace.map(|namespace| format!("mgmt/{namespace}")),
            context: name.into(),
            user: String::new(),
            unreachable: None,
        }
    }

    /// Whether each of `clusters` is writable.
    fn each_writable(
        config: &Config,
        flag: Option<Mode>,
        clusters: &[ClusterInfo],
    ) -> (Option<WriteGrant>, Vec<bool>) {
        let (grant, permissions) = config.writable(flag, clusters);
        let each = clusters.iter().map(|c| permissions.writable(c)).collect();
        (grant, each)
    }

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
        let spec = |workspace: &str, name: &str| spec(workspace, name, None);
        let clusters = [
            spec("dev-eu", "dev-web-1"),
            spec("dev-eu", "dev-db-1"),
            spec("prod", "prod-web-1"),
        ];
        let (grant, writable) = each_writable(&config, None, &clusters);
        assert!(grant.is_some());
        assert_eq!(writable, [true, false, false]);
        let (grant, writable) = each_writable(&config, Some(Mode::ReadOnly), &clusters);
        assert!(grant.is_none(), "--read-only: no grant at all");
        assert_eq!(writable, [false, false, false]);
        let (_, writable) = each_writable(&config, Some(Mode::Write), &clusters);
        assert_eq!(writable, [true, true, true]);
        // The defaults: read-only everywhere.
        let (grant, _) = each_writable(&Config::defaults(), None, &clusters);
        assert!(grant.is_none());
    }

    fn discovered(workspace: &str, name: &str, namespace: &str) -> ClusterInfo {
        spec(workspace, name, Some(namespace))
    }

    fn key(kind: FluxKind) -> crate::fleet::ObjectKey {
        crate::fleet::ObjectKey::new(kind, "flux-system", "apps")
    }

    #[test]
    fn deny_kinds_are_read_as_flux_reads_them_and_names_in_any_case() {
        let cluster = spec("platform", "c1", None);
        for kind in [
            "Kustomization",
            "kustomization",
            "ks",
            "KUSTOMIZATIONS",
            "Kust*",
        ] {
            let text = format!("[[actions.deny]]\nkind = {kind:?}\nworkspace = \"Platform\"\n");
            let (config, warnings) = Config::parse(Some(&text), std::path::Path::new("u.toml"));
            assert_eq!(warnings, [], "{kind}");
            assert!(
                config
                    .actions
                    .denied(&cluster, &key(FluxKind::Kustomization))
                    .is_some(),
                "{kind} denies a Kustomization in workspace platform"
            );
            assert!(
                config
                    .actions
                    .denied(&cluster, &key(FluxKind::HelmRelease))
                    .is_none()
            );
        }
    }

    #[test]
    fn guardrails_that_cannot_be_read_exactly_refuse_every_write() {
        let clusters = [spec("dev", "c", None)];
        let typo = "[ui]\nmode = \"write\"\n[[actions.deny]]\nkind = \"Kustomisation\"\n";
        let mistyped_key = "[ui]\nmode = \"write\"\n[actions]\nconfirm_abve = 3\n";
        for text in [typo, mistyped_key, "[ui\nmode = \"write\"\n"] {
            let (config, warnings) = Config::parse(Some(text), std::path::Path::new("u.toml"));
            assert!(!warnings.is_empty(), "{text}");
            let (grant, writable) = each_writable(&config, Some(Mode::Write), &clusters);
            assert!(grant.is_none(), "{text}: even --write is refused");
            assert_eq!(writable, [false]);
            assert!(config.writes_refused().is_some());
        }
        let (config, _) = Config::parse(Some(typo), std::path::Path::new("u.toml"));
        assert!(
            config
                .writes_refused()
                .unwrap()
                .contains("\"Kustomisation\" is not a Flux kind")
        );
    }

    #[test]
    fn discovered_clusters_are_guarded_by_where_they_come_from() {
        // Relabelled on the management cluster from workspace prod-eu to dev: the deny rule
        // written for prod-eu still matches through its namespace.
        let moved = discovered("dev", "c1", "prod-eu");
        for text in [
            "[[actions.deny]]\nworkspace = \"prod-*\"\n",
            "[[actions.deny]]\norigin = \"mgmt/prod-*\"\n",
        ] {
            let (config, _) = Config::parse(Some(text), std::path::Path::new("u.toml"));
            let denied = config.actions.denied(&moved, &key(FluxKind::Kustomization));
            assert!(denied.is_some(), "{text}");
        }
        // A write rule by workspace does not reach discovered clusters; by origin it does.
        let spec = |ws: &str, namespace: &str| spec(ws, "c1", Some(namespace));
        let by_workspace = "[[modes]]\nworkspace = \"dev\"\nmode = \"write\"\n";
        let (config, _) = Config::parse(Some(by_workspace), std::path::Path::new("u.toml"));
        assert_eq!(
            each_writable(&config, None, &[spec("dev", "prod-eu")]).1,
            [false]
        );
        let by_origin = "[[modes]]\norigin = \"mgmt/dev-*\"\nmode = \"write\"\n";
        let (config, _) = Config::parse(Some(by_origin), std::path::Path::new("u.toml"));
        assert_eq!(
            each_writable(&config, None, &[spec("dev", "prod-eu")]).1,
            [false]
        );
        assert_eq!(
            each_writable(&config, None, &[spec("anything", "dev-eu")]).1,
            [true]
        );
    }

    #[test]
    fn a_scoped_deny_rule_refuses_what_it_names_and_nothing_else() {
        let prod = spec("prod", "prod-web-1", None);
        let dev = spec("dev", "dev-db-1", None);
        let from_prod = discovered("dev", "c1", "prod-eu");
        let from_dev = discovered("dev", "c2", "dev-eu");
        let ks = key(FluxKind::Kustomization);
        let cases: &[(&str, [bool; 4])] = &[
            ("workspace = \"prod*\"", [true, false, true, false]),
            ("cluster = \"*-db-*\"", [false, true, false, false]),
            ("origin = \"mgmt/prod-*\"", [false, false, true, false]),
            (
                "workspace = \"dev\"\ncluster = \"c2\"",
                [false, false, false, true],
            ),
        ];
        for (rule, expected) in cases {
            let text = format!("[[actions.deny]]\n{rule}\n");
            let (config, warnings) = Config::parse(Some(&text), std::path::Path::new("u.toml"));
            assert_eq!(warnings, [], "{rule}");
            let clusters = [&prod, &dev, &from_prod, &from_dev];
            let objects: Vec<bool> = clusters
                .iter()
                .map(|c| config.actions.denied(c, &ks).is_some())
                .collect();
            assert_eq!(objects, expected, "objects under {rule}");
            // A writing program is refused on exactly the clusters the rule reaches.
            let programs: Vec<bool> = clusters
                .iter()
                .map(|c| config.actions.denied_cluster(c).is_some())
                .collect();
            assert_eq!(programs, expected, "writing programs under {rule}");
        }
        // A rule naming objects keeps writing programs off its whole cluster, and only that.
        let text = "[[actions.deny]]\nworkspace = \"prod\"\nkind = \"HelmRelease\"\nname = \"x\"\n";
        let (config, _) = Config::parse(Some(text), std::path::Path::new("u.toml"));
        assert!(config.actions.denied(&prod, &ks).is_none());
        assert!(config.actions.denied_cluster(&prod).is_some());
        assert!(config.actions.denied_cluster(&dev).is_none());
    }

    #[test]
    fn a_scoped_read_only_mode_takes_write_away_there_only() {
        let text =
            "[ui]\nmode = \"write\"\n[[modes]]\nworkspace = \"prod\"\nmode = \"read-only\"\n";
        let (config, warnings) = Config::parse(Some(text), std::path::Path::new("u.toml"));
        assert_eq!(warnings, []);
        let clusters = [
            spec("prod", "p1", None),
            spec("dev", "d1", None),
            // Found in namespace prod on the management cluster, shown in workspace dev.
            discovered("dev", "d2", "prod"),
            discovered("dev", "d3", "dev"),
        ];
        let (grant, writable) = each_writable(&config, None, &clusters);
        assert!(grant.is_some());
        assert_eq!(writable, [false, true, false, true]);
    }
}
