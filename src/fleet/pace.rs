//! How a Kustomization's or HelmRelease's runs go, from what its controller records: how long
//! the last one took, when it last ran and how often it should, and whether its runs alternate
//! between success and failure. The part of a summary "how reconciles behave" reads.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::FluxKind;
use super::object::{Deployment, Object};
use crate::units::parse_go_duration;

/// How one copy's runs go. Every field is what the controller wrote; None where it wrote
/// nothing readable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pace {
    /// How long the last run took, in milliseconds: a Kustomization's newest `status.history`
    /// entry's `lastReconciledDuration` (Flux ≥ 2.7), a HelmRelease's
    /// `lastAttemptedReleaseActionDuration` (its last install, upgrade or rollback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took_ms: Option<u32>,
    /// Kustomization: when it last ran (Unix seconds): the newest `lastReconciled`, or a failed
    /// attempt's, which `status.history` does not record when no manifests were built (a path
    /// or a dependency not there) — kustomize-controller rewrites Ready's `lastTransitionTime`
    /// at every attempt, so a Ready=False condition's time is when it last tried. helm-controller
    /// records no time for a reconcile that releases nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_at: Option<i64>,
    /// `spec.interval`, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<u32>,
    /// A success recorded between two failures: its runs go back and forth.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flapping: bool,
    /// The last run failed (a health check that waited out its timeout is long for that
    /// reason, and is already told as a failure).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
}

impl Pace {
    /// Nothing recorded (a kind that does not run, a controller that keeps none of it).
    pub fn is_unknown(&self) -> bool {
        *self == Pace::default()
    }

    pub(super) fn of(kind: FluxKind, object: &Object) -> Pace {
        let history = object.history();
        let millis = |text: Option<&str>| {
            let d = parse_go_duration(text?)?;
            Some(u32::try_from(d.as_millis()).unwrap_or(u32::MAX))
        };
        let interval_s = object
            .spec()
            .and_then(|s| parse_go_duration(s.interval.get()?))
            .map(|d| u32::try_from(d.as_secs()).unwrap_or(u32::MAX));
        match kind {
            FluxKind::Kustomization => Pace {
                took_ms: millis(
                    history
                        .first()
                        .and_then(|e| e.last_reconciled_duration.get()),
                ),
                ran_at: history
                    .iter()
                    .filter_map(|e| last_reconciled(e))
                    .chain(failed_attempt(object))
                    .max()
                    .map(|t| t.as_second()),
                interval_s,
                flapping: kustomization_flaps(history),
                failed: history
                    .first()
                    .and_then(|e| e.last_reconciled_status.get())
                    .is_some_and(|s| s != "ReconciliationSucceeded"),
            },
            FluxKind::HelmRelease => Pace {
                took_ms: millis(object.status_text(|s| &s.last_attempted_release_action_duration)),
                ran_at: None,
                interval_s,
                flapping: release_flaps(history),
                failed: history.first().and_then(|e| e.status.get()) == Some("failed"),
            },
            _ => Pace::default(),
        }
    }

    /// Has not run within twice its interval by `now`: its controller is not getting to it.
    /// Unknown (false) where the last run or the interval is not recorded.
    pub fn overdue(&self, now: Timestamp) -> Option<i64> {
        let (ran, every) = (self.ran_at?, i64::from(self.interval_s?));
        let late = now.as_second() - ran;
        (every > 0 && late > 2 * every).then_some(late)
    }
}

/// When the controller last tried and failed, where Ready says it failed: the condition is
/// written anew at every attempt.
fn failed_attempt(object: &Object) -> Option<Timestamp> {
    let ready = object.condition("Ready")?;
    (ready.status.get() == Some("False"))
        .then(|| ready.last_transition_time.get()?.parse().ok())
        .flatten()
}

fn last_reconciled(e: &Deployment) -> Option<Timestamp> {
    e.last_reconciled.get()?.parse().ok()
}

fn first_reconciled(e: &Deployment) -> Option<Timestamp> {
    e.first_reconciled.get()?.parse().ok()
}

/// kustomize-controller keeps one history entry per digest and outcome, updating its
/// `lastReconciled` each time it recurs: a success that recurred, or first came, strictly
/// within a failure's span (after its first run, before its last) means failure, success,
/// failure. A failure that recovered once (success, failure, success) is not flapping.
fn kustomization_flaps(history: &[Deployment]) -> bool {
    let succeeded = Deployment::reconciled;
    let span = |e: &Deployment| Some((first_reconciled(e)?, last_reconciled(e)?));
    history.iter().filter(|e| !succeeded(e)).any(|failed| {
        let Some((from, to)) = span(failed) else {
            return false;
        };
        history
            .iter()
            .filter(|e| succeeded(e))
            .filter_map(span)
            .any(|(first, last)| (from < first && first < to) || (from < last && last < to))
    })
}

