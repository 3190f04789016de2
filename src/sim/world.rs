//! The simulated fleet in memory: clusters with their tokens, faults, served resources and stores.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use super::faults::Faults;
use super::resources::{Res, Served, served_resources};
use super::store::{Limits, Store};
use crate::clock::Clock;
use crate::facts::FluxRelease;
use crate::scenario::Cast;

pub use super::faults::Role;

/// Who a request is decided for: the role RBAC gives them here, and their name as the API
/// server's messages say it (the service account of the credentials, or the person they
/// impersonate).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub role: Role,
    pub user: String,
    pub groups: Vec<String>,
}

impl Caller {
    /// The credentials' own service account.
    pub fn of(role: Role) -> Caller {
        Caller {
            role,
            user: format!(
                "system:serviceaccount:flux-system:fluxfleet-{}",
                role.name()
            ),
            groups: vec!["system:authenticated".into()],
        }
    }
}

/// Request counters by verb, for `/sim/stats`.
#[derive(Debug, Default)]
pub struct Counters {
    pub get: AtomicU64,
    pub list: AtomicU64,
    pub watch: AtomicU64,
    /// Watches that were streaming lists (`sendInitialEvents=true`), counted in `watch` too.
    pub streamed: AtomicU64,
    pub patch: AtomicU64,
    pub other_write: AtomicU64,
    pub discovery: AtomicU64,
    pub rejected: AtomicU64,
    /// Connections currently open that served this cluster.
    pub connections: AtomicU64,
    /// Connections that ever served this cluster.
    pub connections_total: AtomicU64,
    /// Watch streams currently open.
    pub open_watches: AtomicU64,
    /// Requests being answered now (what the `throttle` fault's seats count).
    pub in_flight: AtomicU64,
    /// Requests turned away with 429 Too Many Requests (the `throttle` fault).
    pub throttled: AtomicU64,
    /// Connections sent GOAWAY (the `drain` and `handover` faults).
    pub goaways: AtomicU64,
    /// Connections refused (closed as the TLS handshake named a draining cluster).
    pub refused: AtomicU64,
}

impl Counters {
    pub fn mutating(&self) -> u64 {
        self.patch.load(Ordering::Relaxed) + self.other_write.load(Ordering::Relaxed)
    }
}

pub struct Cluster {
    pub index: usize,
    pub name: String,
    pub workspace: String,
    pub labels: BTreeMap<String, String>,
    pub management: bool,
    pub admin_token: String,
    pub viewer_token: String,
    pub flux: Option<FluxRelease>,
    /// The Flux Operator runs here: a FluxInstance and a FluxReport.
    pub operator: bool,
    pub served: Vec<Served>,
    pub faults: Mutex<Faults>,
    /// When the faults were last set (at start, or while running), told to the connections
    /// that serve the cluster: they act on `drain`, `handover` and `silent`.
    pub faults_set: watch::Sender<tokio::time::Instant>,
    /// The `silent` fault, read on every read and write of the cluster's connections.
    pub silent: AtomicBool,
    /// Cleared when an `expired-token` fault fires.
    pub tokens_valid: AtomicBool,
    store: Mutex<Store>,
    /// The store's resourceVersion, for watches to wait on.
    pub changed: watch::Sender<u64>,
    pub counters: Counters,
}

