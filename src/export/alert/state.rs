//! Which alerts are firing, holding and resolved, tick by tick: a pure function of what each
//! evaluation found and the time, so that every rule (pending, hold, label changes, resending
//! resolutions) is tested without a clock or a server.
//!
//! A cause fires once it has failed for `pending` (judged from its oldest copy's transition, so
//! a cause already hours old fires at the first look). Once firing it stays firing until it has
//! been absent for `hold`: a cause that clears and comes back within its hold time is the same
//! alert, never a new one. Alertmanager knows an alert by its labels; when a cause's labels
//! change (its suspect turns up, it reaches another workspace), the old label set is resolved and
//! the new one fires with the same start.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

/// Label or annotation names and values, in order.
pub type Labels = BTreeMap<String, String>;

/// What makes two evaluations' findings the same alert.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AlertKey {
    /// An object failing for one reason.
    Cause {
        kind: &'static str,
        namespace: String,
        name: String,
        reason: String,
    },
    /// Root causes sharing an endpoint's failure: the endpoint and the error's class.
    Incident {
        endpoint: String,
        class: &'static str,
    },
}

impl std::fmt::Display for AlertKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AlertKey::Cause {
                kind,
                namespace,
                name,
                reason,
            } => write!(f, "{kind} {namespace}/{name} {reason}"),
            AlertKey::Incident { endpoint, class } => write!(f, "incident {class} {endpoint}"),
        }
    }
}

/// One cause found by an evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub key: AlertKey,
    pub labels: Labels,
    pub annotations: Labels,
    /// When its oldest copy turned not ready, when known.
    pub since: Option<Timestamp>,
    /// A line for people: what fires or resolves.
    pub line: String,
}

/// The timing rules (`fluxfleet alert --for --hold --every`).
#[derive(Clone, Copy, Debug)]
pub struct AlertTiming {
    /// How long a cause fails before it fires.
    pub pending: Duration,
    /// How long a firing cause must be gone before it resolves.
    pub hold: Duration,
    /// How often alerts are sent again; a firing alert is said to end four of these later, so
    /// that Alertmanager resolves it by itself if fluxfleet stops.
    pub every: Duration,
}

/// How long a resolution is sent again, in case one was lost (as Prometheus does).
const RESOLVED_RESENT: SignedDuration = SignedDuration::from_mins(15);

/// One alert as Alertmanager's v2 API takes it (`PostableAlert`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Posted {
    pub labels: Labels,
    pub annotations: Labels,
    pub starts_at: Timestamp,
    pub ends_at: Timestamp,
}

/// What changed at a tick, for the lines `fluxfleet alert` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    Firing(String),
    /// Its labels changed: the old set resolved, the new one fires.
    Relabelled(String),
    Resolved(String),
}

#[derive(Debug)]
struct Tracked {
    found: Finding,
    /// When it fired (the alert's start); None while pending.
    fired: Option<Timestamp>,
    first_seen: Timestamp,
    last_seen: Timestamp,
}

impl Tracked {
    /// Its alert as fired at `fired`, ended `now`; sent for a while.
    fn resolution(&self, fired: Timestamp, now: Timestamp) -> Resolved {
        Resolved {
            alert: Posted {
                labels: self.found.labels.clone(),
                annotations: self.found.annotations.clone(),
                starts_at: fired,
                ends_at: now,
            },
            until: now + RESOLVED_RESENT,
        }
    }
}

#[derive(Debug)]
struct Resolved {
    alert: Posted,
    /// Sent again until then.
    until: Timestamp,
}

/// Every cause being tracked, and the resolutions still being sent.
#[derive(Debug)]
pub struct Alerts {
    rules: AlertTiming,
    tracked: BTreeMap<AlertKey, Tracked>,
    resolved: Vec<Resolved>,
}

fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

impl Alerts {
    pub fn new(rules: AlertTiming) -> Alerts {
        Alerts {
            rules,
            tracked: BTreeMap::new(),
            resolved: Vec::new(),
        }
    }

    /// Firing or holding, now.
    pub fn firing(&self) -> usize {
        self.tracked.values().filter(|t| t.fired.is_some()).count()
    }

