//! A running simulation, and what tests and the demo do to it while it runs: its truth and
//! stats, faults set and lifted, churn, client certificates, Cluster API clusters added and
//! removed, and shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::tls::{self, CertVersion, ClientIdentity};
use super::world::{Role, World};
use super::{Error, Faults, Files, TruthCluster, capi, controller, observe};

/// A running simulation.
pub struct Handle {
    pub addr: SocketAddr,
    pub files: Files,
    /// `https://host:port` of the shared listener.
    pub base_url: String,
    pub(super) world: Arc<World>,
    pub(super) state: Arc<super::state::State>,
    pub(super) shutdown: CancellationToken,
    pub(super) tasks: Vec<tokio::task::JoinHandle<()>>,
    pub(super) tls: tls::Tls,
    pub startup: Duration,
}

impl Handle {
    pub fn sim_token(&self) -> &str {
        &self.world.sim_token
    }

    /// What every cluster holds, as `/sim/truth` reports it.
    pub fn truth(&self) -> Vec<TruthCluster> {
        observe::truth(&self.world, None)
    }

    /// `/sim/stats` as JSON.
    pub fn stats(&self) -> serde_json::Value {
        observe::stats(&self.state)
    }

    /// Changes a cluster's faults while running (tests: expire its tokens, make it slow …).
    pub fn set_faults(&self, cluster: &str, faults: Faults) -> bool {
        let Some(c) = self.world.cluster(cluster) else {
            return false;
        };
        c.set_faults(faults);
        true
    }

    /// Issues a client certificate for the PKCS#8 key `key_pem` (RSA or ECDSA) that gives `role`
    /// on `cluster`, as PEM; X.509 v3 with extensions, or v1 without.
    pub fn client_certificate(
        &self,
        cluster: &str,
        role: Role,
        key_pem: &str,
        version: CertVersion,
    ) -> Result<String, Error> {
        let who = ClientIdentity {
            cluster: cluster.to_string(),
            role,
        };
        self.tls.issue(key_pem, who, version)
    }

    /// The CA's certificate, PEM: what `certificate-authority` files hold.
    pub fn ca_pem(&self) -> &str {
        &self.tls.ca_pem
    }

    /// Ends every fault that can end while running — slow answers, cut watches, 410 storms,
    /// server errors, expired tokens, forbidden kinds, draining, handed over and silent
    /// servers — and the churn with its rollouts.
    /// Unreachable clusters, clusters without Flux, old Flux releases, old Kubernetes and servers
    /// without streaming lists stay:
    /// those are what the clusters are, not something happening to them.
    pub fn calm(&self) {
        self.set_churn(0.0);
        for c in self.world.clusters.iter() {
            let f = c.faults();
            let lasting = Faults {
                unreachable: f.unreachable,
                no_flux: f.no_flux,
                old_flux: f.old_flux,
                old_kube: f.old_kube,
                no_watch_list: f.no_watch_list,
                strips_watch_list: f.strips_watch_list,
                old_etcd: f.old_etcd,
                ..Faults::default()
            };
            if f != lasting {
                self.set_faults(&c.name, lasting);
            }
        }
    }

    /// Writes every cluster's store has taken so far (objects and events).
    pub fn writes(&self) -> u64 {
        self.world
            .clusters
            .iter()
            .map(|c| c.store().resource_version())
            .sum()
    }

    /// Forgets a cluster's change history now: every watch gets 410 Gone and must relist.
    pub fn compact(&self, cluster: &str) -> bool {
        let Some(c) = self.world.cluster(cluster) else {
            return false;
        };
        let rv = {
            let mut s = c.store();
            s.compact();
            s.resource_version()
        };
        c.changed.send_modify(|v| *v = rv);
        true
    }

    /// Changes the churn rate while running; 0 stops churn (tests compare a still fleet).
    pub fn set_churn(&self, per_second: f64) {
        let _ = self
            .state
            .controller
            .send(controller::Msg::SetChurn(per_second.max(0.0)));
    }

    /// Promotes a workspace to the next rollout generation now, as a release pipeline would:
    /// its sources get the next revisions and their consumers reconcile (a few fail and stay
    /// stuck). False when there is no such workspace.
    pub fn promote(&self, workspace: &str) -> bool {
        let Some(i) = self.world.workspaces.iter().position(|w| w == workspace) else {
            return false;
        };
        // Counted from now: `quiet` is false until its reconciles are done.
        self.world.in_flight.fetch_add(1, Ordering::Relaxed);
        let sent = self
            .state
            .controller
            .send(controller::Msg::Promote(i))
            .is_ok();
        if !sent {
            self.world.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// Breaks (`ready` false: it fails the way its kind does) or fixes (`ready` true) one Flux
    /// object now, as a bad commit or its fix would; what depends on it follows after the
    /// dependency requeue interval. False when there is no such cluster.
    pub fn set_ready(
        &self,
        cluster: &str,
        kind: crate::facts::FluxKind,
        namespace: &str,
        name: &str,
        ready: bool,
    ) -> bool {
        let Some(i) = self.world.clusters.iter().position(|c| c.name == cluster) else {
            return false;
        };
        self.world.in_flight.fetch_add(1, Ordering::Relaxed);
        let sent = self
            .state
            .controller
            .send(controller::Msg::SetReady {
                cluster: i,
                key: (kind, namespace.to_string(), name.to_string()),
                ready,
            })
            .is_ok();
        if !sent {
            self.world.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// `host` — a registry, a Git host, a chart repository many clusters share — fails with
    /// `outage` on the `clusters` named, from now until [`Handle::outage_over`]: every source
    /// there whose URL names it fails as source-controller words it. False when the simulator
    /// has stopped; clusters not in the fleet are passed over.
    pub fn outage(&self, host: &str, outage: crate::Outage, clusters: &[String]) -> bool {
        let clusters: Vec<usize> = clusters
            .iter()
            .filter_map(|name| self.world.clusters.iter().position(|c| &c.name == name))
            .collect();
        self.send_outage(host, Some(outage), clusters)
    }

    /// The outage of `host` is over: its sources are again what they were before it.
    pub fn outage_over(&self, host: &str) -> bool {
        self.send_outage(host, None, Vec::new())
    }

    fn send_outage(&self, host: &str, outage: Option<crate::Outage>, clusters: Vec<usize>) -> bool {
        self.world.in_flight.fetch_add(1, Ordering::Relaxed);
        let sent = self
            .state
            .controller
            .send(controller::Msg::Outage {
                host: host.to_ascii_lowercase(),
                outage,
                clusters,
            })
            .is_ok();
        if !sent {
            self.world.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// No reconcile, rollout step or promotion is under way: only churn changes the fleet.
    pub fn quiet(&self) -> bool {
        self.world.in_flight.load(Ordering::Relaxed) == 0
    }

    /// The management cluster gets a new Cluster API cluster `to`: a copy of `from`'s Cluster
    /// and kubeconfig Secret (so it reaches the same simulated API server).
    pub fn copy_capi_cluster(&self, from: &str, to: &str) -> bool {
        capi::copy_cluster(&self.world, from, to)
    }

    /// The management cluster forgets the Cluster API cluster `name` and its Secret.
    pub fn remove_capi_cluster(&self, name: &str) -> bool {
        capi::remove_cluster(&self.world, name)
    }

    pub fn cluster_names(&self) -> Vec<String> {
        self.world.workloads().map(|c| c.name.clone()).collect()
    }

    /// Stops serving and waits for the server tasks to end.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
    }
}
