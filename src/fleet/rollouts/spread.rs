//! What a rollout is seen as: a revision's spread over a thing's copies, each cluster's place in
//! it (its standing, stuck or not, by the rules), the rings and the matrix — what the views,
//! the halt and the odd-one-out study share.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::super::deployed::{content_of, same_content};
use super::super::{ClusterId, ObjectKey, SharedText};

/// What makes a cluster stuck, and for how long it may be so.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StuckRules {
    /// Tried ≠ applied, or a source ahead of what was applied, for longer than this.
    pub stuck_after: SignedDuration,
    /// More newer revisions than this seen in the scope.
    pub max_behind: usize,
    /// A change a copy came by this long before it failed is the suspect of its failure.
    pub suspect_window: SignedDuration,
}

impl Default for StuckRules {
    fn default() -> StuckRules {
        StuckRules {
            stuck_after: SignedDuration::from_mins(30),
            max_behind: 2,
            suspect_window: SignedDuration::from_mins(10),
        }
    }
}

/// A revision as compared across clusters: what was applied and, for a HelmRelease, the digest
/// of the values it was deployed with (new values on the same chart are a new rollout). Two are
/// equal when they apply the same content (`deployed::content_of`): one commit reached by each
/// ring's branch is one revision, shown by the name it was first seen by.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Revision {
    pub revision: SharedText,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_digest: Option<SharedText>,
}

impl PartialEq for Revision {
    fn eq(&self, other: &Revision) -> bool {
        same_content(&self.revision, &other.revision) && self.config_digest == other.config_digest
    }
}

impl Eq for Revision {}

impl std::hash::Hash for Revision {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        content_of(&self.revision).hash(state);
        self.config_digest.hash(state);
    }
}

/// A revision as a table shows it, `-` for none.
pub fn shown(revision: Option<&Revision>) -> String {
    revision.map_or("-".into(), Revision::short)
}

impl Revision {
    /// As a table shows it: hex digests cut to 8 characters, the values digest's first 8 hex
    /// characters in brackets (`6.9.0 (f5495710)`).
    pub fn short(&self) -> String {
        let revision = crate::units::truncate_hex(&self.revision);
        match &self.config_digest {
            Some(d) => {
                let hex = d.rsplit_once(':').map_or(&**d, |(_, h)| h);
                let hex: String = hex.chars().take(8).collect();
                format!("{revision} ({hex})")
            }
            None => revision,
        }
    }
}

/// Where one cluster's copy stands against the newest revision: the spread bar's parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Standing {
    /// Failing on the newest revision: tried it (or runs it) and is not ready.
    Failing,
    /// Runs an older revision (or none yet).
    Behind,
    /// Suspended: held where it is on purpose.
    Suspended,
    /// Runs the newest revision.
    Current,
}

impl Standing {
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Current => "current",
            Standing::Behind => "behind",
            Standing::Failing => "failing",
            Standing::Suspended => "suspended",
        }
    }
}

/// Why a cluster is stuck.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "rule")]
pub enum Stuck {
    /// Tried a revision and did not apply it, for longer than `stuck_after`.
    Attempt {
        attempted: SharedText,
        since: Timestamp,
    },
    /// Its source has had a newer artifact for longer than `stuck_after`.
    Source {
        source: ObjectKey,
        revision: SharedText,
        since: Timestamp,
    },
    /// More than `max_behind` newer revisions are running elsewhere in the scope.
    Behind { by: usize },
}

impl Stuck {
    /// The reason, as a row shows it.
    pub fn reason(&self, now: Timestamp) -> String {
        let short = |r: &str| crate::units::truncate_hex(r);
        match self {
            Stuck::Attempt { attempted, since } => format!(
                "tried {} for {}, not applied",
                short(attempted),
                crate::units::age(Some(*since), now)
            ),
            Stuck::Source {
                source,
                revision,
                since,
            } => format!(
                "{} {}/{} has {} for {}, not applied",
                source.kind,
                source.namespace,
                source.name,
                short(revision),
                crate::units::age(Some(*since), now)
            ),
            Stuck::Behind { by } => format!("{by} revisions behind"),
        }
    }
}

/// Clusters by standing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StandingCounts {
    pub current: u32,
    pub behind: u32,
    pub failing: u32,
    pub suspended: u32,
}

impl StandingCounts {
    pub(super) fn add(&mut self, standing: Standing) {
        *match standing {
            Standing::Current => &mut self.current,
            Standing::Behind => &mut self.behind,
            Standing::Failing => &mut self.failing,
            Standing::Suspended => &mut self.suspended,
        } += 1;
    }

    pub fn total(&self) -> u32 {
        self.current + self.behind + self.failing + self.suspended
    }
}

