//! An object's last runs as its controller records them in `status.history`, newest first: a
//! Kustomization's (Flux 2.7: one entry per digest of the applied manifests and outcome, at most
//! five) and a HelmRelease's (one per Helm release, with the action that made it since Flux 2.8).
//! Read from the object as the cluster has it now, for the detail view and `describe_object`;
//! where the controller keeps no history, it says so.

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::FluxKind;
use crate::json::At;

/// At most this many runs are read: the controllers keep five (kustomize-controller) and ten
/// (helm-controller's default `maxHistory`); anything past this is a malformed object's.
pub const MOST: usize = 10;

/// One run: what was applied, how it ended, when, and how long it took.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerRun {
    /// A Kustomization's source revision (`metadata.revision`); a HelmRelease's chart name and
    /// version (`hello@0.1.0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The digest of what was applied: a Kustomization's manifests, a HelmRelease's release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// HelmRelease: the digest of the values it was released with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_digest: Option<String>,
    /// HelmRelease (Flux ≥ 2.8): install, upgrade, rollback, uninstall…
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// HelmRelease: the Helm release's number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    /// How it ended: a Kustomization's `lastReconciledStatus` (`ReconciliationSucceeded`,
    /// `HealthCheckFailed`, …), a HelmRelease's Helm status (`deployed`, `superseded`, `failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// First and last time it ran (Kustomization) or was deployed (HelmRelease).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<Timestamp>,
    /// Kustomization: how long its last run took, as the controller wrote it (`372.911688ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Kustomization: how many times it ran with this digest and outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
}

impl ControllerRun {
    /// Ended well: a Kustomization applied and healthy, a HelmRelease's release deployed (or
    /// superseded since, which it was when it ran).
    pub fn succeeded(&self) -> bool {
        matches!(
            self.status.as_deref(),
            Some("ReconciliationSucceeded" | "deployed" | "superseded")
        )
    }
}