impl Cluster {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        name: String,
        workspace: String,
        labels: BTreeMap<String, String>,
        management: bool,
        tokens: (String, String),
        faults: Faults,
        limits: Limits,
        operator: bool,
    ) -> Cluster {
        let flux = if faults.no_flux {
            None
        } else {
            Some(faults.old_flux.unwrap_or(FluxRelease::LATEST))
        };
        let operator = operator && flux.is_some();
        // Distinct starting points make a resourceVersion from one cluster useless on another,
        // as it is between real clusters.
        let first_rv = 1000 + index as u64 * 7919;
        Cluster {
            index,
            served: served_resources(flux, management, operator),
            operator,
            name,
            workspace,
            labels,
            management,
            admin_token: tokens.0,
            viewer_token: tokens.1,
            flux,
            silent: AtomicBool::new(faults.silent),
            faults: Mutex::new(faults),
            faults_set: watch::Sender::new(tokio::time::Instant::now()),
            tokens_valid: AtomicBool::new(true),
            store: Mutex::new(Store::new(first_rv, limits)),
            changed: watch::Sender::new(first_rv),
            counters: Counters::default(),
        }
    }

    /// Locks the store. Never held across an await.
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wakes the watches after the store changed.
    pub fn notify(&self, rv: u64) {
        self.changed.send_replace(rv);
    }

    pub fn faults(&self) -> Faults {
        self.faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Changes the faults while running, and tells the cluster's connections.
    pub fn set_faults(&self, faults: Faults) {
        self.tokens_valid.store(
            faults.expired_token.is_none_or(|d| !d.is_zero()),
            Ordering::Relaxed,
        );
        self.silent.store(faults.silent, Ordering::Relaxed);
        *self.faults.lock().unwrap_or_else(|p| p.into_inner()) = faults;
        self.faults_set.send_replace(tokio::time::Instant::now());
    }

    /// Whether new connections to the cluster are refused (its server is shutting down).
    pub fn refuses(&self) -> bool {
        self.faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain
            .is_some()
    }

    pub fn served(&self, res: Res) -> Option<&Served> {
        self.served.iter().find(|s| s.res == res)
    }

    /// The role a bearer token grants on this cluster, if any.
    pub fn role_of(&self, token: &str) -> Option<Role> {
        if !self.tokens_valid.load(Ordering::Relaxed) {
            return None;
        }
        if constant_time_eq(token, &self.admin_token) {
            Some(Role::Admin)
        } else if constant_time_eq(token, &self.viewer_token) {
            Some(Role::Viewer)
        } else {
            None
        }
    }
}

fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Fresh random bearer tokens (from the OS, never from the fleet seed).
pub fn random_token() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 24];
    let rng = ring::rand::SystemRandom::new();
    if rng.fill(&mut bytes).is_err() {
        // The OS refused entropy; fall back to time and address noise rather than failing.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes[..16].copy_from_slice(&t.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// All clusters of the simulation, workload clusters first and the management cluster last.
pub struct World {
    pub clusters: Vec<Arc<Cluster>>,
    by_name: HashMap<String, usize>,
    /// Every admin and viewer token belongs to one cluster.
    by_token: HashMap<String, usize>,
    pub workspaces: Vec<String>,
    /// Token for `/sim/*`.
    pub sim_token: String,
    /// Reconciles, rollout steps and promotions asked for and not yet finished: zero when the
    /// fleet only changes by churn (tests wait for it).
    pub in_flight: std::sync::atomic::AtomicUsize,
    /// The story scenario's cast, when the fleet tells one (else the uniform fleet).
    pub story: Option<Cast>,
    /// The fleet's time, which the controllers write into statuses.
    pub clock: Clock,
}

impl World {
    pub fn new(clusters: Vec<Arc<Cluster>>, workspaces: Vec<String>) -> World {
        let by_name = clusters.iter().map(|c| (c.name.clone(), c.index)).collect();
        let by_token = clusters
            .iter()
            .flat_map(|c| {
                [
                    (c.admin_token.clone(), c.index),
                    (c.viewer_token.clone(), c.index),
                ]
            })
            .collect();
        World {
            clusters,
            by_name,
            by_token,
            workspaces,
            sim_token: random_token(),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            story: None,
            clock: Clock::new(None),
        }
    }

    /// The fleet's time is `clock`.
    pub fn with_clock(mut self, clock: Clock) -> World {
        self.clock = clock;
        self
    }

    /// The fleet tells the story `cast` plays.
    pub fn with_story(mut self, cast: Cast) -> World {
        self.story = Some(cast);
        self
    }

    pub fn cluster(&self, name: &str) -> Option<&Arc<Cluster>> {
        self.by_name.get(name).map(|&i| &self.clusters[i])
    }

    /// The cluster a bearer token belongs to (valid or not).
    pub fn cluster_of_token(&self, token: &str) -> Option<&Arc<Cluster>> {
        self.by_token.get(token).map(|&i| &self.clusters[i])
    }

    pub fn management(&self) -> Option<&Arc<Cluster>> {
        self.clusters.iter().rev().find(|c| c.management)
    }

    pub fn workloads(&self) -> impl Iterator<Item = &Arc<Cluster>> {
        self.clusters.iter().filter(|c| !c.management)
    }
}
