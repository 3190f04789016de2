//! What every request handler shares: the world, the counters, the timing and the connection a
//! request came on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::controller::Sender;
use super::tls::{ClientCerts, ClientIdentity};
use super::world::World;

/// Fleet-wide counters.
#[derive(Debug, Default)]
pub struct Stats {
    pub connections_total: AtomicU64,
    pub connections_open: AtomicU64,
    pub h2_connections_open: AtomicU64,
    pub http1_connections_open: AtomicU64,
    pub tls_failures: AtomicU64,
    /// Handshakes that resumed an earlier session (no certificate sent or verified).
    pub tls_resumed: AtomicU64,
    pub requests_total: AtomicU64,
    pub h2_requests_total: AtomicU64,
    pub h2_open_streams: AtomicU64,
    pub open_watches: AtomicU64,
    /// PATCH requests being answered now, and the most there ever were at once.
    pub patches_in_flight: AtomicU64,
    pub patches_in_flight_max: AtomicU64,
}

/// Counts one PATCH in flight while it lives.
pub struct PatchInFlight<'a>(&'a Stats);

impl PatchInFlight<'_> {
    pub fn start(stats: &Stats) -> PatchInFlight<'_> {
        let now = stats.patches_in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        stats
            .patches_in_flight_max
            .fetch_max(now, Ordering::Relaxed);
        PatchInFlight(stats)
    }
}

impl Drop for PatchInFlight<'_> {
    fn drop(&mut self) {
        self.0.patches_in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Stats {
    pub fn to_value(&self) -> Value {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        json!({
            "connectionsTotal": g(&self.connections_total),
            "connectionsOpen": g(&self.connections_open),
            "h2ConnectionsOpen": g(&self.h2_connections_open),
            "http1ConnectionsOpen": g(&self.http1_connections_open),
            "tlsFailures": g(&self.tls_failures),
            "tlsResumed": g(&self.tls_resumed),
            "requestsTotal": g(&self.requests_total),
            "h2RequestsTotal": g(&self.h2_requests_total),
            "h2OpenStreams": g(&self.h2_open_streams),
            "openWatches": g(&self.open_watches),
            "patchesInFlightMax": g(&self.patches_in_flight_max),
        })
    }
}

/// Timing knobs the request handlers need.
#[derive(Clone, Debug)]
pub struct Timing {
    pub bookmark_interval: Duration,
    /// How long a watch without `timeoutSeconds` lasts.
    pub default_watch_timeout: Duration,
}

/// Everything a request handler can reach.
pub struct State {
    pub world: Arc<World>,
    pub stats: Arc<Stats>,
    pub timing: Timing,
    pub controller: Sender,
    pub shutdown: CancellationToken,
    /// The client certificates issued, to know who a connection's certificate is.
    pub clients: Arc<ClientCerts>,
}

/// What the handlers know about the connection a request came on.
pub struct Conn {
    pub h2: bool,
    /// Clusters this connection has served, to keep their connection gauges.
    pub(super) clusters: Mutex<Vec<usize>>,
    /// Set when the listener is one cluster's own port.
    pub fixed_cluster: Option<usize>,
    /// Who the client certificate presented in the handshake authenticates, if any.
    pub client: Option<ClientIdentity>,
}

impl Conn {
    /// Records that this connection serves `cluster`; true the first time.
    pub fn serves(&self, cluster: usize) -> bool {
        let mut c = self.clusters.lock().unwrap_or_else(|p| p.into_inner());
        if c.contains(&cluster) {
            false
        } else {
            c.push(cluster);
            true
        }
    }
}
