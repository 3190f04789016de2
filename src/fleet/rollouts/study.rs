//! How one deployed thing stands: which of its revisions is the newest, and where each copy
//! stands against it — current, behind, failing on the newest, suspended, and stuck by which rule.

use std::cmp::Ordering;

use jiff::Timestamp;

use super::spread::{Place, Revision, Spread, Standing, StandingCounts, Stuck, StuckRules};
use crate::fleet::deployed::{release_order, same_content};
use crate::fleet::{
    ClusterEntry, ClusterId, FluxKind, FluxSummary, ObjectKey, ObjectRef, Rollout, SharedText,
};

/// One cluster's copy of a thing.
pub(super) struct Instance<'a> {
    pub(super) cluster: ClusterId,
    pub(super) entry: &'a ClusterEntry,
    pub(super) object: &'a FluxSummary,
}

impl<'a> Instance<'a> {
    fn rollout(&self) -> Option<&Rollout> {
        self.object.rollout.as_deref()
    }

    fn applied(&self) -> Option<Revision> {
        let r = self.rollout()?;
        Some(Revision {
            revision: r.applied.clone()?,
            config_digest: r.helm().config_digest.clone(),
        })
    }

    /// What it tried, when that is not what it runs.
    fn attempted(&self) -> Option<&SharedText> {
        let r = self.rollout()?;
        r.attempted.as_ref().filter(|_| r.behind_attempt())
    }

    /// The source whose artifact it applies, on the same cluster (see [`SourceKeys`]).
    fn source(&self, keys: &mut SourceKeys<'a>) -> Option<(&'a ObjectKey, &'a FluxSummary)> {
        let key = keys.of(&self.object.key, self.object.source.as_ref()?)?;
        self.entry.objects.get_key_value(&key)
    }

    /// The source's artifact as this kind applies it: a HelmRelease runs a chart version, which
    /// an OCI artifact's revision carries before its `@`.
    fn source_artifact(
        &self,
        keys: &mut SourceKeys<'a>,
    ) -> Option<(&'a ObjectKey, &'a SharedText, Option<Timestamp>)> {
        let (key, source) = self.source(keys)?;
        let r = source.rollout.as_deref()?;
        Some((key, r.applied.as_ref()?, r.since))
    }

    fn same_as_source(&self, applied: &str, source: &str) -> bool {
        match self.object.key.kind {
            FluxKind::HelmRelease => source.split('@').next() == Some(applied),
            _ => source == applied,
        }
    }

    /// Since when it runs what it runs: its own record, else (a Kustomization before Flux
    /// 2.7) the time its source produced the artifact it applied.
    fn since(&self, keys: &mut SourceKeys<'a>) -> Option<Timestamp> {
        let r = self.rollout()?;
        // The source's artifact, while it still holds what this copy runs: the revision cannot
        // have arrived before its source had it. A Kustomization's `status.history` keeps one
        // entry per digest of what it applied (Flux 2.7), the newest revision written over the
        // older: a commit that changes none of its manifests is in an entry first reconciled
        // with an older commit — the later of the two is when this revision arrived.
        let from_source = r.applied.as_deref().and_then(|applied| {
            let (_, revision, since) = self.source_artifact(keys)?;
            self.same_as_source(applied, revision).then_some(since?)
        });
        match (r.since, from_source) {
            (Some(recorded), Some(source)) => Some(recorded.max(source)),
            (recorded, source) => recorded.or(source),
        }
    }
}

/// The key of the source each copy of a thing applies: a Kustomization's `sourceRef`, a
/// HelmRelease's chart (the HelmChart Flux names `<namespace>-<name>` in its HelmRepository's
/// namespace, or its `chartRef`). Copies of one thing nearly always name the same source: each
/// distinct reference is turned into a key once.
#[derive(Default)]
struct SourceKeys<'a> {
    known: Vec<(&'a ObjectRef, Option<ObjectKey>)>,
}

impl<'a> SourceKeys<'a> {
    fn of(&mut self, thing: &ObjectKey, r: &'a ObjectRef) -> Option<ObjectKey> {
        if let Some((_, key)) = self.known.iter().find(|(k, _)| *k == r) {
            return key.clone();
        }
        let key = crate::fleet::graph::source_key(thing, r).filter(|k| k.kind.has_artifact());
        self.known.push((r, key.clone()));
        key
    }
}

/// What one revision is known by, while the newest is being found.
struct Seen {
    revision: Revision,
    /// The earliest time a cluster ran it, and (if none ran it) tried it.
    ran: Option<Timestamp>,
    tried: Option<Timestamp>,
    running: u32,
    trying: u32,
    /// A cluster ran it and tried another: that one is newer.
    left: bool,
}

impl Seen {
    /// The revision found at `at`, else a new one made by `revision`.
    fn slot(
        seen: &mut Vec<Seen>,
        at: Option<usize>,
        revision: impl FnOnce() -> Revision,
    ) -> &mut Seen {
        let i = at.unwrap_or_else(|| {
            seen.push(Seen {
                revision: revision(),
                ran: None,
                tried: None,
                running: 0,
                trying: 0,
                left: false,
            });
            seen.len() - 1
        });
        &mut seen[i]
    }

    fn arrived(&self) -> Option<Timestamp> {
        self.ran.or(self.tried)
    }

    /// Newest first: one that clusters moved on from is older; then the one that arrived
    /// last.
    fn order(a: &Seen, b: &Seen) -> Ordering {
        a.left
            .cmp(&b.left)
            .then(b.arrived().cmp(&a.arrived()))
            .then(release_order(&b.revision.revision, &a.revision.revision))
            .then(b.trying.cmp(&a.trying))
            .then(b.running.cmp(&a.running))
            .then(a.revision.revision.cmp(&b.revision.revision))
    }
}

