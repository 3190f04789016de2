//! What a cell of the fleet map says of a cluster in the map's mode: how bad it is (health),
//! its copy of the rollout followed (rollout), how old its news is (freshness) — and the legend.

use std::collections::HashMap;

use crate::app::model::Model;
use crate::app::view::MapMode;
use crate::fleet::rollouts::{self, Place, Standing};
use crate::fleet::{ClusterEntry, ClusterId, Health, ObjectKey, Phase};

/// Every mark `mode` shows, for the map's legend.
pub fn legend(mode: MapMode) -> &'static [Mark] {
    match mode {
        MapMode::Health => &[
            Mark::Ready,
            Mark::Progressing,
            Mark::Failing(Degree::Few, Stall::No),
            Mark::Failing(Degree::Many, Stall::No),
            Mark::Failing(Degree::Most, Stall::No),
            Mark::Suspended,
            Mark::Unwatched(Phase::Unreachable),
            Mark::Connecting,
            Mark::Empty,
        ],
        MapMode::Rollout => &[
            Mark::Copy(Copy::Current),
            Mark::Copy(Copy::Behind),
            Mark::Copy(Copy::Failing),
            Mark::Copy(Copy::Stuck),
            Mark::Copy(Copy::Suspended),
            Mark::Copy(Copy::Absent),
        ],
        MapMode::Freshness => &[
            Mark::Age(Age::Now),
            Mark::Age(Age::Flapping),
            Mark::Age(Age::Minutes),
            Mark::Age(Age::Hour),
            Mark::Age(Age::Old),
            Mark::Age(Age::Never),
        ],
    }
}

/// How large a share of a cluster's objects fail: one broken object does not paint a cluster
/// like a dead one. Worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Degree {
    /// Half of its objects or more.
    Most,
    /// From a tenth to half.
    Many,
    /// Fewer than a tenth.
    Few,
}

impl Degree {
    pub fn of(failing: u32, total: u32) -> Degree {
        let share = f64::from(failing) / f64::from(total.max(1));
        if share >= 0.5 {
            Degree::Most
        } else if share >= 0.1 {
            Degree::Many
        } else {
            Degree::Few
        }
    }
}

/// Whether any failing object is stalled (terminal, waiting for a change), which the colour
/// says. Stalled first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stall {
    Yes,
    No,
}

/// A cluster's copy of the rollout followed. Worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Copy {
    /// Failing on the newest revision.
    Failing,
    /// Stuck by the rollout rules (tried and not applied, a source ahead, too far behind).
    Stuck,
    Behind,
    Suspended,
    Current,
    /// The cluster has no copy.
    Absent,
}

/// How long since a cluster's last event or report. Oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Age {
    /// Nothing heard from it yet.
    Never,
    /// An hour or more.
    Old,
    /// Ten minutes to an hour.
    Hour,
    /// A minute to ten.
    Minutes,
    /// Live, but its watches keep breaking (each resumed at once): its news is current.
    Flapping,
    /// Under a minute.
    Now,
}

impl Age {
    pub fn of(since: jiff::SignedDuration) -> Age {
        match since.as_secs() {
            ..60 => Age::Now,
            60..600 => Age::Minutes,
            600..3600 => Age::Hour,
            _ => Age::Old,
        }
    }
}

/// What a cell shows about a cluster in the map's mode, worst first within a mode. The glyph
/// says it without colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// Cannot be watched: nothing is known there.
    Unwatched(Phase),
    /// Some objects fail: what share, and whether one is stalled.
    Failing(Degree, Stall),
    /// Reconciling, waiting or being deleted.
    Progressing,
    /// Not ready only because of suspended objects.
    Suspended,
    Connecting,
    Ready,
    /// Watched, and no Flux object on it.
    Empty,
    /// Rollout mode: its copy of the thing followed.
    Copy(Copy),
    /// Freshness mode: how old its news is.
    Age(Age),
}

impl Mark {
    /// The health mark of a cluster.
    pub fn of(cluster: &ClusterEntry) -> Mark {
        let phase = cluster.connection.phase;
        if phase.is_failure() {
            return Mark::Unwatched(phase);
        }
        let h = &cluster.health;
        if h.failing() > 0 {
            let stall = if h.get(Health::Stalled) > 0 {
                Stall::Yes
            } else {
                Stall::No
            };
            Mark::Failing(Degree::of(h.failing(), h.total()), stall)
        } else if h.get(Health::Progressing) + h.get(Health::Waiting) + h.get(Health::Deleting) > 0
        {
            Mark::Progressing
        } else if h.get(Health::Suspended) > 0 {
            Mark::Suspended
        } else if phase.is_pending() {
            Mark::Connecting
        } else if h.total() == 0 {
            Mark::Empty
        } else {
            Mark::Ready
        }
    }

