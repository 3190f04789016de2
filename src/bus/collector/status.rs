//! A collector's state as its operators see it: whether its loop turns and its bus is reachable
//! (the probes' answers) and its figures in Prometheus' text format — clusters by connection
//! state and objects by health per workspace (for the clusters it owns), connection errors and
//! watches restarted, what it publishes and how late. Taken by the collector's loop at each
//! tick; read by [`super::serve`] when a probe or Prometheus asks.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::text::{family, label};
use crate::fleet::{Health, Phase};

/// The bounds of the publish lag histogram, in seconds.
pub const LAG_BUCKETS: [f64; 9] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 10.0, 30.0];

/// How long after its last tick a collector's loop is taken for stuck: `/healthz` fails.
pub fn stuck_after(ttl: Duration) -> Duration {
    (ttl * 2).max(Duration::from_secs(30))
}

/// The publish lag: from the engine seeing a change to the bus acknowledging it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lag {
    /// Counts per bound of [`LAG_BUCKETS`] (not cumulative), then above the last.
    pub counts: [u64; LAG_BUCKETS.len() + 1],
    pub sum: f64,
}

impl Lag {
    pub fn observe(&mut self, seconds: f64) {
        let seconds = seconds.max(0.0);
        let at = LAG_BUCKETS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(LAG_BUCKETS.len());
        self.counts[at] += 1;
        self.sum += seconds;
    }
}

/// What a collector's loop last said.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub id: String,
    /// When the loop last ticked.
    pub at: Option<tokio::time::Instant>,
    /// Why it is not ready (None: ready).
    pub not_ready: Option<NotReady>,
    pub stuck_after: Duration,
    /// Clusters of the fleet, owned, waiting to be watched, and collectors alive.
    pub fleet: usize,
    pub owned: usize,
    pub waiting: usize,
    pub collectors: usize,
    /// Owned clusters by workspace and connection state.
    pub clusters: BTreeMap<(String, Phase), u64>,
    /// Owned clusters' objects by workspace and health.
    pub objects: BTreeMap<(String, Health), u64>,
    /// Owned clusters that went into an error state, by state.
    pub connection_errors: BTreeMap<Phase, u64>,
    /// Owned clusters live again after an error (their watches restarted).
    pub watch_restarts: u64,
    pub published: u64,
    pub publish_failures: u64,
    pub in_flight: usize,
    /// Not taken by the bus yet: to be sent again.
    pub kept: usize,
    pub history_dropped: u64,
    /// The history stream as the server last said (all collectors' changes), and its cap.
    pub history: Option<HistorySize>,
    pub lag: Lag,
    /// How each ring delivers, from the history (`--ring-metrics-every`).
    pub rings: Vec<super::rings::Figures>,
}

/// How much the history stream holds, as the server says at a tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistorySize {
    pub bytes: u64,
    pub messages: u64,
    /// Its cap in bytes (0: none).
    pub max_bytes: u64,
}

/// The snapshot, shared between the collector's loop and its HTTP server.
#[derive(Default)]
pub struct StatusBoard(Mutex<Snapshot>);

/// Why a probe fails: what the collector is still doing, or what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    /// The loop has not turned for longer than it should: the collector is stuck.
    #[error("the collector's loop last turned {0}s ago")]
    Stuck(u64),
    /// The stores are not open yet.
    #[error("starting: the stores are not open yet")]
    Starting,
    /// It has not yet looked at who else is alive (its share is not known).
    #[error("starting: no look yet at who else is alive")]
    NotLooked,
    /// Clusters of its share wait for their last owner to let go.
    #[error("starting: {0} clusters wait for their last owner to let go")]
    Waiting(usize),
    /// It owns clusters and the bus has taken nothing of theirs yet.
    #[error("starting: {0} clusters taken, nothing published yet")]
    Unpublished(usize),
    /// The connection to NATS is down.
    #[error("NATS: not connected")]
    Disconnected,
    /// The last look at the bus failed.
    #[error("{0}")]
    Bus(crate::bus::BusError),
}

/// A probe's answer: whether it passes, and why not.
pub type Probe = Result<(), NotReady>;