    /// Takes one evaluation's causes at `now`: what to send, and what changed.
    pub fn tick(&mut self, now: Timestamp, found: Vec<Finding>) -> (Vec<Posted>, Vec<Note>) {
        let mut notes = Vec::new();
        let mut present = std::collections::BTreeSet::new();
        for f in found {
            present.insert(f.key.clone());
            match self.tracked.get_mut(&f.key) {
                Some(t) => {
                    if let Some(fired) = t.fired
                        && t.found.labels != f.labels
                    {
                        self.resolved.push(t.resolution(fired, now));
                        notes.push(Note::Relabelled(f.line.clone()));
                    }
                    t.found = f;
                    t.last_seen = now;
                }
                None => {
                    let key = f.key.clone();
                    let tracked = Tracked {
                        found: f,
                        fired: None,
                        first_seen: now,
                        last_seen: now,
                    };
                    self.tracked.insert(key, tracked);
                }
            }
        }
        let (pending, hold) = (signed(self.rules.pending), signed(self.rules.hold));
        let resolved = &mut self.resolved;
        self.tracked.retain(|key, t| {
            if present.contains(key) {
                let failing_since = t.found.since.map_or(t.first_seen, |s| s.min(t.first_seen));
                if t.fired.is_none() && now.duration_since(failing_since) >= pending {
                    t.fired = Some(now);
                    notes.push(Note::Firing(t.found.line.clone()));
                }
                return true;
            }
            let Some(fired) = t.fired else {
                // Gone before it fired: nothing was said, nothing to take back.
                return false;
            };
            if now.duration_since(t.last_seen) < hold {
                return true;
            }
            resolved.push(t.resolution(fired, now));
            notes.push(Note::Resolved(t.found.line.clone()));
            false
        });
        (self.posts(now), notes)
    }

