//! How fluxfleet's link to one cluster is doing. Every view shows it next to the cluster's objects:
//! a cluster that cannot be seen must never look like a cluster with nothing in it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use super::{FluxKind, SharedText};

/// Where a cluster's connection stands, best last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The kubeconfig entry cannot be used (bad server URL, unreadable certificate …).
    Invalid,
    /// No route, refused, reset: the API server cannot be reached.
    Unreachable,
    /// Connected, but no answer in time.
    TimedOut,
    /// The TLS handshake failed (unknown CA, wrong name, expired certificate).
    TlsError,
    /// 401, or the credentials could not be obtained (exec plugin, token file).
    Unauthorized,
    /// 403 on every watched kind.
    Forbidden,
    /// The server answers with 5xx or with something that is not the Kubernetes API.
    ServerError,
    /// Cluster API reports the cluster as failed (its message is the error).
    ProvisionFailed,
    /// The server serves none of the Flux kinds.
    FluxNotInstalled,
    /// Cluster API is still creating it: not connected until it is provisioned.
    Provisioning,
    /// Paused in Cluster API: left alone.
    Paused,
    /// Being deleted by Cluster API.
    Deleting,
    /// Building the client and discovering the Flux kinds.
    Connecting,
    /// Watches started; not every kind is listed yet.
    Syncing,
    /// Counted from the Flux Operator's report (or the last list of its objects), read every
    /// interval over a connection that is not kept; its objects are watched once opened.
    Summary,
    /// Every watched kind is listed and being watched.
    Live,
}

