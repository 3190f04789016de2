//! Ring metrics on a collector's `/metrics`: how each ring delivers — the median lead time to
//! 50 %, 90 % and 100 % of the ring, the change failure rate and the median time to restore, over
//! every Kustomization and HelmRelease and every revision of the window — worked out from the
//! history stream (`fleet::rollouts::metrics`) every `every`, off the collector's loop. One set
//! of samples per ring, at most [`RINGS`] rings: the label sets stay bounded however many
//! things and revisions the fleet has. One collector of a bucket works them out and exports
//! them (the first by id of those alive): a day of history is read once, not once each.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::sync::watch;

use super::announce::Aborting;
use super::text::{family, label};
use crate::bus::Options;
use crate::fleet::history::RecordedChange;
use crate::fleet::rollouts::Rings;
use crate::fleet::rollouts::metrics::{Deliveries, RingDelivery, rolled};
use crate::inventory::ClusterSpec;

/// The most rings exported; beyond, the rest are left out (and counted).
pub const RINGS: usize = 64;

/// What `fluxfleet collect --ring-metrics-every` asks.
#[derive(Clone, Debug)]
pub struct RingsAsked {
    pub rings: Rings,
    /// How far back the history is read.
    pub window: Duration,
    pub every: Duration,
    pub suspect_window: SignedDuration,
}

/// One ring's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub ring: String,
    pub lead: [Option<i64>; 3],
    pub failure_rate: Option<f64>,
    pub restore: Option<i64>,
    pub revisions: usize,
}

/// The figures last worked out, shared with the collector's snapshot.
pub type Kept = Arc<Mutex<Vec<Figures>>>;

/// Per ring, over its things' deliveries: at most [`RINGS`], by name.
pub fn figures(delivered: &[RingDelivery]) -> Vec<Figures> {
    let mut by: BTreeMap<&str, Vec<&RingDelivery>> = BTreeMap::new();
    for d in delivered {
        by.entry(&d.ring).or_default().push(d);
    }
    by.into_iter()
        .take(RINGS)
        .map(|(ring, things)| {
            let revisions = things.iter().flat_map(|t| &t.revisions);
            let rolled = rolled(revisions.clone());
            Figures {
                ring: ring.to_string(),
                lead: rolled.lead_seconds,
                failure_rate: rolled.change_failure_rate,
                restore: rolled.restore_seconds,
                revisions: revisions.count(),
            }
        })
        .collect()
}

/// Each cluster's ring, by name: what the ring metrics count a cluster's changes under.
pub type Members = HashMap<String, String>;

/// The rings of `clusters` as `rings` places them.
pub fn members<'a>(rings: &Rings, clusters: impl Iterator<Item = &'a ClusterSpec>) -> Members {
    clusters
        .map(|s| (s.name.clone(), rings.name_of(&s.info()).to_string()))
        .collect()
}

/// The ring metrics' task, as the collector's loop sees it: told the rings as the fleet is read
/// again, and which collector works the figures out — one for the bucket, the first by id of
/// those alive, so that a day of history is read once, not once per collector.
pub(super) struct Working {
    task: Aborting,
    rings: Rings,
    members: watch::Sender<Members>,
    elected: watch::Sender<bool>,
}

impl Working {
    /// Starts the task for the fleet of `specs`; it works nothing out until it is elected.
    pub(super) fn start<'a>(
        options: Options,
        asked: RingsAsked,
        kept: Kept,
        specs: impl Iterator<Item = &'a ClusterSpec>,
    ) -> Working {
        let rings = asked.rings.clone();
        let (members, told) = watch::channel(members(&rings, specs));
        let (elected, chosen) = watch::channel(false);
        let task = Aborting(Some(tokio::spawn(keep(options, told, chosen, asked, kept))));
        Working {
            task,
            rings,
            members,
            elected,
        }
    }

    /// The fleet as read again.
    pub(super) fn fleet<'a>(&self, specs: impl Iterator<Item = &'a ClusterSpec>) {
        self.members.send_replace(members(&self.rings, specs));
    }

    /// The collectors alive now, this one (`id`) among them.
    pub(super) fn collectors(&self, id: &str, alive: &BTreeSet<String>) {
        let first = alive.first().is_some_and(|first| first == id);
        self.elected.send_if_modified(|elected| {
            let changed = *elected != first;
            if changed && first {
                tracing::info!("this collector works the ring metrics out for the bucket");
            }
            *elected = first;
            changed
        });
    }

    pub(super) async fn stop(self) {
        self.task.stop().await;
    }
}

