//! What a Kustomization or HelmRelease runs, what it tried, and since when: the part of a
//! summary the rollout view reads.

use std::cmp::Ordering;

use jiff::Timestamp;
use serde::Deserialize;

use super::FluxKind;
use super::SharedText;
use super::bounds::{self, limits};
use super::object::{Deployment, Object};
use super::pace::Pace;

/// What a Kustomization or HelmRelease has deployed and tried to deploy. The texts are shared
/// between the objects of a fleet by the index: ten thousand clusters on one revision hold it once.
/// Boxed in the summary of every Kustomization, HelmRelease and source (170,000 of a 10,000-cluster
/// fleet's 200,000 objects), so what only a HelmRelease says is boxed apart ([`HelmRollout`]): the
/// rest (120 bytes) fits the allocator's 128-byte class rather than the 160-byte one, 32 bytes
/// less for each Kustomization and source, 8 more for a HelmRelease with its 40-byte box. On the
/// wire as one flat object, as before ([`wire`]).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(from = "wire::FlatRollout<'static>")]
pub struct Rollout {
    /// Kustomization `lastAppliedRevision`; HelmRelease the chart version of the current
    /// `status.history` entry (else `lastAppliedRevision`).
    pub applied: Option<SharedText>,
    /// `lastAttemptedRevision`: differs from `applied` while a new revision fails.
    pub attempted: Option<SharedText>,
    /// Kustomization `lastAppliedOriginRevision`: the revision of the source's origin (an OCI
    /// artifact built from Git), where the controller records it.
    pub origin: Option<SharedText>,
    /// Kustomization: the digest of the manifests it applied from `applied` (its newest
    /// `status.history` entry for that revision, Flux ≥ 2.7): copies on one revision that
    /// applied different manifests (substitutions, patches) differ here.
    pub digest: Option<SharedText>,
    /// The revision it ran before this one, from `status.history`: older than `applied`
    /// wherever it runs.
    pub previous: Option<SharedText>,
    /// When the current revision was first reconciled (Kustomization, `status.history`, Flux ≥
    /// 2.7) or deployed (HelmRelease `firstDeployed`).
    pub since: Option<Timestamp>,
    /// Kustomization and HelmRelease: how its runs go (how long, how often, back and forth).
    pub pace: Pace,
    /// It ran `applied` without failing: a Kustomization's `status.history` has a successful
    /// run of it, a HelmRelease's newest release of it is not failed. A failure after that is
    /// not the revision's doing unless something else changed.
    pub proven: bool,
    /// What only a HelmRelease says; None when it says none of it (as every other kind).
    helm: Option<Box<HelmRollout>>,
}

/// The part of a [`Rollout`] only a HelmRelease has.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HelmRollout {
    /// The chart's name.
    pub chart: Option<SharedText>,
    /// The digest of the values of the current release.
    pub config_digest: Option<SharedText>,
    /// `Drifted=True` (helm-controller's drift detection, Flux 2.9): the live objects differ
    /// from the release; the controller's message says which and how.
    pub drifted: Option<SharedText>,
    /// The digest of the values it last tried (`lastAttemptedConfigDigest`)…
    pub tried_values: Option<SharedText>,
    /// …and of its newest release that did not fail (from `status.history`, else from what
    /// was seen of it before: helm-controller keeps few releases, and a release left pending by
    /// a controller that died is dropped).
    pub released_values: Option<SharedText>,
}

/// What a rollout of any other kind says of a HelmRelease's part: nothing.
static NO_HELM: HelmRollout = HelmRollout {
    chart: None,
    config_digest: None,
    drifted: None,
    tried_values: None,
    released_values: None,
};

impl HelmRollout {
    /// Boxed, or None when it says nothing: a rollout equal to another holds its part the same
    /// way.
    fn boxed(self) -> Option<Box<HelmRollout>> {
        (self != NO_HELM).then(|| Box::new(self))
    }
}

