//! What a Kustomization or HelmRelease runs, what it tried, and since when: the part of a
//! summary the rollout view reads.

use std::sync::Arc;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::FluxKind;
use super::summary::{bounded, limits};

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
    /// When the current revision was first reconciled (Kustomization, `status.history`, Flux ≥
    /// 2.7) or deployed (HelmRelease `firstDeployed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
}

impl Rollout {
    pub(super) fn of(kind: FluxKind, object: &Value) -> Option<Rollout> {
        let at = |path: &str| -> Option<Arc<str>> {
            object
                .pointer(path)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|s| Arc::from(&*bounded(s, limits::SHORT)))
        };
        let time =
            |path: &str| -> Option<Timestamp> { object.pointer(path)?.as_str()?.parse().ok() };
        let rollout = match kind {
            FluxKind::Kustomization => {
                let applied = at("/status/lastAppliedRevision");
                // The history entry of the revision applied now (newest first).
                let since = object
                    .pointer("/status/history")
                    .and_then(Value::as_array)
                    .and_then(|h| {
                        h.iter().find(|e| {
                            e.pointer("/metadata/revision").and_then(Value::as_str)
                                == applied.as_deref()
                        })
                    })
                    .and_then(|e| e.get("firstReconciled")?.as_str()?.parse().ok());
                Rollout {
                    attempted: at("/status/lastAttemptedRevision"),
                    origin: at("/status/lastAppliedOriginRevision"),
                    since,
                    applied,
                    ..Rollout::default()
                }
            }
            FluxKind::HelmRelease => Rollout {
                applied: at("/status/history/0/chartVersion")
                    .or_else(|| at("/status/lastAppliedRevision")),
                attempted: at("/status/lastAttemptedRevision"),
                chart: at("/status/history/0/chartName").or_else(|| at("/spec/chart/spec/chart")),
                config_digest: at("/status/history/0/configDigest")
                    .or_else(|| at("/status/lastAttemptedConfigDigest")),
                since: time("/status/history/0/firstDeployed"),
                ..Rollout::default()
            },
            _ => return None,
        };
        (rollout != Rollout::default()).then_some(rollout)
    }

    /// Tried something other than what runs: a new revision that has not been applied (yet).
    pub fn behind_attempt(&self) -> bool {
        matches!((&self.applied, &self.attempted), (Some(a), Some(t)) if a != t)
    }
}
