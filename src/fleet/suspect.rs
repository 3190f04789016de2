//! Why it broke: the change before each failure. For one failing copy, the revision it tried and
//! did not apply, else the one it applied shortly before failing, else the artifact its source
//! produced shortly before; for a root cause failing the same way on many clusters, the change
//! most of its copies share, with the evidence for and against it.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::graph::source_key;
use super::{ClusterEntry, FluxKind, FluxSummary};

/// How a copy came by a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// It tried the revision and does not run it.
    Tried,
    /// It applied the revision, then failed.
    Applied,
    /// Its source produced the artifact, then it failed.
    Source,
}

/// The change before one copy's failure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub revision: Arc<str>,
    pub how: How,
    /// When the copy came by it: its source produced it, or it first ran it (where known).
    pub at: Option<Timestamp>,
    /// It came by the change within the window before it turned not ready.
    pub just_before: bool,
}

/// The change before `o` (on `cluster`) turned not ready; None when nothing changed that it
/// records.
pub fn change_before(
    cluster: &ClusterEntry,
    o: &FluxSummary,
    window: SignedDuration,
) -> Option<Change> {
    let failed = o.last_transition;
    let just_before = |at: Option<Timestamp>| match (at, failed) {
        (Some(at), Some(failed)) => at <= failed && failed.duration_since(at) <= window,
        _ => false,
    };
    let source = o
        .source
        .as_ref()
        .and_then(|r| source_key(&o.key, r))
        .and_then(|k| cluster.objects.get(&k))
        .and_then(|s| s.rollout.as_deref())
        .and_then(|r| Some((r.applied.clone()?, r.since)));
    let rollout = o.rollout.as_deref();
    if let Some(r) = rollout
        && r.behind_attempt()
        && let Some(tried) = &r.attempted
    {
        let at = source
            .as_ref()
            .filter(|(produced, _)| same(o.key.kind, tried, produced))
            .and_then(|(_, at)| *at);
        return Some(Change {
            revision: tried.clone(),
            how: How::Tried,
            at,
            just_before: just_before(at),
        });
    }
    if let Some(r) = rollout
        && let Some(applied) = &r.applied
        && just_before(r.since)
    {
        return Some(Change {
            revision: applied.clone(),
            how: How::Applied,
            at: r.since,
            just_before: true,
        });
    }
    let (produced, at) = source?;
    just_before(at).then_some(Change {
        revision: produced,
        how: How::Source,
        at,
        just_before: true,
    })
}

/// Whether `revision`, as `kind` records it, is the source's artifact `produced` (a HelmRelease
/// runs the chart version an OCI artifact's revision carries before its `@`).
fn same(kind: FluxKind, revision: &str, produced: &str) -> bool {
    match kind {
        FluxKind::HelmRelease => produced.split('@').next() == Some(revision),
        _ => produced == revision,
    }
}

/// The change a root cause's failing copies share, and the evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Suspect {
    pub revision: Arc<str>,
    /// Failing copies whose change before failing is this revision…
    pub copies: usize,
    /// …and of those, the ones that came by it within the window before failing.
    pub just_before: usize,
    /// Failing copies of the root cause, in all.
    pub failing: usize,
    /// Copies that run this revision and are not failing this way.
    pub runs_fine: usize,
    /// Copies neither running nor trying this revision…
    pub elsewhere: usize,
    /// …and of those, the ones failing this way all the same.
    pub elsewhere_failing: usize,
    /// The window, in minutes.
    pub window_minutes: i64,
    /// Whether this change is the likely cause (see [`Suspect::likely`]).
    pub likely: bool,
    /// The evidence in a sentence.
    pub evidence: String,
}

impl Suspect {
    /// A change is the likely cause when copies came by it just before failing, and none that
    /// did not take it fail this way.
    fn judge(&self) -> bool {
        self.just_before > 0 && self.elsewhere_failing == 0
    }

