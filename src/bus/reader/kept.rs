//! What a reader keeps of each cluster of the bus, what it names them, and how it reads one
//! value of the state bucket: what the reader and its followers share.

use std::collections::BTreeSet;

use super::super::keys::{self, StateKey};
use super::super::wire::{self, ClusterState};
use crate::fleet::index::Change;
use crate::fleet::report::Report;
use crate::fleet::{ClusterKey, Connection, Phase};

/// How a reader names a cluster it learned from the bus.
pub fn cluster_key(name: &str) -> ClusterKey {
    ClusterKey::new(format!("nats#{name}"))
}

/// The name of a cluster a reader named; None for one that is not the bus's.
pub(super) fn cluster_name(key: &ClusterKey) -> Option<&str> {
    key.as_str().strip_prefix("nats#")
}

/// A cluster's state as the reader keeps it once the session knows the cluster: its connection
/// as its collector published it, which collector that is, and its report until it is said.
/// Its name is its key; its server, workspace, labels and management clusters are kept
/// elsewhere (a state as read is 696 bytes, most of it room for a report the session keeps:
/// 70 MiB of a reader of 100,000 clusters).
pub(super) struct Kept {
    pub(super) connection: Connection,
    pub(super) collector: Box<str>,
    pub(super) report: Option<Box<Report>>,
}

impl Kept {
    pub(super) fn of(state: ClusterState) -> Kept {
        Kept {
            connection: state.connection(),
            collector: state.collector.into(),
            report: state.report.map(Box::new),
        }
    }

    pub(super) fn collector(&self) -> &str {
        &self.collector
    }

    /// Its report, not yet said.
    pub(super) fn unsaid_report(&self) -> bool {
        self.report.is_some()
    }

    /// Its report, taken out to be said.
    pub(super) fn take_report(&mut self) -> Option<Report> {
        self.report.take().map(|r| *r)
    }
}

/// A cluster's connection as a reader shows it: as its collector published it while that
/// collector is alive — a live cluster the reader only summarizes as summarized; once the
/// collector is gone, timed out, saying so, with what it last published still shown, until
/// another collector takes the cluster over.
pub(super) fn shown(
    state: &Kept,
    live: &BTreeSet<String>,
    summarized: bool,
    gone: Option<jiff::Timestamp>,
) -> Connection {
    if live.contains(state.collector()) {
        let mut c = state.connection.clone();
        if summarized && c.phase == Phase::Live {
            c.phase = Phase::Summary;
        }
        return c;
    }
    let mut c = Connection::new(Phase::TimedOut);
    let when = gone.map_or(String::new(), |t| format!(" at {t:.0}"));
    c.error = Some(
        format!(
            "its collector {} stopped announcing itself{when}: what it last published is shown \
             until another collector takes the cluster over",
            state.collector
        )
        .into(),
    );
    // Stale since the reader saw its collector go (unknown for one gone before it started).
    c.since = gone;
    c.watching = state.connection.watching.clone();
    c
}

/// A cluster's summary ([`wire::Summary`]) as a reader reads and keeps it: its counts, and what it
/// holds as read, parsed only when it is said to the session (a reader of 100,000 clusters
/// holding every summary's objects parsed at once took a tenth of its memory for them).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Summed {
    /// Checked against its key, then let go.
    pub(super) name: String,
    #[serde(rename = "objects", deserialize_with = "wire::counts_of")]
    pub(super) counts: crate::fleet::HealthCounts,
    pub(super) at: Option<jiff::Timestamp>,
    #[serde(default)]
    pub(super) counted: crate::fleet::Counted,
    #[serde(default)]
    pub(super) held: Option<Box<serde_json::value::RawValue>>,
}

impl Summed {
    /// The summary `value` of cluster `name`.
    pub(super) fn read(name: &str, value: &[u8]) -> Result<Summed, super::super::Malformed> {
        let mut summed: Summed = wire::read(value)?;
        if summed.name != name {
            return Err(super::super::Malformed::OtherCluster);
        }
        summed.name = String::new();
        Ok(summed)
    }

    /// What it holds, taken out of it, its texts cut as the engine cuts a server's; None (and
    /// a warning) where that is not a list of objects.
    pub(super) fn take_held(&mut self) -> Option<Vec<crate::fleet::FluxSummary>> {
        let held = self.held.take()?;
        match serde_json::from_str::<Vec<crate::fleet::FluxSummary>>(held.get()) {
            Ok(held) => Some(
                held.into_iter()
                    .map(crate::fleet::FluxSummary::bounded)
                    .collect(),
            ),
            Err(e) => {
                tracing::warn!(error = %e, "a summary's objects that cannot be read");
                None
            }
        }
    }
}

/// What a summarized cluster counts by: its FluxReport if it has one, with its objects counted
/// by its collector (exact, where a report tells only running and failing).
pub(super) fn summarized_report(report: Option<Report>, summary: Option<&Summed>) -> Report {
    let mut report = report.unwrap_or_default();
    if let Some(summary) = summary {
        report.counts = summary.counts.clone();
        if let Some(at) = summary.at {
            report.read_at = at;
        }
    }
    report
}

/// An object key's value as a change; None for a cluster's or a summary's key.
pub(super) fn read(key: &str, value: &[u8]) -> Result<Option<Change>, super::super::Malformed> {
    match keys::parse(key) {
        None => Err(super::super::Malformed::NotOurKey),
        Some(StateKey::Cluster(_) | StateKey::Summary(_)) => Ok(None),
        Some(StateKey::Object(_, object)) => {
            let summary = wire::object(value)?;
            if summary.key != object {
                return Err(super::super::Malformed::OtherObject(format!(
                    "{} {}/{}",
                    summary.key.kind, summary.key.namespace, summary.key.name
                )));
            }
            Ok(Some(Change::Applied(summary)))
        }
    }
}