impl Rollout {
    pub(super) fn of(kind: FluxKind, object: &Object) -> Option<Rollout> {
        let shared = |text: Option<&str>| bounds::shared(text, limits::SHORT);
        let time = |text: Option<&str>| -> Option<Timestamp> { text?.parse().ok() };
        let newest = object.history().first();
        let rollout = match kind {
            FluxKind::Kustomization => {
                let applied = shared(object.status_text(|s| &s.last_applied_revision));
                let (since, previous) = history_of(object.history(), applied.as_deref());
                let digest = applied.as_deref().and_then(|applied| {
                    let entry = object.history().iter().find(|e| {
                        e.metadata.get().and_then(|m| m.revision.get()) == Some(applied)
                    })?;
                    shared(entry.digest.get())
                });
                let proven = applied.as_deref().is_some_and(|applied| {
                    object.history().iter().any(|e| {
                        e.metadata.get().and_then(|m| m.revision.get()) == Some(applied)
                            && e.reconciled()
                    })
                });
                Rollout {
                    digest,
                    proven,
                    pace: Pace::of(kind, object),
                    attempted: shared(object.status_text(|s| &s.last_attempted_revision)),
                    origin: shared(object.status_text(|s| &s.last_applied_origin_revision)),
                    since,
                    previous: shared(previous),
                    applied,
                    ..Rollout::default()
                }
            }
            FluxKind::HelmRelease => Rollout {
                proven: newest.is_some_and(|e| e.status.get().is_some_and(|s| s != "failed")),
                pace: Pace::of(kind, object),
                applied: shared(newest.and_then(|e| e.chart_version.get()))
                    .or_else(|| shared(object.status_text(|s| &s.last_applied_revision))),
                previous: shared(previous_chart(object.history())),
                attempted: shared(object.status_text(|s| &s.last_attempted_revision)),
                since: time(newest.and_then(|e| e.first_deployed.get())),
                helm: HelmRollout {
                    tried_values: shared(object.status_text(|s| &s.last_attempted_config_digest)),
                    released_values: shared(
                        object
                            .history()
                            .iter()
                            .find(|e| e.status.get() != Some("failed"))
                            .and_then(|e| e.config_digest.get()),
                    ),
                    chart: shared(newest.and_then(|e| e.chart_name.get())).or_else(|| {
                        let spec = object.spec()?.chart.get()?.spec.get()?;
                        shared(spec.chart.get())
                    }),
                    config_digest: shared(newest.and_then(|e| e.config_digest.get())).or_else(
                        || shared(object.status_text(|s| &s.last_attempted_config_digest)),
                    ),
                    drifted: object
                        .condition("Drifted")
                        .filter(|c| c.status.get() == Some("True"))
                        .and_then(|c| {
                            super::bounds::shared(
                                Some(c.message.get().unwrap_or("drifted")),
                                limits::MESSAGE,
                            )
                        }),
                }
                .boxed(),
                ..Rollout::default()
            },
            // A source's artifact: what its consumers should apply, produced when.
            k if k.has_artifact() => {
                let artifact = object.status().and_then(|s| s.artifact.get());
                Rollout {
                    applied: shared(artifact.and_then(|a| a.revision.get())),
                    since: time(artifact.and_then(|a| a.last_update_time.get())),
                    ..Rollout::default()
                }
            }
            _ => return None,
        };
        (rollout != Rollout::default()).then_some(rollout)
    }

    /// The kinds whose revisions the rollout view follows.
    pub fn followed(kind: FluxKind) -> bool {
        matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease) || kind.has_artifact()
    }

    /// What only a HelmRelease says (nothing, for any other kind).
    pub fn helm(&self) -> &HelmRollout {
        self.helm.as_deref().unwrap_or(&NO_HELM)
    }

    /// Its revisions, digests and chart name: the texts the copies of an object across a fleet
    /// repeat, for the index to share.
    pub fn repeated_mut(&mut self) -> impl Iterator<Item = &mut SharedText> {
        let helm = self
            .helm
            .as_deref_mut()
            .map(|h| [&mut h.chart, &mut h.config_digest]);
        [
            &mut self.applied,
            &mut self.attempted,
            &mut self.origin,
            &mut self.previous,
            &mut self.digest,
        ]
        .into_iter()
        .chain(helm.into_iter().flatten())
        .flatten()
    }

    /// HelmRelease: the values it tried are not those it last released: its values changed
    /// (inline or `valuesFrom`).
    pub fn new_values(&self) -> bool {
        let helm = self.helm();
        matches!((&helm.tried_values, &helm.released_values), (Some(t), Some(r)) if t != r)
    }

    /// Keeps what `old` (the previous summary of the same object) knew and this one's status
    /// no longer says: the values last released.
    pub fn carry(&mut self, old: &Rollout) {
        if self.helm().released_values.is_none()
            && let Some(released) = &old.helm().released_values
        {
            let helm = self.helm.get_or_insert_default();
            helm.released_values = Some(released.clone());
        }
    }

    /// Tried something other than what runs: a new revision that has not been applied (yet).
    pub fn behind_attempt(&self) -> bool {
        matches!((&self.applied, &self.attempted), (Some(a), Some(t)) if a != t)
    }
}

/// When a Kustomization's applied revision was first reconciled, and the revision before it.
/// `status.history` is newest first, one entry per digest of the applied manifests and outcome
/// (kustomize-controller v1.9: the entry's `metadata.revision` is the newest that applied that
/// digest), so one revision may have several entries in a row: the oldest of the run that starts
/// at the newest entry for `applied` is when it was first reconciled — or when the same
/// manifests were, under an older revision (the rollout view also asks the source), and the
/// entry after the run is what ran before.
fn history_of<'a>(
    history: &'a [Deployment],
    applied: Option<&str>,
) -> (Option<Timestamp>, Option<&'a str>) {
    fn revision<'a>(e: &'a Deployment) -> Option<&'a str> {
        e.metadata.get()?.revision.get()
    }
    let Some(applied) = applied else {
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
        .first_reconciled
        .get()
        .and_then(|t| t.parse().ok());
    (since, history.get(start + run).and_then(revision))
}

/// The chart version a HelmRelease ran before its current one (`status.history`, newest first).
fn previous_chart<'a>(history: &'a [Deployment]) -> Option<&'a str> {
    let current = history.first()?.chart_version.get()?;
    history[1..]
        .iter()
        .filter_map(|e| e.chart_version.get())
        .find(|v| *v != current)
}

/// What a revision applies, whatever ref it came by: the digest after its `@`
/// (`ring-dev@sha1:659d8880…` and `main@sha1:659d8880…` are one commit, a fleet that promotes
/// by a branch or tag per ring runs it under each ring's name), else the whole revision (a chart
/// version).
pub fn content_of(revision: &str) -> &str {
    match revision.rsplit_once('@') {
        Some((_, digest)) if digest.contains(':') => digest,
        _ => revision,
    }
}

/// Whether two revisions apply the same thing ([`content_of`]).
pub fn same_content(a: &str, b: &str) -> bool {
    content_of(a) == content_of(b)
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

#[cfg(test)]
mod tests;
mod wire;