/// What `status.history` says of an object.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "recorded", rename_all = "camelCase")]
pub enum Runs {
    /// Its runs, newest first (none yet: it never ran).
    #[serde(rename = "yes")]
    Recorded { runs: Vec<ControllerRun> },
    /// Its controller keeps no such record: why, for a person.
    #[serde(rename = "no")]
    NotRecorded { why: &'static str },
}

impl Runs {
    /// The runs of `object`, a `kind` as the cluster has it.
    pub fn of(kind: FluxKind, object: &Value) -> Runs {
        let entries = object.at("/status/history").and_then(Value::as_array);
        match (kind, entries) {
            (FluxKind::Kustomization | FluxKind::HelmRelease, Some(entries)) => Runs::Recorded {
                runs: entries.iter().take(MOST).map(|e| run_of(kind, e)).collect(),
            },
            (FluxKind::Kustomization, None) if ran(object) => Runs::NotRecorded {
                why: "this kustomize-controller keeps no status.history (it arrived in Flux 2.7)",
            },
            (FluxKind::HelmRelease, None) if ran(object) => Runs::NotRecorded {
                why: "this helm-controller keeps no status.history (helm.toolkit.fluxcd.io/v2 \
                      has it from Flux 2.2)",
            },
            (FluxKind::Kustomization | FluxKind::HelmRelease, None) => {
                Runs::Recorded { runs: Vec::new() }
            }
            _ => Runs::NotRecorded {
                why: "only Kustomizations and HelmReleases record their runs",
            },
        }
    }
}

/// Its controller has written a status for it: it has run at least once.
fn ran(object: &Value) -> bool {
    object
        .at("/status/observedGeneration")
        .and_then(Value::as_i64)
        .is_some_and(|g| g > 0)
}

fn run_of(kind: FluxKind, entry: &Value) -> ControllerRun {
    let text = |path: &str| {
        entry
            .at(path)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(|t| super::bounds::bounded_text(t, super::bounds::limits::SHORT).into_owned())
    };
    let time = |path: &str| entry.at(path)?.as_str()?.parse::<Timestamp>().ok();
    match kind {
        FluxKind::HelmRelease => ControllerRun {
            revision: match (text("/chartName"), text("/chartVersion")) {
                (Some(name), Some(version)) => Some(format!("{name}@{version}")),
                (name, version) => name.or(version),
            },
            digest: text("/digest"),
            config_digest: text("/configDigest"),
            action: text("/action"),
            version: entry.at("/version").and_then(Value::as_i64),
            status: text("/status"),
            first: time("/firstDeployed"),
            last: time("/lastDeployed"),
            ..ControllerRun::default()
        },
        _ => ControllerRun {
            revision: text("/metadata/revision"),
            digest: text("/digest"),
            status: text("/lastReconciledStatus"),
            first: time("/firstReconciled"),
            last: time("/lastReconciled"),
            duration: text("/lastReconciledDuration"),
            total: entry.at("/totalReconciliations").and_then(Value::as_i64),
            ..ControllerRun::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_kustomizations_runs_are_read_newest_first_with_digest_outcome_and_duration() {
        let ks = json!({"status": {"observedGeneration": 2, "history": [
            {"digest": "sha256:c88a", "firstReconciled": "2026-12-02T00:52:42Z",
             "lastReconciled": "2026-12-02T01:03:31Z", "lastReconciledDuration": "372.911688ms",
             "lastReconciledStatus": "ReconciliationSucceeded", "totalReconciliations": 4,
             "metadata": {"revision": "main@sha1:2de2a43b"}},
            {"digest": "sha256:0b1d", "firstReconciled": "2026-12-01T23:00:00Z",
             "lastReconciled": "2026-12-01T23:10:00Z", "lastReconciledDuration": "40.0321s",
             "lastReconciledStatus": "HealthCheckFailed", "totalReconciliations": 2,
             "metadata": {"revision": "main@sha1:11aa22bb"}}]}});
        let Runs::Recorded { runs } = Runs::of(FluxKind::Kustomization, &ks) else {
            panic!("recorded");
        };
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].revision.as_deref(), Some("main@sha1:2de2a43b"));
        assert_eq!(runs[0].digest.as_deref(), Some("sha256:c88a"));
        assert_eq!(runs[0].duration.as_deref(), Some("372.911688ms"));
        assert_eq!(runs[0].total, Some(4));
        assert!(runs[0].succeeded());
        assert!(!runs[1].succeeded());
        assert_eq!(runs[1].last, Some("2026-12-01T23:10:00Z".parse().unwrap()));
    }

    #[test]
    fn a_helmreleases_runs_name_the_chart_the_action_and_the_values() {
        let hr = json!({"status": {"observedGeneration": 1, "history": [
            {"action": "upgrade", "chartName": "hello", "chartVersion": "0.1.0",
             "configDigest": "sha256:670a", "digest": "sha256:06e1", "version": 2,
             "status": "deployed", "firstDeployed": "2026-12-02T01:11:41Z",
             "lastDeployed": "2026-12-02T01:20:00Z"}]}});
        let Runs::Recorded { runs } = Runs::of(FluxKind::HelmRelease, &hr) else {
            panic!("recorded");
        };
        assert_eq!(runs[0].revision.as_deref(), Some("hello@0.1.0"));
        assert_eq!(runs[0].action.as_deref(), Some("upgrade"));
        assert_eq!(runs[0].config_digest.as_deref(), Some("sha256:670a"));
        assert_eq!(runs[0].version, Some(2));
        assert!(runs[0].succeeded());
    }

    #[test]
    fn an_older_flux_says_it_keeps_no_history_and_a_new_object_has_no_runs_yet() {
        let old =
            json!({"status": {"observedGeneration": 3, "lastAppliedRevision": "main@sha1:1"}});
        let said = Runs::of(FluxKind::Kustomization, &old);
        assert!(
            matches!(said, Runs::NotRecorded { why } if why.contains("Flux 2.7")),
            "{said:?}"
        );
        let new = json!({"status": {"observedGeneration": -1}});
        assert_eq!(
            Runs::of(FluxKind::Kustomization, &new),
            Runs::Recorded { runs: Vec::new() }
        );
        let source = json!({"status": {"observedGeneration": 1}});
        assert!(matches!(
            Runs::of(FluxKind::GitRepository, &source),
            Runs::NotRecorded { .. }
        ));
    }

    #[test]
    fn a_malformed_history_gives_what_it_can_and_no_more_than_the_most() {
        let entries: Vec<Value> = (0..50)
            .map(|i| json!({"digest": i, "lastReconciled": "yesterday", "totalReconciliations": "x"}))
            .collect();
        let ks = json!({"status": {"history": entries}});
        let Runs::Recorded { runs } = Runs::of(FluxKind::Kustomization, &ks) else {
            panic!("recorded");
        };
        assert_eq!(runs.len(), MOST);
        assert_eq!(runs[0], ControllerRun::default());
    }
}