impl StatusBoard {
    pub fn set(&self, snapshot: Snapshot) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = snapshot;
    }

    pub fn snapshot(&self) -> Snapshot {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// `/healthz`: the loop has ticked lately.
    pub fn healthz(&self, now: tokio::time::Instant) -> Probe {
        let s = self.snapshot();
        match s.at {
            None => Ok(()),
            Some(at) if now.duration_since(at) <= s.stuck_after => Ok(()),
            Some(at) => Err(NotReady::Stuck(now.duration_since(at).as_secs())),
        }
    }

    /// `/readyz`: alive, its first look at who else is alive done, its bus reachable, and what
    /// it owns published (a collector that owns nothing is ready once it has looked).
    pub fn readyz(&self, now: tokio::time::Instant) -> Probe {
        self.healthz(now)?;
        let s = self.snapshot();
        if s.at.is_none() {
            return Err(NotReady::Starting);
        }
        match s.not_ready {
            None => Ok(()),
            Some(why) => Err(why),
        }
    }
}

impl crate::endpoints::Endpoints for StatusBoard {
    type NotReady = NotReady;

    fn healthz(&self) -> Probe {
        StatusBoard::healthz(self, tokio::time::Instant::now())
    }

    fn readyz(&self) -> Probe {
        StatusBoard::readyz(self, tokio::time::Instant::now())
    }

    fn metrics(&self) -> String {
        render(&self.snapshot())
    }
}

/// A family whose samples differ by labels: each `(labels, value)`, after the collector's.
fn labelled(
    out: &mut String,
    (id, name, kind): (&str, &str, &str),
    help: &str,
    samples: impl Iterator<Item = (String, u64)>,
) {
    let name = format!("fluxfleet_collector_{name}");
    family(out, &name, kind, help);
    for (labels, n) in samples {
        let _ = writeln!(out, "{name}{{collector=\"{id}\",{labels}}} {n}");
    }
}