    /// Every firing alert, ending a few rounds from now, and every resolution still sent — but
    /// not one whose label set fires again.
    fn posts(&mut self, now: Timestamp) -> Vec<Posted> {
        let ends_at = now + signed(self.rules.every.saturating_mul(4));
        let firing: Vec<Posted> = self
            .tracked
            .values()
            .filter_map(|t| {
                Some(Posted {
                    labels: t.found.labels.clone(),
                    annotations: t.found.annotations.clone(),
                    starts_at: t.fired?,
                    ends_at,
                })
            })
            .collect();
        self.resolved
            .retain(|r| r.until > now && !firing.iter().any(|f| f.labels == r.alert.labels));
        let mut posts = firing;
        posts.extend(self.resolved.iter().map(|r| r.alert.clone()));
        posts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + seconds).unwrap()
    }

    fn rules() -> AlertTiming {
        AlertTiming {
            pending: Duration::from_secs(60),
            hold: Duration::from_secs(300),
            every: Duration::from_secs(30),
        }
    }

    fn cause(name: &str, since: Option<i64>, suspect: &str) -> Finding {
        let key = AlertKey::Cause {
            kind: "Kustomization",
            namespace: "flux-system".into(),
            name: name.into(),
            reason: "HealthCheckFailed".into(),
        };
        let mut labels = Labels::new();
        labels.insert("name".into(), name.into());
        if !suspect.is_empty() {
            labels.insert("suspect_revision".into(), suspect.into());
        }
        Finding {
            line: key.to_string(),
            key,
            labels,
            annotations: Labels::new(),
            since: since.map(at),
        }
    }

    fn firing(posts: &[Posted], now: Timestamp) -> Vec<&Posted> {
        posts.iter().filter(|p| p.ends_at > now).collect()
    }

    #[test]
    fn a_new_failure_fires_after_its_pending_time_and_an_old_one_at_once() {
        let mut alerts = Alerts::new(rules());
        let (posts, notes) = alerts.tick(at(0), vec![cause("new", Some(0), "")]);
        assert!(
            posts.is_empty() && notes.is_empty(),
            "pending: nothing sent"
        );
        let (posts, _) = alerts.tick(at(30), vec![cause("new", Some(0), "")]);
        assert!(posts.is_empty());
        let (posts, notes) = alerts.tick(at(60), vec![cause("new", Some(0), "")]);
        assert_eq!(
            notes,
            vec![Note::Firing(
                "Kustomization flux-system/new HealthCheckFailed".into()
            )]
        );
        assert_eq!(posts.len(), 1);
        assert_eq!(posts[0].starts_at, at(60));
        assert_eq!(posts[0].ends_at, at(60 + 120), "four rounds ahead");

        // Failing for an hour before fluxfleet looked: fires at the first look.
        let mut alerts = Alerts::new(rules());
        let (posts, _) = alerts.tick(at(3600), vec![cause("old", Some(0), "")]);
        assert_eq!(posts.len(), 1);
    }

    #[test]
    fn a_flake_shorter_than_the_pending_time_never_fires() {
        let mut alerts = Alerts::new(rules());
        alerts.tick(at(0), vec![cause("flaky", Some(0), "")]);
        let (posts, notes) = alerts.tick(at(30), vec![]);
        assert!(posts.is_empty() && notes.is_empty());
        // Back again: pending afresh, from its new transition.
        let (posts, _) = alerts.tick(at(60), vec![cause("flaky", Some(50), "")]);
        assert!(posts.is_empty());
    }

    #[test]
    fn a_flapping_cause_holds_its_alert_and_does_not_fire_again() {
        let mut alerts = Alerts::new(rules());
        alerts.tick(at(0), vec![cause("a", Some(-600), "")]);
        // Gone, back, gone within the hold time: the same alert throughout, still firing.
        for (t, present) in [(30, false), (60, true), (90, false), (300, false)] {
            let found = if present {
                vec![cause("a", Some(55), "")]
            } else {
                vec![]
            };
            let (posts, notes) = alerts.tick(at(t), found);
            assert!(
                notes.is_empty(),
                "no new firing, no resolution at {t}s: {notes:?}"
            );
            let live = firing(&posts, at(t));
            assert_eq!(live.len(), 1, "still firing at {t}s");
            assert_eq!(live[0].starts_at, at(0), "the same alert");
        }
        // Gone for the whole hold time (since it was last seen at 60 s): resolved.
        let (posts, notes) = alerts.tick(at(360), vec![]);
        assert_eq!(notes.len(), 1);
        assert!(matches!(notes[0], Note::Resolved(_)));
        assert_eq!(posts.len(), 1);
        assert_eq!(posts[0].ends_at, at(360), "resolved now");
        assert_eq!(alerts.firing(), 0);
    }

    #[test]
    fn a_resolution_is_sent_again_for_a_while_unless_the_alert_fires_again() {
        let mut alerts = Alerts::new(AlertTiming {
            hold: Duration::ZERO,
            ..rules()
        });
        alerts.tick(at(0), vec![cause("a", Some(-600), "")]);
        let (posts, _) = alerts.tick(at(30), vec![]);
        assert_eq!(posts.len(), 1);
        let (posts, _) = alerts.tick(at(60), vec![]);
        assert_eq!(posts.len(), 1, "the resolution again");
        assert_eq!(posts[0].ends_at, at(30));
        let (posts, _) = alerts.tick(at(30 + 15 * 60), vec![]);
        assert!(posts.is_empty(), "after 15 minutes, no more");

        alerts.tick(at(2000), vec![cause("a", Some(-600), "")]);
        alerts.tick(at(2030), vec![]);
        let (posts, notes) = alerts.tick(at(2060), vec![cause("a", Some(-600), "")]);
        assert!(matches!(notes[..], [Note::Firing(_)]));
        assert_eq!(posts.len(), 1, "firing only, its resolution no longer sent");
        assert!(posts[0].ends_at > at(2060));
    }

    #[test]
    fn new_labels_resolve_the_old_label_set_and_fire_the_new_one_with_the_same_start() {
        let mut alerts = Alerts::new(rules());
        alerts.tick(at(0), vec![cause("a", Some(-600), "")]);
        let (posts, notes) = alerts.tick(at(30), vec![cause("a", Some(-600), "main@sha1:abc")]);
        assert!(matches!(notes[..], [Note::Relabelled(_)]));
        assert_eq!(posts.len(), 2);
        let new = posts.iter().find(|p| p.ends_at > at(30)).unwrap();
        let old = posts.iter().find(|p| p.ends_at == at(30)).unwrap();
        assert_eq!(new.labels["suspect_revision"], "main@sha1:abc");
        assert!(!old.labels.contains_key("suspect_revision"));
        assert_eq!(new.starts_at, old.starts_at);
        assert_eq!(alerts.firing(), 1);
    }

    #[test]
    fn a_pending_cause_that_changes_labels_says_nothing() {
        let mut alerts = Alerts::new(rules());
        alerts.tick(at(0), vec![cause("a", Some(0), "")]);
        let (posts, notes) = alerts.tick(at(30), vec![cause("a", Some(0), "main@sha1:abc")]);
        assert!(posts.is_empty() && notes.is_empty());
    }
}
