//! Why it broke: the change before each failure — a change of the object's own spec (a new
//! generation), of its values (a HelmRelease's), or of the revision it runs: the revision it
//! tried and did not apply, else the one it applied shortly before failing and never ran
//! without failing, else the artifact its source produced shortly before. None where nothing
//! changed: a failure that began while a controller was away, or on a revision it already ran
//! fine. For a root cause failing the same way on many clusters, the change most of its copies
//! share, with the evidence for and against it.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::deployed::{Rollout, same_content};
use super::graph::{Cause, source_key};
use super::{ClusterEntry, FluxKind, FluxSummary, Health, SharedText};

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
    /// Its own spec changed (`metadata.generation`) and it has not run the new one.
    Spec,
    /// A HelmRelease's values changed (inline or `valuesFrom`) and it has not released them.
    Values,
}

impl How {
    /// Whether the change is a revision of its source (else of the object itself).
    pub fn is_revision(self) -> bool {
        matches!(self, How::Tried | How::Applied | How::Source)
    }
}

/// The change before one copy's failure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangeBefore {
    /// The revision; for a change of its own, what changed: `generation 2`, `values`.
    pub revision: SharedText,
    pub how: How,
    /// When the copy came by it: its source produced it, or it first ran it (where known).
    pub at: Option<Timestamp>,
    /// It came by the change within the window before it turned not ready (a change of its
    /// own has no time the status records: it came before the failure, whenever that was).
    pub just_before: bool,
}

impl ChangeBefore {
    /// The change as a person reads it: "its spec changed (generation 2)", "its values
    /// changed", or the revision shortened.
    pub fn said(&self) -> String {
        said(self.how, &self.revision)
    }
}

fn said(how: How, revision: &str) -> String {
    match how {
        How::Spec if revision == "generation 1" => "its spec as created (generation 1)".into(),
        How::Spec => format!("its spec changed ({revision})"),
        How::Values => "its values changed".to_string(),
        _ => crate::units::truncate_hex(revision),
    }
}