/// The snapshot in Prometheus' text exposition format (version 0.0.4).
pub fn render(s: &Snapshot) -> String {
    let mut out = String::new();
    let id = label(&s.id);
    let single: [(&str, &str, &str, u64); 10] = [
        (
            "fleet_clusters",
            "gauge",
            "Clusters in the collector's fleet.",
            s.fleet as u64,
        ),
        (
            "owned_clusters",
            "gauge",
            "Clusters this collector watches and publishes.",
            s.owned as u64,
        ),
        (
            "waiting_clusters",
            "gauge",
            "Clusters given to this collector, not yet watched (their last owner letting go).",
            s.waiting as u64,
        ),
        (
            "collectors",
            "gauge",
            "Collectors alive on the bus, as this one sees them.",
            s.collectors as u64,
        ),
        (
            "watch_restarts_total",
            "counter",
            "Times an owned cluster was watched live again after an error, or a broken watch of it was resumed at once.",
            s.watch_restarts,
        ),
        (
            "published_total",
            "counter",
            "Messages the bus acknowledged.",
            s.published,
        ),
        (
            "publish_failures_total",
            "counter",
            "Publishes the bus did not acknowledge (kept and sent again).",
            s.publish_failures,
        ),
        (
            "history_dropped_total",
            "counter",
            "History records dropped while the bus did not take them (past the backlog).",
            s.history_dropped,
        ),
        (
            "publishes_in_flight",
            "gauge",
            "Publishes sent, not yet acknowledged.",
            s.in_flight as u64,
        ),
        (
            "publishes_kept",
            "gauge",
            "Messages the bus did not take, to be sent again at the next tick.",
            s.kept as u64,
        ),
    ];
    let history = s.history.map(|h| {
        [
            (
                "history_bytes",
                "gauge",
                "Bytes the history stream holds (every collector's changes, one copy).",
                h.bytes,
            ),
            (
                "history_messages",
                "gauge",
                "Changes the history stream holds.",
                h.messages,
            ),
            (
                "history_max_bytes",
                "gauge",
                "The history stream's cap in bytes; past it the oldest changes go (0: none).",
                h.max_bytes,
            ),
        ]
    });
    for (name, kind, help, value) in single.into_iter().chain(history.into_iter().flatten()) {
        let name = format!("fluxfleet_collector_{name}");
        family(&mut out, &name, kind, help);
        let _ = writeln!(out, "{name}{{collector=\"{id}\"}} {value}");
    }
    labelled(
        &mut out,
        (&id, "cluster_connections", "gauge"),
        "Owned clusters by workspace and connection state.",
        s.clusters.iter().map(|((w, phase), n)| {
            let labels = format!("workspace=\"{}\",state=\"{}\"", label(w), phase.as_str());
            (labels, *n)
        }),
    );
    labelled(
        &mut out,
        (&id, "objects", "gauge"),
        "Flux objects of the owned clusters by workspace and health.",
        s.objects.iter().map(|((w, health), n)| {
            let labels = format!("workspace=\"{}\",health=\"{}\"", label(w), health.key());
            (labels, *n)
        }),
    );
    labelled(
        &mut out,
        (&id, "connection_errors_total", "counter"),
        "Times an owned cluster's connection went into an error state, by state.",
        s.connection_errors
            .iter()
            .map(|(phase, n)| (format!("state=\"{}\"", phase.as_str()), *n)),
    );
    let name = "fluxfleet_collector_publish_lag_seconds";
    family(
        &mut out,
        name,
        "histogram",
        "From the engine seeing a change to the bus acknowledging its publish.",
    );
    let mut cumulative = 0;
    for (bound, n) in LAG_BUCKETS.iter().zip(s.lag.counts) {
        cumulative += n;
        let _ = writeln!(
            out,
            "{name}_bucket{{collector=\"{id}\",le=\"{bound}\"}} {cumulative}"
        );
    }
    let total: u64 = s.lag.counts.iter().sum();
    let _ = writeln!(
        out,
        "{name}_bucket{{collector=\"{id}\",le=\"+Inf\"}} {total}"
    );
    let _ = writeln!(out, "{name}_sum{{collector=\"{id}\"}} {}", s.lag.sum);
    let _ = writeln!(out, "{name}_count{{collector=\"{id}\"}} {total}");
    super::rings::render(&mut out, &id, &s.rings);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_escapes_labels_and_accumulates_buckets() {
        let mut s = Snapshot {
            id: "c\"1".into(),
            ..Snapshot::default()
        };
        s.objects.insert(("pay\\ments\n".into(), Health::Failed), 3);
        s.lag.observe(0.02);
        s.lag.observe(0.02);
        s.lag.observe(100.0);
        let text = render(&s);
        assert!(text.contains(
            "fluxfleet_collector_objects{collector=\"c\\\"1\",workspace=\"pay\\\\ments\\n\",health=\"failed\"} 3"
        ), "{text}");
        assert!(text.contains("le=\"0.01\"} 0"), "{text}");
        assert!(text.contains("le=\"0.05\"} 2"), "{text}");
        assert!(text.contains("le=\"30\"} 2"), "{text}");
        assert!(text.contains("le=\"+Inf\"} 3"), "{text}");
        assert!(
            text.contains("fluxfleet_collector_publish_lag_seconds_count{collector=\"c\\\"1\"} 3")
        );
        // Every sample line belongs to a family declared before it.
        let mut declared = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                declared.push(rest.split(' ').next().unwrap_or_default().to_string());
            } else if !line.starts_with('#') {
                let metric = line.split(['{', ' ']).next().unwrap_or_default();
                assert!(
                    declared.iter().any(|d| metric.starts_with(d.as_str())),
                    "{line}"
                );
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn probes_fail_when_the_loop_stops_turning_or_the_bus_is_gone() {
        let status = StatusBoard::default();
        let start = tokio::time::Instant::now();
        assert!(status.healthz(start).is_ok());
        assert!(
            status.readyz(start).is_err(),
            "not ready before the stores are open"
        );
        status.set(Snapshot {
            at: Some(start),
            stuck_after: Duration::from_secs(30),
            ..Snapshot::default()
        });
        assert_eq!(status.readyz(start), Ok(()));
        let later = start + Duration::from_secs(31);
        assert!(status.healthz(later).is_err());
        assert!(status.readyz(later).is_err());
        status.set(Snapshot {
            at: Some(later),
            stuck_after: Duration::from_secs(30),
            not_ready: Some(NotReady::Disconnected),
            ..Snapshot::default()
        });
        assert!(status.healthz(later).is_ok());
        assert_eq!(status.readyz(later), Err(NotReady::Disconnected));
    }
}
