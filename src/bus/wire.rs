//! What goes over the bus, as JSON: a cluster's state, an object's summary (as the index keeps
//! it), and the history's changes. Everything read back is untrusted: bounded in size before it
//! is parsed, and checked as the engine checks what an API server sends.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::fleet::report::Report;
use crate::fleet::{
    ClusterInfo, ClusterKey, Connection, Counted, FluxKind, FluxSummary, Health, HealthCounts,
    Lists, Phase, ServedKind,
};

/// The most one value may be; a summary is a few hundred bytes, a report a few KiB.
pub const MAX_VALUE: usize = 256 * 1024;

/// A cluster as a collector sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterState {
    pub name: String,
    pub workspace: String,
    pub server: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub management: Vec<String>,
    #[serde(default)]
    pub origin: Option<String>,
    pub phase: Phase,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub since: Option<Timestamp>,
    #[serde(default)]
    pub retry_at: Option<Timestamp>,
    #[serde(default)]
    pub forbidden: Vec<FluxKind>,
    /// `[kind, version]` pairs.
    #[serde(default)]
    pub watching: Vec<ServedKind>,
    #[serde(default)]
    pub protocol: Option<String>,
    /// Watch restarts in the last five minutes (as [`Connection::restarts`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restarts: u16,
    /// How its kinds were listed (as [`Connection::lists`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lists: Option<Lists>,
    #[serde(default)]
    pub report: Option<Report>,
    /// Which collector watches it.
    pub collector: String,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

impl ClusterState {
    pub fn new(info: &ClusterInfo, connection: &Connection, collector: &str) -> ClusterState {
        ClusterState {
            name: info.name.clone(),
            workspace: info.workspace.clone(),
            server: info.server.clone(),
            labels: info.labels.clone(),
            management: info.management.clone(),
            origin: info.origin.clone(),
            phase: connection.phase,
            error: connection.error.as_deref().map(str::to_string),
            since: connection.since,
            retry_at: connection.retry_at,
            forbidden: connection.forbidden.to_vec(),
            watching: connection.watching.to_vec(),
            protocol: connection.protocol.map(str::to_string),
            restarts: connection.restarts,
            lists: connection.lists,
            report: None,
            collector: collector.to_string(),
        }
    }

    /// What the index knows of the cluster, under the key a reader gives it.
    pub fn info(&self, key: ClusterKey) -> ClusterInfo {
        ClusterInfo {
            key,
            server: self.server.clone(),
            labels: self.labels.clone(),
            management: self.management.clone(),
            origin: self.origin.clone(),
            ..ClusterInfo::new(&self.name, &self.workspace)
        }
    }

    pub fn connection(&self) -> Connection {
        let mut c = Connection::new(self.phase);
        c.error = self.error.as_deref().map(Into::into);
        c.since = self.since;
        c.retry_at = self.retry_at;
        c.restarts = self.restarts;
        c.lists = self.lists;
        c.forbidden = self.forbidden.clone().into();
        c.watching = ServedKind::shared(self.watching.clone());
        c.protocol = match self.protocol.as_deref() {
            Some("HTTP/2") => Some("HTTP/2"),
            Some("HTTP/1.1") => Some("HTTP/1.1"),
            _ => None,
        };
        c
    }
}

/// A cluster's objects counted by the collector watching them: what a reader that does not
/// hold every object shows for the cluster. Published at most every second per cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub name: String,
    pub collector: String,
    /// Objects by health (`ready`, `failed`, … as in `get --summary`).
    pub objects: BTreeMap<String, u32>,
    /// When it was counted.
    pub at: Option<Timestamp>,
    /// `report`: its collector summarizes it (`engine.watch`), counting it by its FluxReport
    /// with no object on the bus; `objects`: every object is on the bus.
    #[serde(default)]
    pub counted: Counted,
    /// Counted by its report: its not-ready objects and what they depend on, as its last look
    /// listed them. None where they were not listed, or would not fit in one value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Vec<FluxSummary>>,
}

impl Summary {
    /// The counts as the index keeps them; healths a newer collector may add are left out.
    pub fn counts(&self) -> HealthCounts {
        counts(&self.objects)
    }
}

/// One value read from the bus, bounded and checked.
pub fn read<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, super::Malformed> {
    if bytes.len() > MAX_VALUE {
        return Err(super::Malformed::TooLarge {
            size: bytes.len(),
            max: MAX_VALUE,
        });
    }
    serde_json::from_slice(bytes).map_err(|e| super::Malformed::NotOurs(e.to_string()))
}

/// An object read from the bus: its texts cut as the engine cuts a server's.
pub fn object(bytes: &[u8]) -> Result<FluxSummary, super::Malformed> {
    let summary: FluxSummary = read(bytes)?;
    Ok(summary.bounded())
}

pub use crate::fleet::history::RecordedChange;

/// FNV-1a: a stable hash of what was published, to skip sending it again unchanged.
pub fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Objects by health (`ready`, `failed`, …) as the index counts them; healths a newer collector
/// may add are left out.
fn counts(objects: &BTreeMap<String, u32>) -> HealthCounts {
    let mut counts = HealthCounts::default();
    for health in Health::ALL {
        if let Some(n) = objects.get(health.key()) {
            counts.add_n(health, *n);
        }
    }
    counts
}

/// A summary's `objects` read as counts.
pub fn counts_of<'de, D: serde::Deserializer<'de>>(d: D) -> Result<HealthCounts, D::Error> {
    let objects = BTreeMap::<String, u32>::deserialize(d)?;
    Ok(counts(&objects))
}