    /// The evidence in a sentence.
    fn explain(&self) -> String {
        let revision = crate::units::truncate_hex(&self.revision);
        if !self.likely {
            return format!(
                "nothing changed in the {} minutes before it failed (the last change: {revision}): \
                 the cause is outside the GitOps change — infrastructure, credentials, an \
                 upstream registry",
                self.window_minutes
            );
        }
        format!(
            "began after {revision} — {} of {} failing copies took it in the {} minutes before \
             failing; {} of {} copies on another revision fail this way; {} run it without failing",
            self.just_before,
            self.failing,
            self.window_minutes,
            self.elsewhere_failing,
            self.elsewhere,
            self.runs_fine
        )
    }
}

/// The change behind a root cause: `failing` are its copies (each with its cluster), `all`
/// every copy of the same object in the scope, `fingerprint` the failure they share. None when
/// no failing copy records a change before failing.
pub fn suspect<'a>(
    failing: &[(&'a ClusterEntry, &'a FluxSummary)],
    all: impl IntoIterator<Item = &'a FluxSummary>,
    window: SignedDuration,
) -> Option<Suspect> {
    let changes: Vec<Change> = failing
        .iter()
        .filter_map(|(c, o)| change_before(c, o, window))
        .collect();
    // The revision most copies share; among equals, the one most took just before failing.
    let mut tally: Vec<(Arc<str>, usize, usize)> = Vec::new();
    for ch in &changes {
        match tally.iter_mut().find(|(r, ..)| *r == ch.revision) {
            Some(t) => {
                t.1 += 1;
                t.2 += usize::from(ch.just_before);
            }
            None => tally.push((ch.revision.clone(), 1, usize::from(ch.just_before))),
        }
    }
    let (revision, copies, just_before) = tally
        .into_iter()
        .max_by(|a, b| (a.1, a.2).cmp(&(b.1, b.2)).then_with(|| b.0.cmp(&a.0)))?;
    let fingerprint = failing.first().map(|(_, o)| o.fingerprint);
    let (mut runs_fine, mut elsewhere, mut elsewhere_failing) = (0, 0, 0);
    for o in all {
        let same_failure = Some(o.fingerprint) == fingerprint;
        let r = o.rollout.as_deref();
        let runs = r.and_then(|r| r.applied.as_deref()) == Some(&*revision);
        let tries = r.and_then(|r| r.attempted.as_deref()) == Some(&*revision);
        if runs && !same_failure {
            runs_fine += 1;
        } else if !runs && !tries {
            elsewhere += 1;
            elsewhere_failing += usize::from(same_failure);
        }
    }
    let mut found = Suspect {
        revision,
        copies,
        just_before,
        failing: failing.len(),
        runs_fine,
        elsewhere,
        elsewhere_failing,
        window_minutes: window.as_mins(),
        likely: false,
        evidence: String::new(),
    };
    found.likely = found.judge();
    found.evidence = found.explain();
    Some(found)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::fleet::index::{Change as IndexChange, Event};
    use crate::fleet::{ClusterInfo, ClusterKey, Index};

    const OLD: &str = "main@sha1:1111111111111111111111111111111111111111";
    const NEW: &str = "main@sha1:2222222222222222222222222222222222222222";

    fn at(minutes: i64) -> String {
        (Timestamp::from_second(1_790_000_000).unwrap() + SignedDuration::from_mins(minutes))
            .to_string()
    }

    /// A cluster with the repository at `produced` (made at minute `made`) and the
    /// Kustomization `ks` (see [`apps`]).
    fn cluster(index: &mut Index, name: &str, (produced, made): (&str, i64), ks: Value) {
        index.add_cluster(ClusterInfo {
            key: ClusterKey::new(name.to_string()),
            ..ClusterInfo::new(name, "ws")
        });
        let git = json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": "flux-system", "namespace": "flux-system", "generation": 1},
            "status": {"observedGeneration": 1,
                "artifact": {"revision": produced, "lastUpdateTime": at(made)},
                "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                                "lastTransitionTime": at(made)}]}});
        let key = ClusterKey::new(name.to_string());
        for (kind, object) in [
            (FluxKind::GitRepository, git),
            (FluxKind::Kustomization, ks),
        ] {
            let summary = FluxSummary::of(kind, &object).unwrap();
            index.apply(Event {
                cluster: key.clone(),
                at: Timestamp::from_second(1_790_000_000).unwrap(),
                change: IndexChange::Replaced(kind, vec![summary]),
            });
        }
    }

    /// The Kustomization `apps` running `applied`, having tried `tried`, Ready `ready` since
    /// minute `turned`.
    fn apps(applied: &str, tried: &str, ready: &str, turned: i64) -> Value {
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
            "spec": {"sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
            "status": {"observedGeneration": 1, "lastAppliedRevision": applied,
                "lastAttemptedRevision": tried,
                "conditions": [{"type": "Ready", "status": ready,
                    "reason": if ready == "True" { "ReconciliationSucceeded" } else { "HealthCheckFailed" },
                    "message": "health check failed", "lastTransitionTime": at(turned)}]}})
    }

    fn failing_copies(index: &Index) -> Vec<(&ClusterEntry, &FluxSummary)> {
        index
            .entries()
            .filter_map(|(_, c)| {
                let o = c
                    .objects
                    .values()
                    .find(|o| o.key.kind == FluxKind::Kustomization)?;
                o.health.is_failing().then_some((c, &**o))
            })
            .collect()
    }

    fn all(index: &Index) -> Vec<&FluxSummary> {
        index
            .entries()
            .filter_map(|(_, c)| {
                c.objects
                    .values()
                    .find(|o| o.key.kind == FluxKind::Kustomization)
                    .map(|o| &**o)
            })
            .collect()
    }

    const WINDOW: SignedDuration = SignedDuration::from_mins(10);

    #[test]
    fn a_revision_tried_just_before_failing_is_the_suspect_and_the_evidence_counts() {
        let mut index = Index::new();
        // Two took NEW and failed 5 minutes later; one runs it fine; one still on OLD, fine.
        cluster(&mut index, "a", (NEW, 0), apps(OLD, NEW, "False", 5));
        cluster(&mut index, "b", (NEW, 2), apps(OLD, NEW, "False", 7));
        cluster(&mut index, "c", (NEW, 0), apps(NEW, NEW, "True", 1));
        cluster(&mut index, "d", (OLD, -900), apps(OLD, OLD, "True", -899));
        let failing = failing_copies(&index);
        let (c, o) = failing[0];
        let change = change_before(c, o, WINDOW).unwrap();
        assert_eq!(
            (&*change.revision, change.how, change.just_before),
            (NEW, How::Tried, true)
        );
        let s = suspect(&failing, all(&index), WINDOW).unwrap();
        assert_eq!(
            (
                s.copies,
                s.just_before,
                s.failing,
                s.runs_fine,
                s.elsewhere,
                s.elsewhere_failing
            ),
            (2, 2, 2, 1, 1, 0)
        );
        assert!(s.likely, "{s:?}");
        assert!(
            s.evidence
                .starts_with("began after main@sha1:22222222 — 2 of 2"),
            "{}",
            s.evidence
        );
    }

    #[test]
    fn a_failure_long_after_the_last_change_is_not_blamed_on_it() {
        let mut index = Index::new();
        // Applied NEW a day before failing; its source has not changed since.
        cluster(&mut index, "a", (NEW, -1440), apps(NEW, NEW, "False", 0));
        let failing = failing_copies(&index);
        assert_eq!(change_before(failing[0].0, failing[0].1, WINDOW), None);
        assert_eq!(suspect(&failing, all(&index), WINDOW), None);
    }

    #[test]
    fn copies_failing_the_same_way_without_the_change_clear_it() {
        let mut index = Index::new();
        cluster(&mut index, "a", (NEW, 0), apps(OLD, NEW, "False", 5));
        // On OLD, never tried NEW, and failing the same way all the same.
        cluster(&mut index, "b", (OLD, -900), apps(OLD, OLD, "False", 3));
        let failing = failing_copies(&index);
        let s = suspect(&failing, all(&index), WINDOW).unwrap();
        assert_eq!(s.elsewhere_failing, 1);
        assert!(!s.likely);
        assert!(
            s.evidence.starts_with("nothing changed in the 10 minutes"),
            "{}",
            s.evidence
        );
    }
}