impl Phase {
    pub const ALL: [Phase; 16] = [
        Phase::Invalid,
        Phase::Unreachable,
        Phase::TimedOut,
        Phase::TlsError,
        Phase::Unauthorized,
        Phase::Forbidden,
        Phase::ServerError,
        Phase::ProvisionFailed,
        Phase::FluxNotInstalled,
        Phase::Provisioning,
        Phase::Paused,
        Phase::Deleting,
        Phase::Connecting,
        Phase::Syncing,
        Phase::Summary,
        Phase::Live,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Invalid => "invalid",
            Phase::Unreachable => "unreachable",
            Phase::TimedOut => "timed-out",
            Phase::TlsError => "tls-error",
            Phase::Unauthorized => "unauthorized",
            Phase::Forbidden => "forbidden",
            Phase::ServerError => "server-error",
            Phase::ProvisionFailed => "provision-failed",
            Phase::FluxNotInstalled => "flux-not-installed",
            Phase::Provisioning => "provisioning",
            Phase::Paused => "paused",
            Phase::Deleting => "deleting",
            Phase::Connecting => "connecting",
            Phase::Syncing => "syncing",
            Phase::Summary => "summary",
            Phase::Live => "live",
        }
    }

    /// Seen as it is: watched live, or counted from its last summary.
    pub fn is_up(self) -> bool {
        matches!(self, Phase::Live | Phase::Summary)
    }

    /// Still on the way to its first picture of the cluster.
    pub fn is_pending(self) -> bool {
        matches!(self, Phase::Connecting | Phase::Syncing)
    }

    /// Something is wrong with this cluster's link (not merely slow to come up, not a state
    /// of its life in Cluster API).
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            Phase::Connecting
                | Phase::Syncing
                | Phase::Summary
                | Phase::Live
                | Phase::FluxNotInstalled
                | Phase::Provisioning
                | Phase::Paused
                | Phase::Deleting
        )
    }

    /// Not watched because of where it is in its life (Cluster API): nothing is missing.
    pub fn is_lifecycle(self) -> bool {
        matches!(self, Phase::Provisioning | Phase::Paused | Phase::Deleting)
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The connection state the engine reports for one cluster, replaced whole on every change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Connection {
    pub phase: Phase,
    /// What went wrong, in words a user can act on (never a credential).
    pub error: Option<Box<str>>,
    /// When this phase began.
    pub since: Option<Timestamp>,
    /// Set while backing off: when the next attempt starts.
    pub retry_at: Option<Timestamp>,
    /// Kinds the credentials may not list; everything else stays visible.
    pub forbidden: Box<[FluxKind]>,
    /// Kinds being watched, with the API version chosen for each: one list for every
    /// connection that serves the same ([`ServedKind::shared`]), shared by every copy of its
    /// state (the cluster's task, the index, a view).
    pub watching: Arc<[ServedKind]>,
    /// `HTTP/2` or `HTTP/1.1` once a connection exists.
    pub protocol: Option<&'static str>,
    /// Watches the server broke and fluxfleet resumed at once, in the last five minutes: a
    /// live cluster whose watches flap says so instead of looking unreachable.
    #[serde(default)]
    pub restarts: u16,
    /// How its kinds were listed, once one was.
    #[serde(default)]
    pub lists: Option<Lists>,
}

impl Connection {
    pub fn new(phase: Phase) -> Connection {
        Connection {
            phase,
            error: None,
            since: None,
            retry_at: None,
            forbidden: Box::new([]),
            watching: Arc::new([]),
            protocol: None,
            restarts: 0,
            lists: None,
        }
    }
}

/// A kind a cluster serves, and the version it is read at (the most preferred version its
/// server serves it at). Written as `[kind, version]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(FluxKind, SharedText)", into = "(FluxKind, SharedText)")]
pub struct ServedKind {
    pub kind: FluxKind,
    pub version: SharedText,
}

impl From<(FluxKind, SharedText)> for ServedKind {
    fn from((kind, version): (FluxKind, SharedText)) -> ServedKind {
        ServedKind { kind, version }
    }
}

impl From<ServedKind> for (FluxKind, SharedText) {
    fn from(served: ServedKind) -> (FluxKind, SharedText) {
        (served.kind, served.version)
    }
}

/// The lists of served kinds handed out so far, each once: a fleet runs a few Flux releases,
/// so ten thousand clusters serve a handful of lists. Kept as one list a connection, the kinds
/// and their versions were ~1 KiB a cluster (the task's, the registry's and the connection's
/// copies); 10 MiB of 10,000 clusters.
static SERVED: Mutex<Vec<Arc<[ServedKind]>>> = Mutex::new(Vec::new());

/// Distinct lists kept for sharing: a fleet of servers that each serve their own (versions
/// nobody else serves) keeps its own lists beyond these, not a table that grows with them.
const SERVED_KEPT: usize = 64;

impl ServedKind {
    /// `served` as the one list every connection that serves the same shares.
    pub fn shared(served: Vec<ServedKind>) -> Arc<[ServedKind]> {
        let mut kept = SERVED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(same) = kept.iter().find(|k| ***k == *served) {
            return same.clone();
        }
        let list: Arc<[ServedKind]> = served.into();
        if kept.len() < SERVED_KEPT {
            kept.push(list.clone());
        }
        list
    }
}

/// How a cluster's kinds are listed: streamed (a watch with `sendInitialEvents=true`, as
/// client-go's informers list since Kubernetes 1.35), or paged lists then watches — and why.
/// Ordered: a cluster whose kinds were listed in different ways is said by the last of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lists {
    /// Each kind's objects arrive as the initial events of its watch, which stays open.
    Streaming,
    /// Paged lists then watches, as the config asks (`engine.lists = "paged"`).
    Paged,
    /// Paged: the server refused a streaming list (a Kubernetes before 1.27, or with its
    /// `WatchList` feature gate off).
    Refused,
    /// Paged: the server (or a proxy before it) sent the initial events without marking their
    /// end, or not in time.
    Unmarked,
}

impl Lists {
    /// `streaming` or `paged`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lists::Streaming => "streaming",
            Lists::Paged | Lists::Refused | Lists::Unmarked => "paged",
        }
    }

    /// Why a cluster is listed in pages when streaming was asked for.
    pub fn why(self) -> Option<&'static str> {
        match self {
            Lists::Streaming | Lists::Paged => None,
            Lists::Refused => Some("the server refused streaming lists"),
            Lists::Unmarked => Some("the server did not mark the end of the initial events"),
        }
    }
}