/// One deployed thing across the clusters of a scope: a row of the rollout view.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spread {
    #[serde(flatten)]
    pub key: ObjectKey,
    /// The newest revision seen; None when no cluster has applied or tried one.
    pub newest: Option<Revision>,
    /// When the newest revision first ran on one of these clusters.
    pub newest_since: Option<Timestamp>,
    /// Clusters by standing (the spread bar).
    pub clusters: StandingCounts,
    /// Clusters not running the newest revision, suspended ones included.
    pub behind: u32,
    /// Clusters stuck by one of the rules.
    pub stuck: u32,
    /// Distinct revisions running.
    pub revisions: u32,
}

impl Spread {
    /// Clusters running the newest revision (failing or suspended there included).
    pub fn on_newest(&self) -> u32 {
        self.clusters.total() - self.behind
    }
}

/// One cluster's copy of a deployed thing: a row of the matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    #[serde(skip)]
    pub cluster: ClusterId,
    /// Its ring's position in [`Matrix::rings`].
    #[serde(skip)]
    pub ring: usize,
    /// What it runs; None when it never applied anything.
    pub revision: Option<Revision>,
    /// `lastAttemptedRevision`, when it differs from what runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempted: Option<SharedText>,
    /// Since when it runs that revision, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    pub standing: Standing,
    /// How many newer revisions run elsewhere in the scope.
    pub behind_by: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stuck: Option<Stuck>,
    /// Runs the same revision as its ring's other copies, but not the same way: drift.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub odd: Option<Odd>,
}

impl Place {
    /// `current`, `behind 2`, `failing`, `stuck` …: its standing in a word or two.
    pub fn state(&self) -> String {
        match (self.stuck.is_some(), self.standing) {
            (true, _) => "stuck".into(),
            (false, Standing::Behind) if self.behind_by > 0 => {
                format!("behind {}", self.behind_by)
            }
            (false, standing) => standing.as_str().into(),
        }
    }

    /// Why it is stuck, else what it tried and did not apply, else how it differs from its
    /// peers; empty when none.
    pub fn reason(&self, now: Timestamp) -> String {
        match (&self.stuck, &self.attempted, &self.odd) {
            (Some(s), ..) => s.reason(now),
            (None, Some(a), _) => format!("tried {}", crate::units::truncate_hex(a)),
            (None, None, Some(odd)) => odd.describe(),
            (None, None, None) => String::new(),
        }
    }
}

/// One ring of a matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ring {
    pub name: String,
    pub clusters: u32,
    /// Clusters running the newest revision (failing or suspended there included).
    pub on_newest: u32,
    pub stuck: u32,
    /// When the newest revision reached the ring's first cluster, and its last one so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<Timestamp>,
}

impl Ring {
    /// Share of the ring's clusters on the newest revision, 0 to 1.
    pub fn share(&self) -> f64 {
        f64::from(self.on_newest) / f64::from(self.clusters.max(1))
    }

    /// First cluster to last on the newest revision: done when every cluster is on it, else
    /// the time so far.
    pub fn took(&self, now: Timestamp) -> Option<SignedDuration> {
        let first = self.first?;
        let end = if self.on_newest == self.clusters {
            self.last?
        } else {
            now
        };
        Some(end.duration_since(first).max(SignedDuration::ZERO))
    }

    /// [`Ring::took`] as a table shows it: `2h`, `35m…` while not every cluster is on the
    /// newest revision, `-` when none is.
    pub fn took_text(&self, now: Timestamp) -> String {
        let Some(d) = self.took(now) else {
            return "-".into();
        };
        let shown = crate::units::age(Some(now.checked_sub(d).unwrap_or(now)), now);
        if self.on_newest == self.clusters {
            shown
        } else {
            format!("{shown}…")
        }
    }
}

/// Every cluster's copy of one deployed thing, ring by ring: behind and stuck first in each.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Matrix {
    pub spread: Spread,
    pub rings: Vec<Ring>,
    pub places: Vec<Place>,
}

/// How a copy differs from its peers: the copies of its ring on the same revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "what")]
pub enum Odd {
    /// A HelmRelease deployed with other values (its release's config digest).
    Values {
        mine: SharedText,
        peers: SharedText,
        of: usize,
    },
    /// A Kustomization that applied another number of objects.
    Inventory { mine: u32, peers: u32, of: usize },
}

impl Odd {
    pub fn describe(&self) -> String {
        match self {
            Odd::Values { mine, peers, of } => format!(
                "odd one out: values {} where {of} peers have {}",
                crate::units::truncate_hex(mine),
                crate::units::truncate_hex(peers)
            ),
            Odd::Inventory { mine, peers, of } => {
                format!("odd one out: {mine} objects applied where {of} peers have {peers}")
            }
        }
    }
}