    pub fn glyph(self) -> char {
        match self {
            Mark::Unwatched(_) => '?',
            Mark::Failing(Degree::Few, _) => '░',
            Mark::Failing(Degree::Many, _) => '▒',
            Mark::Failing(Degree::Most, _) => '▓',
            Mark::Progressing => '◐',
            Mark::Suspended | Mark::Copy(Copy::Suspended) => '‖',
            Mark::Connecting | Mark::Copy(Copy::Absent) => '·',
            Mark::Ready | Mark::Copy(Copy::Current) => '■',
            Mark::Empty | Mark::Age(Age::Never) => '□',
            Mark::Copy(Copy::Failing) => '✗',
            Mark::Copy(Copy::Stuck) => '▲',
            Mark::Copy(Copy::Behind) => '○',
            Mark::Age(Age::Now) => '█',
            Mark::Age(Age::Minutes) => '▓',
            Mark::Age(Age::Hour) => '▒',
            Mark::Age(Age::Old) => '░',
            Mark::Age(Age::Flapping) => '↯',
        }
    }

    /// What the glyph means, for the map's legend.
    pub fn name(self) -> &'static str {
        match self {
            Mark::Unwatched(_) => "not watched",
            Mark::Failing(Degree::Few, _) => "<10% failing",
            Mark::Failing(Degree::Many, _) => "10–50% failing",
            Mark::Failing(Degree::Most, _) => "≥50% failing",
            Mark::Progressing => "progressing",
            Mark::Suspended => "suspended",
            Mark::Connecting => "connecting",
            Mark::Ready => "ready",
            Mark::Empty => "no Flux",
            Mark::Copy(Copy::Current) => "on the newest",
            Mark::Copy(Copy::Behind) => "behind",
            Mark::Copy(Copy::Failing) => "failing on it",
            Mark::Copy(Copy::Stuck) => "stuck",
            Mark::Copy(Copy::Suspended) => "suspended",
            Mark::Copy(Copy::Absent) => "not there",
            Mark::Age(Age::Now) => "<1m",
            Mark::Age(Age::Minutes) => "<10m",
            Mark::Age(Age::Hour) => "<1h",
            Mark::Age(Age::Old) => "older",
            Mark::Age(Age::Flapping) => "watch flapping",
            Mark::Age(Age::Never) => "never",
        }
    }
}

/// What the map's mode needs to mark every cluster: for the rollout mode, each cluster's copy
/// of the thing followed (worked out once per drawing, not per cell).
pub struct Shading {
    pub mode: MapMode,
    now: jiff::Timestamp,
    /// Rollout mode: the thing followed, and its copies by cluster.
    pub followed: Option<(ObjectKey, HashMap<ClusterId, Place>)>,
}

impl Shading {
    pub fn of(model: &Model) -> Shading {
        let followed = match (model.map_mode(), model.map_rollout()) {
            (MapMode::Rollout, Some(key)) => rollouts::matrix(
                model.index().entries(),
                key,
                &model.settings().rollout.rings,
                &model.settings().rollout.rules,
                model.now(),
            )
            .map(|m| {
                let places = m.places.into_iter().map(|p| (p.cluster, p)).collect();
                (key.clone(), places)
            }),
            _ => None,
        };
        Shading {
            mode: model.map_mode(),
            now: model.now(),
            followed,
        }
    }

    /// What `cluster`'s cell shows in this mode.
    pub fn mark(&self, id: ClusterId, cluster: &ClusterEntry) -> Mark {
        match self.mode {
            MapMode::Health => Mark::of(cluster),
            MapMode::Rollout => {
                let phase = cluster.connection.phase;
                if phase.is_failure() {
                    return Mark::Unwatched(phase);
                }
                let place = self.followed.as_ref().and_then(|(_, p)| p.get(&id));
                Mark::Copy(match place {
                    None => Copy::Absent,
                    Some(p) if p.stuck.is_some() => Copy::Stuck,
                    Some(p) => match p.standing {
                        Standing::Failing => Copy::Failing,
                        Standing::Behind => Copy::Behind,
                        Standing::Suspended => Copy::Suspended,
                        Standing::Current => Copy::Current,
                    },
                })
            }
            MapMode::Freshness => Mark::Age(match self.heard(cluster) {
                _ if cluster.connection.is_flapping() => Age::Flapping,
                Some(at) => Age::of(self.now.duration_since(at)),
                None => Age::Never,
            }),
        }
    }

    /// The last time the cluster was heard from: its last event or its report, the later.
    pub fn heard(&self, cluster: &ClusterEntry) -> Option<jiff::Timestamp> {
        let report = cluster.report.as_ref().map(|r| r.read_at);
        cluster.last_event.max(report)
    }

    /// How long ago `at` was, as the status line says it.
    pub fn ago(&self, at: jiff::Timestamp) -> String {
        crate::units::age(Some(at), self.now)
    }
}
