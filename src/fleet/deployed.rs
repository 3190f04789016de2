//! What a Kustomization or HelmRelease runs, what it tried, and since when: the part of a
//! summary the rollout view reads.

use std::cmp::Ordering;
use std::sync::Arc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::FluxKind;
use super::bounds::{bounded, limits};
use crate::json::At;

/// What a Kustomization or HelmRelease has deployed and tried to deploy. The texts are shared
/// between the objects of a fleet by the index: ten thousand clusters on one revision hold it once.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollout {
    /// Kustomization `lastAppliedRevision`; HelmRelease the chart version of the current
    /// `status.history` entry (else `lastAppliedRevision`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<Arc<str>>,
    /// `lastAttemptedRevision`: differs from `applied` while a new revision fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempted: Option<Arc<str>>,
    /// Kustomization `lastAppliedOriginRevision`: the revision of the source's origin (an OCI
    /// artifact built from Git), where the controller records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Arc<str>>,
    /// HelmRelease: the chart's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chart: Option<Arc<str>>,
    /// HelmRelease: the digest of the values of the current release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_digest: Option<Arc<str>>,
    /// The revision it ran before this one, from `status.history`: older than `applied`
    /// wherever it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<Arc<str>>,
    /// When the current revision was first reconciled (Kustomization, `status.history`, Flux ≥
    /// 2.7) or deployed (HelmRelease `firstDeployed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
}

impl Rollout {
    pub(super) fn of(kind: FluxKind, object: &Value) -> Option<Rollout> {
        let at = |path: &str| -> Option<Arc<str>> {
            object
                .at(path)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|s| Arc::from(&*bounded(s, limits::SHORT)))
        };
        let time = |path: &str| -> Option<Timestamp> { object.at(path)?.as_str()?.parse().ok() };
        let rollout = match kind {
            FluxKind::Kustomization => {
                let applied = at("/status/lastAppliedRevision");
                let (since, previous) = history_of(object, applied.as_deref());
                Rollout {
                    attempted: at("/status/lastAttemptedRevision"),
                    origin: at("/status/lastAppliedOriginRevision"),
                    since,
                    previous: previous.map(|p| Arc::from(&*bounded(p, limits::SHORT))),
                    applied,
                    ..Rollout::default()
                }
            }
            FluxKind::HelmRelease => Rollout {
                applied: at("/status/history/0/chartVersion")
                    .or_else(|| at("/status/lastAppliedRevision")),
                previous: previous_chart(object).map(|p| Arc::from(&*bounded(p, limits::SHORT))),
                attempted: at("/status/lastAttemptedRevision"),
                chart: at("/status/history/0/chartName").or_else(|| at("/spec/chart/spec/chart")),
                config_digest: at("/status/history/0/configDigest")
                    .or_else(|| at("/status/lastAttemptedConfigDigest")),
                since: time("/status/history/0/firstDeployed"),
                ..Rollout::default()
            },
            // A source's artifact: what its consumers should apply, produced when.
            k if k.has_artifact() => Rollout {
                applied: at("/status/artifact/revision"),
                since: time("/status/artifact/lastUpdateTime"),
                ..Rollout::default()
            },
            _ => return None,
        };
        (rollout != Rollout::default()).then_some(rollout)
    }

    /// The kinds whose revisions the rollout view follows.
    pub fn followed(kind: FluxKind) -> bool {
        matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease) || kind.has_artifact()
    }

    /// Tried something other than what runs: a new revision that has not been applied (yet).
    pub fn behind_attempt(&self) -> bool {
        matches!((&self.applied, &self.attempted), (Some(a), Some(t)) if a != t)
    }
}

/// When a Kustomization's applied revision was first reconciled, and the revision before it.
/// `status.history` is newest first, and one revision may have several entries in a row (one
/// per outcome): the oldest of the run that starts at the newest entry for `applied` is when it
/// arrived, and the entry after the run is what ran before.
fn history_of<'a>(
    object: &'a Value,
    applied: Option<&str>,
) -> (Option<Timestamp>, Option<&'a str>) {
    fn revision(e: &Value) -> Option<&str> {
        e.at("/metadata/revision").and_then(Value::as_str)
    }
    let Some(applied) = applied else {
        return (None, None);
    };
    let Some(history) = object.at("/status/history").and_then(Value::as_array) else {
        return (None, None);
    };
    let Some(start) = history.iter().position(|e| revision(e) == Some(applied)) else {
        return (None, None);
    };
    let run = history[start..]
        .iter()
        .take_while(|e| revision(e) == Some(applied))
        .count();
    let since = history[start + run - 1]
        .get("firstReconciled")
        .and_then(Value::as_str)
        .and_then(|t| t.parse().ok());
    (since, history.get(start + run).and_then(revision))
}

/// The chart version a HelmRelease ran before its current one (`status.history`, newest first).
fn previous_chart(object: &Value) -> Option<&str> {
    let history = object.at("/status/history")?.as_array()?;
    fn version(e: &Value) -> Option<&str> {
        e.get("chartVersion").and_then(Value::as_str)
    }
    let current = version(history.first()?)?;
    history[1..]
        .iter()
        .filter_map(version)
        .find(|v| *v != current)
}

/// Compares two revisions as release versions (`v1.2.10` after `v1.2.9`), where both read as
/// such; equal otherwise.
pub fn release_order(a: &str, b: &str) -> Ordering {
    fn parts(r: &str) -> Option<Vec<u64>> {
        let v = r.split('@').next()?;
        let v = v.strip_prefix('v').unwrap_or(v);
        let core = v.split(['-', '+']).next()?;
        core.split('.').map(|p| p.parse().ok()).collect()
    }
    match (parts(a), parts(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => Ordering::Equal,
    }
}