/// The spread of one thing and, when `places`, where each copy stands.
pub(super) fn study<'a>(
    key: &ObjectKey,
    copies: &[Instance<'a>],
    rules: &StuckRules,
    now: Timestamp,
    places: bool,
) -> (Spread, Vec<Place>) {
    let mut keys = SourceKeys::default();
    let since: Vec<Option<Timestamp>> = copies.iter().map(|c| c.since(&mut keys)).collect();
    let seen = revisions_seen(copies, &since);
    let newest = seen.first();
    let mut spread = Spread {
        key: key.clone(),
        newest: newest.map(|s| s.revision.clone()),
        newest_since: newest.and_then(Seen::arrived),
        clusters: StandingCounts::default(),
        behind: 0,
        stuck: 0,
        revisions: seen.iter().filter(|s| s.running > 0).count() as u32,
    };
    let newest_text = newest.map(|s| &*s.revision.revision);
    let mut out = Vec::with_capacity(if places { copies.len() } else { 0 });
    for (c, since) in copies.iter().zip(since) {
        let applied = c.applied();
        let attempted = c.attempted();
        let on_newest = applied.is_some() && applied.as_ref() == spread.newest.as_ref();
        let tries_newest =
            attempted.is_some_and(|a| newest_text.is_some_and(|n| same_content(a, n)));
        let behind_by = match &applied {
            Some(a) => seen.iter().position(|s| &s.revision == a).unwrap_or(0),
            None => seen.len(),
        };
        let standing = if c.object.suspended {
            Standing::Suspended
        } else if c.object.health.is_failing() && (on_newest || tries_newest) {
            Standing::Failing
        } else if on_newest {
            Standing::Current
        } else {
            Standing::Behind
        };
        let stuck = if c.object.suspended {
            None
        } else {
            let copy = Standpoint {
                applied: applied.as_ref(),
                on_newest,
                behind_by,
            };
            stuck(c, copy, &mut keys, rules, now)
        };
        spread.clusters.add(standing);
        spread.behind += u32::from(!on_newest);
        spread.stuck += u32::from(stuck.is_some());
        if !places {
            continue;
        }
        out.push(Place {
            cluster: c.cluster,
            ring: 0,
            since,
            revision: applied,
            attempted: attempted.cloned(),
            standing,
            behind_by,
            stuck,
            odd: None,
        });
    }
    (spread, out)
}

/// Every revision the copies run or try, newest first: how many run it and since when, how
/// many try it, and whether it has been left anywhere.
fn revisions_seen(copies: &[Instance<'_>], since: &[Option<Timestamp>]) -> Vec<Seen> {
    let mut seen: Vec<Seen> = Vec::new();
    let find = |seen: &[Seen], text: &str| {
        seen.iter()
            .position(|s| same_content(&s.revision.revision, text))
    };
    for (c, since) in copies.iter().zip(since) {
        let Some(applied) = c.applied() else { continue };
        let at = seen.iter().position(|s| s.revision == applied);
        let s = Seen::slot(&mut seen, at, || applied);
        s.running += 1;
        if let Some(since) = *since {
            s.ran = Some(s.ran.map_or(since, |t| t.min(since)));
        }
        s.left |= c.attempted().is_some();
    }
    // What ran before on some cluster is older wherever it runs.
    for c in copies {
        let previous = c.rollout().and_then(|r| r.previous.as_deref());
        if let Some(p) = previous
            && let Some(i) = find(&seen, p)
        {
            seen[i].left = true;
        }
    }
    for c in copies {
        let Some(attempted) = c.attempted() else {
            continue;
        };
        let at = find(&seen, attempted);
        let s = Seen::slot(&mut seen, at, || Revision {
            revision: attempted.clone(),
            config_digest: None,
        });
        s.trying += 1;
        if let Some(t) = c.object.since {
            s.tried = Some(s.tried.map_or(t, |x| x.min(t)));
        }
    }
    seen.sort_by(Seen::order);
    seen
}

/// Where a copy stands against the newest revision, as the stuck rules read it.
#[derive(Clone, Copy)]
struct Standpoint<'r> {
    applied: Option<&'r Revision>,
    on_newest: bool,
    behind_by: usize,
}

/// The first rule a copy breaks, if any.
fn stuck<'a>(
    c: &Instance<'a>,
    at: Standpoint,
    keys: &mut SourceKeys<'a>,
    rules: &StuckRules,
    now: Timestamp,
) -> Option<Stuck> {
    let Standpoint {
        applied,
        on_newest,
        behind_by,
    } = at;
    let too_long = |since: Timestamp| now.duration_since(since) > rules.stuck_after;
    // Trying this revision since it failed, and not before its source produced it (a copy
    // already failing on an older revision has tried this one only since it arrived).
    if let Some(attempted) = c.attempted()
        && let Some(failing) = c.object.since
    {
        let since = match c.source_artifact(keys) {
            Some((_, produced, Some(at))) if c.same_as_source(attempted, produced) => {
                failing.max(at)
            }
            _ => failing,
        };
        if too_long(since) {
            return Some(Stuck::Attempt {
                attempted: attempted.clone(),
                since,
            });
        }
    }
    if on_newest {
        return None;
    }
    if let Some((key, revision, Some(since))) = c.source_artifact(keys)
        && !applied.is_some_and(|a| c.same_as_source(&a.revision, revision))
        && too_long(since)
    {
        return Some(Stuck::Source {
            source: key.clone(),
            revision: revision.clone(),
            since,
        });
    }
    (behind_by > rules.max_behind).then_some(Stuck::Behind { by: behind_by })
}