/// The change before `o` (on `cluster`) turned not ready; None when nothing changed that it
/// records, or it never applied a revision to change from.
pub fn change_before(
    cluster: &ClusterEntry,
    o: &FluxSummary,
    window: SignedDuration,
) -> Option<ChangeBefore> {
    // Only a failure has a change before it: what waits, progresses or is suspended has none.
    if !o.health.is_failing() {
        return None;
    }
    // What something else holds back, or what waits only for its retry, changed nothing: its
    // cause is upstream.
    if matches!(
        cluster.graph.cause(&o.key),
        Some(Cause::Blocked(_) | Cause::AwaitsRetry)
    ) {
        return None;
    }
    let failed = o.since;
    let just_before = |at: Option<Timestamp>| match (at, failed) {
        (Some(at), Some(failed)) => at <= failed && failed.duration_since(at) <= window,
        _ => false,
    };
    // Its source, as the graph already knows it (no key made for it), else from its reference.
    let known = cluster
        .graph
        .upstream(&o.key)
        .iter()
        .find(|k| k.kind.has_artifact())
        .and_then(|k| cluster.objects.get(k));
    let source = known
        .or_else(|| {
            let key = source_key(&o.key, o.source.as_ref()?)?;
            cluster.objects.get(&key)
        })
        .and_then(|s| s.rollout.as_deref())
        .and_then(|r| Some((r.applied.clone()?, r.since)));
    // A source's revision is what it produces, not a change it came by: only its own spec is.
    let rollout = o.rollout.as_deref().filter(|_| !o.key.kind.has_artifact());
    if let Some(r) = rollout
        && r.behind_attempt()
        && let Some(tried) = &r.attempted
    {
        let at = source
            .as_ref()
            .filter(|(produced, _)| same(o.key.kind, tried, produced))
            .and_then(|(_, at)| *at);
        return Some(ChangeBefore {
            revision: tried.clone(),
            how: How::Tried,
            at,
            just_before: just_before(at),
        });
    }
    // A change of its own it has not run: values a release tried and did not release; a
    // generation the controller has not reconciled without failing (status.observedGeneration
    // moves only when a run succeeds or stalls: -1 or none for an object that never ran
    // without failing, whose spec as created is the change); a spec the controller stalled on
    // (Stalled: it will not retry until the spec changes).
    let mine = |how, revision: String| ChangeBefore {
        revision: revision.into(),
        how,
        at: None,
        just_before: true,
    };
    if rollout.is_some_and(Rollout::new_values) {
        return Some(mine(How::Values, "values".to_string()));
    }
    if o.observed_generation.unwrap_or(0) < o.generation || o.health == Health::Stalled {
        return Some(mine(How::Spec, format!("generation {}", o.generation)));
    }
    // A copy that never applied a revision has not changed from anything: failing since it was
    // first reconciled, whatever its source produced meanwhile (kustomize-controller records no
    // run for a build that failed), so no revision is its change.
    let applied = rollout.and_then(|r| r.applied.clone())?;
    if let Some(r) = rollout
        && !r.proven
        && just_before(r.since)
    {
        return Some(ChangeBefore {
            revision: applied,
            how: How::Applied,
            at: r.since,
            just_before: true,
        });
    }
    // Its source's artifact, where it is another than what the copy runs: an artifact stored
    // again with the same revision (source-controller restarted) changed nothing.
    let (produced, at) = source.filter(|(produced, _)| {
        !(same(o.key.kind, &applied, produced) || same_content(produced, &applied))
    })?;
    just_before(at).then_some(ChangeBefore {
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
    /// The revision; for a change of the object's own, what changed (see [`ChangeBefore`]).
    pub revision: SharedText,
    /// How the copies came by it: a revision (tried, applied, its source's), or their own spec
    /// or values.
    pub how: How,
    /// Failing copies whose change before failing is this revision…
    pub copies: usize,
    /// …and of those, the ones that came by it within the window before failing.
    pub just_before: usize,
    /// Failing copies of the root cause, in all.
    pub failing: usize,
    /// Failing copies that neither run nor tried this revision: failing this way without it.
    pub elsewhere_failing: usize,
    /// The window, in minutes.
    pub window_minutes: i64,
    /// Copies of the object in the scope that run this revision and do not fail this way, and
    /// copies on another revision (counted by [`Suspect::weigh`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_fine: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elsewhere: Option<usize>,
    /// Whether this change is the likely cause: copies came by it just before failing, and no
    /// copy without it fails this way.
    pub likely: bool,
    /// The evidence in a sentence.
    pub evidence: String,
}

impl Suspect {
    /// Counts the copies of the object in the scope (`all`) that run the revision fine, and
    /// those on another revision; the evidence says so from then on.
    pub fn weigh<'a>(mut self, all: impl IntoIterator<Item = &'a FluxSummary>) -> Suspect {
        // A change of the copies' own is no revision other copies run.
        if !self.how.is_revision() {
            return self;
        }
        let (mut runs_fine, mut elsewhere) = (0, 0);
        for o in all {
            let r = o.rollout.as_deref();
            let runs = r.and_then(|r| r.applied.as_deref()) == Some(&*self.revision);
            let tries = r.and_then(|r| r.attempted.as_deref()) == Some(&*self.revision);
            if runs && !o.health.is_failing() {
                runs_fine += 1;
            } else if !runs && !tries {
                elsewhere += 1;
            }
        }
        self.runs_fine = Some(runs_fine);
        self.elsewhere = Some(elsewhere);
        self.evidence = self.explain();
        self
    }

    /// The change as a person reads it ([`ChangeBefore::said`]).
    pub fn said(&self) -> String {
        said(self.how, &self.revision)
    }

    /// The change in a column: the revision shortened, `spec (gen 2)`, `values`.
    pub fn short(&self) -> String {
        match self.how {
            How::Spec => format!(
                "spec (gen {})",
                self.revision.trim_start_matches("generation ")
            ),
            How::Values => "values".to_string(),
            _ => crate::units::truncate_hex(&self.revision),
        }
    }

    /// The evidence in a sentence.
    fn explain(&self) -> String {
        let revision = said(self.how, &self.revision);
        if !self.likely {
            return format!(
                "nothing changed in the {} minutes before it failed (the last change: {revision}): \
                 the cause is outside the GitOps change — infrastructure, credentials, an \
                 upstream registry",
                self.window_minutes
            );
        }
        let mut text = match self.how.is_revision() {
            true => format!(
                "began after {revision} — {} of {} failing copies took it in the {} minutes \
                 before failing",
                self.just_before, self.failing, self.window_minutes
            ),
            false => format!(
                "began after {revision} — {} of {} failing copies have not run it without failing",
                self.copies, self.failing
            ),
        };
        if let (Some(fine), Some(elsewhere)) = (self.runs_fine, self.elsewhere) {
            text.push_str(&format!(
                "; 0 of {elsewhere} copies on another revision fail this way; {fine} run it \
                 without failing"
            ));
        }
        text
    }
}

/// What one failing copy says about its change: the change before it failed, and the revision
/// it runs and the one it tried. Worked out once per copy (triage keeps it with the cluster's
/// part until the cluster changes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FailingCopy {
    pub change: Option<ChangeBefore>,
    pub runs: Option<SharedText>,
    pub tried: Option<SharedText>,
}