/// A HelmRelease's history is one entry per Helm release, newest first: a deployed release
/// between two failed ones (an upgrade fails, is rolled back or fixed, and fails again).
fn release_flaps(history: &[Deployment]) -> bool {
    let failed = |e: &Deployment| e.status.get() == Some("failed");
    let deployed = |e: &Deployment| matches!(e.status.get(), Some("deployed" | "superseded"));
    let Some(newest_failure) = history.iter().position(failed) else {
        return false;
    };
    let after = &history[newest_failure + 1..];
    match after.iter().position(deployed) {
        Some(ok) => after[ok + 1..].iter().any(failed),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn pace(kind: FluxKind, value: Value) -> Pace {
        let text = value.to_string();
        let object: Object = serde_json::from_str(&text).unwrap();
        Pace::of(kind, &object)
    }

    fn entry(status: &str, first: &str, last: &str, took: &str) -> Value {
        json!({"digest": "sha256:c88a", "firstReconciled": first, "lastReconciled": last,
            "lastReconciledDuration": took, "lastReconciledStatus": status,
            "totalReconciliations": 2, "metadata": {"revision": "main@sha1:2830676"}})
    }

    fn ks(history: Vec<Value>) -> Value {
        json!({"spec": {"interval": "10m0s"}, "status": {"history": history}})
    }

    #[test]
    fn a_kustomizations_last_run_interval_and_overdue_are_read_from_its_history() {
        let p = pace(
            FluxKind::Kustomization,
            ks(vec![entry(
                "ReconciliationSucceeded",
                "2026-12-01T00:00:00Z",
                "2026-12-01T10:00:00Z",
                "5m0.021907s",
            )]),
        );
        assert_eq!(p.took_ms, Some(300_021));
        assert_eq!(p.interval_s, Some(600));
        assert!(!p.flapping);
        let at = |t: &str| t.parse::<Timestamp>().unwrap();
        assert_eq!(p.overdue(at("2026-12-01T10:20:00Z")), None);
        assert_eq!(p.overdue(at("2026-12-01T10:20:01Z")), Some(1201));
    }

    /// A Kustomization retried every 30 s whose path is gone (no manifests built: nothing in
    /// `status.history` moves) runs all the same: its failed attempts rewrite Ready's time, and
    /// it is not "not reconciled within twice its interval". Stopped controllers write nothing:
    /// overdue again.
    #[test]
    fn a_kustomization_retrying_a_failure_is_running_not_overdue() {
        let mut failing = ks(vec![entry(
            "ReconciliationSucceeded",
            "2026-12-01T00:00:00Z",
            "2026-12-01T10:00:00Z",
            "2s",
        )]);
        failing["status"]["conditions"] = json!([{"type": "Ready", "status": "False",
            "reason": "ArtifactFailed", "lastTransitionTime": "2026-12-01T10:29:30Z"}]);
        let p = pace(FluxKind::Kustomization, failing.clone());
        let at = |t: &str| t.parse::<Timestamp>().unwrap();
        assert_eq!(p.overdue(at("2026-12-01T10:30:00Z")), None);
        assert_eq!(p.overdue(at("2026-12-01T10:49:31Z")), Some(1201));
        // Ready=True's time is when it turned ready, not a run.
        failing["status"]["conditions"][0]["status"] = json!("True");
        let p = pace(FluxKind::Kustomization, failing);
        assert_eq!(p.overdue(at("2026-12-01T10:30:00Z")), Some(1800));
    }

    #[test]
    fn failure_success_failure_is_flapping_and_one_recovered_failure_is_not() {
        // Succeeded at 1:00 and 3:00, failed at 2:00 and 4:00.
        let flapping = ks(vec![
            entry(
                "HealthCheckFailed",
                "2026-12-01T02:00:00Z",
                "2026-12-01T04:00:00Z",
                "5m0s",
            ),
            entry(
                "ReconciliationSucceeded",
                "2026-12-01T01:00:00Z",
                "2026-12-01T03:00:00Z",
                "2s",
            ),
        ]);
        assert!(pace(FluxKind::Kustomization, flapping).flapping);
        // Succeeded at 1:00, failed at 2:00 and 3:00, succeeded since 4:00.
        let recovered = ks(vec![
            entry(
                "ReconciliationSucceeded",
                "2026-12-01T01:00:00Z",
                "2026-12-01T05:00:00Z",
                "2s",
            ),
            entry(
                "HealthCheckFailed",
                "2026-12-01T02:00:00Z",
                "2026-12-01T03:00:00Z",
                "5m0s",
            ),
        ]);
        assert!(!pace(FluxKind::Kustomization, recovered).flapping);
    }

    #[test]
    fn a_releases_runs_flap_when_a_deployed_release_sits_between_failed_ones() {
        let release = |statuses: &[&str]| {
            let history: Vec<Value> = statuses.iter().map(|s| json!({"status": s})).collect();
            json!({"spec": {"interval": "30m0s"},
                "status": {"history": history, "lastAttemptedReleaseActionDuration": "12.408551s"}})
        };
        let p = pace(
            FluxKind::HelmRelease,
            release(&["failed", "deployed", "failed"]),
        );
        assert!(p.flapping);
        assert_eq!(
            (p.took_ms, p.interval_s, p.ran_at),
            (Some(12_408), Some(1800), None)
        );
        assert!(
            !pace(
                FluxKind::HelmRelease,
                release(&["deployed", "failed", "superseded"])
            )
            .flapping
        );
        assert!(!pace(FluxKind::HelmRelease, release(&["failed", "failed"])).flapping);
    }

    #[test]
    fn what_a_cluster_wrote_wrong_reads_as_not_recorded() {
        let p = pace(
            FluxKind::Kustomization,
            json!({"spec": {"interval": "ten minutes"}, "status": {"history": [
                {"lastReconciled": "yesterday", "lastReconciledDuration": -3}]}}),
        );
        assert_eq!(p, Pace::default());
    }
}