impl fmt::Display for Lists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.why() {
            Some(why) => write!(f, "{} ({why})", self.as_str()),
            None => f.write_str(self.as_str()),
        }
    }
}

/// From this many watch restarts in five minutes a live cluster is shown as flapping.
pub const FLAPPING: u16 = 3;

/// The window [`Connection::restarts`] counts in.
pub const RESTARTS_WINDOW: std::time::Duration = std::time::Duration::from_secs(300);

impl Connection {
    /// Live, with every watched kind visible: nothing about this cluster is missing.
    pub fn is_complete(&self) -> bool {
        self.phase == Phase::Live && self.forbidden.is_empty()
    }

    /// Live, but its watches keep breaking (each resumed at once): its news is current, and
    /// its server or the way to it is worth a look.
    pub fn is_flapping(&self) -> bool {
        self.phase == Phase::Live && self.restarts >= FLAPPING
    }

    /// "watch restarted N× in 5 min", once there has been a restart.
    pub fn restarts_said(&self) -> Option<String> {
        (self.restarts > 0).then(|| format!("watch restarted {}× in 5 min", self.restarts))
    }
}

impl Default for Connection {
    fn default() -> Connection {
        Connection::new(Phase::Connecting)
    }
}

/// How many clusters are in each phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseCounts([u32; Phase::ALL.len()]);

impl PhaseCounts {
    pub fn get(&self, phase: Phase) -> u32 {
        self.0[phase.index()]
    }

    pub(crate) fn add(&mut self, phase: Phase) {
        self.0[phase.index()] += 1;
    }

    pub(crate) fn sub(&mut self, phase: Phase) {
        self.0[phase.index()] = self.0[phase.index()].saturating_sub(1);
    }

    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// Clusters seen as they are ([`Phase::is_up`]).
    pub fn up(&self) -> u32 {
        self.get(Phase::Live) + self.get(Phase::Summary)
    }

    pub fn pending(&self) -> u32 {
        self.get(Phase::Connecting) + self.get(Phase::Syncing)
    }

    pub fn failed(&self) -> u32 {
        Phase::ALL
            .iter()
            .filter(|p| p.is_failure())
            .map(|p| self.get(*p))
            .sum()
    }

    /// Non-zero phases, worst first.
    pub fn iter(&self) -> impl Iterator<Item = (Phase, u32)> + '_ {
        Phase::ALL
            .iter()
            .map(|p| (*p, self.get(*p)))
            .filter(|(_, n)| *n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(versions: &[(FluxKind, &str)]) -> Vec<ServedKind> {
        versions
            .iter()
            .map(|(kind, version)| ServedKind {
                kind: *kind,
                version: (*version).into(),
            })
            .collect()
    }

    #[test]
    fn clusters_that_serve_the_same_kinds_share_one_list_and_others_keep_their_own() {
        let latest = [
            (FluxKind::Kustomization, "v1"),
            (FluxKind::HelmRelease, "v2"),
        ];
        let one = ServedKind::shared(served(&latest));
        let other = ServedKind::shared(served(&latest));
        assert!(Arc::ptr_eq(&one, &other));
        let older = ServedKind::shared(served(&[
            (FluxKind::Kustomization, "v1"),
            (FluxKind::HelmRelease, "v2beta1"),
        ]));
        assert!(!Arc::ptr_eq(&one, &older));
        assert_eq!(older[1].version, "v2beta1");
    }

    #[test]
    fn a_served_kind_is_written_as_a_pair() {
        let pair = &served(&[(FluxKind::HelmRelease, "v2")])[0];
        let json = serde_json::to_string(pair).unwrap();
        assert_eq!(json, r#"["HelmRelease","v2"]"#);
        let back: ServedKind = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, pair);
    }
}