/// Reads the history of the last `asked.window` and works the figures out into `kept`, every
/// `asked.every` while `elected` (and at once when it is chosen), until aborted, with the
/// rings as `members` says at the time (the fleet is read again while the collector runs: a
/// cluster that joins counts from then). A read that fails keeps the last figures (and says
/// why); a collector not elected exports none.
async fn keep(
    options: Options,
    members: watch::Receiver<Members>,
    mut elected: watch::Receiver<bool>,
    asked: RingsAsked,
    kept: Kept,
) {
    let mut every = tokio::time::interval(asked.every);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            chosen = elected.changed() => {
                if chosen.is_err() {
                    return;
                }
            }
        }
        if !*elected.borrow_and_update() {
            kept.lock().unwrap_or_else(PoisonError::into_inner).clear();
            continue;
        }
        let window = SignedDuration::try_from(asked.window).unwrap_or(SignedDuration::MAX);
        let from = Timestamp::now()
            .checked_sub(window)
            .unwrap_or(Timestamp::UNIX_EPOCH);
        let ring_of = members.borrow().clone();
        let ring = |cluster: &str| ring_of.get(cluster).cloned();
        let mut delivering = Deliveries::new(ring, asked.suspect_window);
        let each = |change: RecordedChange| delivering.add(&change);
        match crate::bus::history::each_since(&options, from, None, each).await {
            Ok(()) => {
                let delivered = delivering.finish(&|_, _| None);
                *kept.lock().unwrap_or_else(PoisonError::into_inner) = figures(&delivered);
            }
            Err(e) => tracing::warn!(error = %e, "ring metrics: the history could not be read"),
        }
    }
}

/// A ring's value for a family, when it has one.
type Value = fn(&Figures) -> Option<f64>;