impl FailingCopy {
    pub fn of(cluster: &ClusterEntry, o: &FluxSummary, window: SignedDuration) -> FailingCopy {
        let r = o.rollout.as_deref();
        FailingCopy {
            change: change_before(cluster, o, window),
            runs: r.and_then(|r| r.applied.clone()),
            tried: r.and_then(|r| r.attempted.clone()),
        }
    }
}

/// The failing copies of a root cause, counted revision by revision as they are met.
#[derive(Clone, Debug, Default)]
pub struct RevisionTally {
    /// Per revision (or change of the copies' own): how they came by it, copies whose change it
    /// is, of those just before failing, and copies that run or tried it.
    revisions: Vec<(SharedText, How, usize, usize, usize)>,
    failing: usize,
}

impl RevisionTally {
    pub fn add(&mut self, copy: &FailingCopy) {
        self.failing += 1;
        if let Some(change) = &copy.change {
            let slot = self.slot(&change.revision, change.how);
            slot.2 += 1;
            slot.3 += usize::from(change.just_before);
            // A change of its own is one it made: it "tried" it.
            if !change.how.is_revision() {
                slot.4 += 1;
            }
        }
        let tried = copy
            .tried
            .as_ref()
            .filter(|t| Some(*t) != copy.runs.as_ref());
        for revision in [copy.runs.as_ref(), tried].into_iter().flatten() {
            self.slot(revision, How::Tried).4 += 1;
        }
    }

    /// The slot of `revision`; a new one says it came `how` (a revision's slot made by the
    /// copies that run it takes how the first copy that changed to it came by it).
    fn slot(
        &mut self,
        revision: &SharedText,
        how: How,
    ) -> &mut (SharedText, How, usize, usize, usize) {
        let i = match self.revisions.iter().position(|(r, ..)| r == revision) {
            Some(i) => i,
            None => {
                self.revisions.push((revision.clone(), how, 0, 0, 0));
                self.revisions.len() - 1
            }
        };
        let slot = &mut self.revisions[i];
        if slot.2 == 0 {
            slot.1 = how;
        }
        slot
    }

    /// The revision most copies came by before failing (among equals, the one most took just
    /// before failing); None when no copy records a change.
    pub fn suspect(&self, window: SignedDuration) -> Option<Suspect> {
        let (revision, how, copies, just_before, touched) = self
            .revisions
            .iter()
            .filter(|(_, _, copies, ..)| *copies > 0)
            .max_by(|a, b| (a.2, a.3).cmp(&(b.2, b.3)).then_with(|| b.0.cmp(&a.0)))?;
        let elsewhere_failing = self.failing.saturating_sub(*touched);
        let mut found = Suspect {
            revision: revision.clone(),
            how: *how,
            copies: *copies,
            just_before: *just_before,
            failing: self.failing,
            elsewhere_failing,
            window_minutes: window.as_mins(),
            runs_fine: None,
            elsewhere: None,
            likely: *just_before > 0 && elsewhere_failing == 0,
            evidence: String::new(),
        };
        found.evidence = found.explain();
        Some(found)
    }
}

/// The change behind a root cause, from its failing copies (each with its cluster) alone; None
/// when none records a change before failing. [`Suspect::weigh`] adds what the other copies
/// of the object say.
pub fn suspect(
    failing: &[(&ClusterEntry, &FluxSummary)],
    window: SignedDuration,
) -> Option<Suspect> {
    let mut tally = RevisionTally::default();
    for (cluster, o) in failing {
        tally.add(&FailingCopy::of(cluster, o, window));
    }
    tally.suspect(window)
}

#[cfg(test)]
mod tests;
