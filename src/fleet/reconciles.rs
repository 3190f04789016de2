//! How reconciles behave across the fleet, per Kustomization and HelmRelease: the median and the
//! slowest of its copies' last runs, the copies far slower than the rest, the copies whose runs
//! go back and forth between success and failure, and the copies not run within twice their
//! interval — each named with its cluster.

use crate::fleet::SharedText;
use std::collections::HashMap;

use jiff::Timestamp;
use serde::Serialize;

use super::{FluxKind, FluxSummary};

/// A copy is slow when its last run took this many times the median of its object's copies…
const SLOW_TIMES: u32 = 3;
/// …and at least this much longer (a 3 s run beside a 1 s median is not a tail).
const SLOW_BY_MS: u32 = 10_000;
/// Fewer copies than this have no median worth comparing with.
const SLOW_AMONG: usize = 3;
/// The slowest copies named per object.
const SLOWEST: usize = 3;

/// One copy's last run and how long it took.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Took {
    pub cluster: SharedText,
    pub took_ms: u32,
}

/// One copy not run within twice its interval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overdue {
    pub cluster: SharedText,
    /// Seconds since its last run.
    pub since_s: i64,
    pub interval_s: u32,
}

/// How one object's copies reconcile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reconciles {
    pub kind: FluxKind,
    pub namespace: SharedText,
    pub name: SharedText,
    /// Copies in the scope.
    pub copies: usize,
    /// Copies whose last run succeeded and its length is recorded: what the median, the
    /// slowest and the slow are of (a failed run is told as a failure).
    pub timed: usize,
    /// The median of their last runs; None when none is recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<u32>,
    /// The slowest copies, slowest first (at most three).
    pub slowest: Vec<Took>,
    /// Copies whose last run took at least three times the median and ten seconds more,
    /// slowest first.
    pub slow: Vec<Took>,
    /// Copies whose runs go back and forth between success and failure, by cluster name.
    pub flapping: Vec<SharedText>,
    /// Copies (not suspended) whose last run is older than twice their interval, the longest
    /// overdue first.
    pub stuck: Vec<Overdue>,
}

impl Reconciles {
    /// Something to look at: a slow, flapping or stuck copy.
    pub fn is_odd(&self) -> bool {
        !(self.slow.is_empty() && self.flapping.is_empty() && self.stuck.is_empty())
    }

    fn odd(&self) -> usize {
        self.slow.len() + self.flapping.len() + self.stuck.len()
    }
}

/// The copies met so far, per object.
#[derive(Default)]
pub(super) struct Tally<'a> {
    objects: HashMap<(FluxKind, &'a str, &'a str), Copies<'a>>,
}

#[derive(Default)]
struct Copies<'a> {
    count: usize,
    took: Vec<(u32, &'a str)>,
    flapping: Vec<&'a str>,
    stuck: Vec<(i64, u32, &'a str)>,
}

impl<'a> Tally<'a> {
    /// One copy of a Kustomization or HelmRelease, on `cluster`; `waits`: held back by what it
    /// needs, so not overdue however long since it last ran.
    pub(super) fn add(
        &mut self,
        cluster: &'a str,
        (o, waits): (&'a FluxSummary, bool),
        now: Timestamp,
    ) {
        let copies = self
            .objects
            .entry((o.key.kind, &o.key.namespace, &o.key.name))
            .or_default();
        copies.count += 1;
        let Some(pace) = o.rollout.as_deref().map(|r| r.pace) else {
            return;
        };
        // How long a run takes when it works: a failed one is told as a failure.
        if let (Some(ms), false) = (pace.took_ms, pace.failed) {
            copies.took.push((ms, cluster));
        }
        if pace.flapping {
            copies.flapping.push(cluster);
        }
        if !o.suspended
            && !waits
            && let (Some(late), Some(every)) = (pace.overdue(now), pace.interval_s)
        {
            copies.stuck.push((late, every, cluster));
        }
    }

    /// Every object met, those with the most odd copies first, then by kind, namespace, name.
    pub(super) fn finish(self) -> Vec<Reconciles> {
        let mut all: Vec<Reconciles> = self
            .objects
            .into_iter()
            .map(|((kind, namespace, name), mut c)| {
                let named = |(ms, cluster): (u32, &str)| Took {
                    cluster: cluster.into(),
                    took_ms: ms,
                };
                c.took
                    .sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
                let median = median(&c.took);
                let slow = match median {
                    Some(m) if c.took.len() >= SLOW_AMONG => c
                        .took
                        .iter()
                        .take_while(|(ms, _)| {
                            *ms >= m.saturating_mul(SLOW_TIMES)
                                && *ms >= m.saturating_add(SLOW_BY_MS)
                        })
                        .map(|t| named(*t))
                        .collect(),
                    _ => Vec::new(),
                };
                c.flapping.sort_unstable();
                c.stuck
                    .sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(b.2)));
                Reconciles {
                    kind,
                    namespace: namespace.into(),
                    name: name.into(),
                    copies: c.count,
                    timed: c.took.len(),
                    median_ms: median,
                    slowest: c.took.iter().take(SLOWEST).map(|t| named(*t)).collect(),
                    slow,
                    flapping: c.flapping.into_iter().map(SharedText::from).collect(),
                    stuck: c
                        .stuck
                        .into_iter()
                        .map(|(since_s, interval_s, cluster)| Overdue {
                            cluster: cluster.into(),
                            since_s,
                            interval_s,
                        })
                        .collect(),
                }
            })
            .collect();
        all.sort_by(|a, b| {
            b.odd()
                .cmp(&a.odd())
                .then_with(|| (a.kind, &a.namespace, &a.name).cmp(&(b.kind, &b.namespace, &b.name)))
        });
        all
    }
}

/// The median of runs sorted slowest first (the lower middle of an even count).
fn median(sorted: &[(u32, &str)]) -> Option<u32> {
    (!sorted.is_empty()).then(|| sorted[sorted.len() / 2].0)
}