/// The ring families of `/metrics`, after the collector's own.
pub fn render(out: &mut String, id: &str, rings: &[Figures]) {
    let family = |out: &mut String, name: &str, help: &str| {
        family(
            out,
            &format!("fluxfleet_collector_ring_{name}"),
            "gauge",
            help,
        );
    };
    let ring = |r: &Figures| label(&r.ring);
    family(
        out,
        "lead_seconds",
        "Median lead time over the ring's revisions: first seen to applied on this share of its copies.",
    );
    for r in rings {
        for (share, lead) in ["50", "90", "100"].iter().zip(r.lead) {
            if let Some(s) = lead {
                let name = "fluxfleet_collector_ring_lead_seconds";
                let labels = format!("collector=\"{id}\",ring=\"{}\",share=\"{share}\"", ring(r));
                let _ = writeln!(out, "{name}{{{labels}}} {s}");
            }
        }
    }
    let samples: [(&str, &str, Value); 3] = [
        (
            "change_failure_ratio",
            "Revisions after which a copy of the ring failed within the suspect window, of those that reached it.",
            |r| r.failure_rate,
        ),
        (
            "restore_seconds",
            "Median time from a revision's first failure in the ring until every copy that failed was ready again.",
            |r| r.restore.map(|s| s as f64),
        ),
        (
            "revisions",
            "Revisions that reached the ring in the window, over all its Kustomizations and HelmReleases.",
            |r| Some(r.revisions as f64),
        ),
    ];
    for (name, help, value) in samples {
        family(out, name, help);
        for r in rings {
            if let Some(v) = value(r) {
                let _ = writeln!(
                    out,
                    "fluxfleet_collector_ring_{name}{{collector=\"{id}\",ring=\"{}\"}} {v}",
                    ring(r)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::rollouts::metrics::Delivery;
    use crate::fleet::{FluxKind, ObjectKey};

    fn delivered(ring: &str, name: &str, leads: [Option<i64>; 3], failed: usize) -> RingDelivery {
        let revision = Delivery {
            revision: "main@sha1:1".into(),
            first_seen: Timestamp::UNIX_EPOCH,
            lead_seconds: leads,
            applied: 2,
            failed,
            failed_at: None,
            restored_seconds: (failed > 0).then_some(600),
        };
        RingDelivery {
            ring: ring.into(),
            key: ObjectKey::new(FluxKind::Kustomization, "flux-system", name),
            clusters: 2,
            lead_seconds: leads,
            change_failure_rate: None,
            restore_seconds: None,
            revisions: vec![revision],
        }
    }

    #[test]
    fn a_ring_rolls_up_its_things_and_the_rings_are_bounded() {
        let mut all = vec![
            delivered("canary", "apps", [Some(60), Some(120), None], 1),
            delivered("canary", "infra", [Some(30), Some(90), Some(90)], 0),
        ];
        for i in 0..RINGS + 5 {
            all.push(delivered(&format!("ring-{i:03}"), "apps", [None; 3], 0));
        }
        let figures = figures(&all);
        assert_eq!(figures.len(), RINGS, "one set per ring, at most {RINGS}");
        let canary = figures.iter().find(|f| f.ring == "canary").unwrap();
        // Medians over both things' revisions (the lower of two), one failed of two.
        assert_eq!(canary.lead, [Some(30), Some(90), Some(90)]);
        assert_eq!(canary.failure_rate, Some(0.5));
        assert_eq!(canary.restore, Some(600));
        assert_eq!(canary.revisions, 2);
    }

    #[test]
    fn members_follow_the_fleet_as_it_is_read_again() {
        let rings = Rings {
            patterns: vec!["canary".into(), "prod-*".into()],
            label: None,
        };
        let spec = |name: &str, workspace: &str| ClusterSpec {
            name: name.into(),
            context: name.into(),
            workspace: workspace.into(),
            server: String::new(),
            labels: Default::default(),
            source: "fleet.yaml".into(),
            kubeconfig: Default::default(),
            discovered: None,
        };
        let first = [spec("a", "canary"), spec("b", "prod-eu")];
        let of = members(&rings, first.iter());
        assert_eq!(of["a"], "canary");
        assert_eq!(of["b"], "prod-*");
        assert!(!of.contains_key("c"));
        // A cluster joins: it is in its ring from the next reading.
        let later = [
            spec("a", "canary"),
            spec("b", "prod-eu"),
            spec("c", "prod-us"),
        ];
        assert_eq!(members(&rings, later.iter())["c"], "prod-*");
    }

    #[test]
    fn ring_names_are_escaped_and_absent_figures_left_out() {
        let figures = vec![Figures {
            ring: "a\"b\nc".into(),
            lead: [Some(5), None, None],
            failure_rate: Some(0.25),
            restore: None,
            revisions: 4,
        }];
        let mut out = String::new();
        render(&mut out, "c1", &figures);
        assert!(out.contains(
            "fluxfleet_collector_ring_lead_seconds{collector=\"c1\",ring=\"a\\\"b\\nc\",share=\"50\"} 5"
        ), "{out}");
        assert!(!out.contains("share=\"90\""), "{out}");
        assert!(out.contains("fluxfleet_collector_ring_change_failure_ratio{collector=\"c1\",ring=\"a\\\"b\\nc\"} 0.25"), "{out}");
        assert!(
            !out.contains("fluxfleet_collector_ring_restore_seconds{"),
            "{out}"
        );
        assert!(
            out.contains("# TYPE fluxfleet_collector_ring_revisions gauge"),
            "{out}"
        );
    }
}
