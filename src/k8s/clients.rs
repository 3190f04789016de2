//! The registry of every cluster's connection, shared by the cluster tasks (which register and
//! forget their connections), the [`super::KubeReader`], the [`super::KubeWriter`] and the bus's direct
//! reach: which clusters are connected, over which client, serving which API versions, and how
//! to reach a cluster for a hand-off.

use std::collections::HashMap;

use crate::fleet::notice::Identity;
use std::sync::{Arc, PoisonError, RwLock};

use super::wire::api::Http;
use crate::fleet::read::ReadError;
use crate::fleet::{ClusterKey, ObjectKey, ServedKind};
use crate::inventory::ClusterSpec;

/// The connection of every connected cluster, kept by the cluster tasks.
#[derive(Default)]
pub(super) struct Clients {
    connected: RwLock<HashMap<ClusterKey, Connected>>,
    /// Every cluster with a running task, connected or not: how to reach it, for hand-offs.
    pub(super) specs: RwLock<HashMap<ClusterKey, Arc<ClusterSpec>>>,
}

/// Held by a cluster's task while it runs; dropping it forgets the cluster's spec (unless a
/// newer task of the same cluster has registered its own meanwhile).
pub(super) struct Held {
    clients: Arc<Clients>,
    spec: Arc<ClusterSpec>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut specs = self
            .clients
            .specs
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let key = self.spec.key();
        if specs.get(&key).is_some_and(|s| Arc::ptr_eq(s, &self.spec)) {
            specs.remove(&key);
        }
    }
}

#[derive(Clone)]
pub(super) struct Connected {
    pub(super) http: Arc<Http>,
    /// The version served per kind, from discovery: the list the cluster's connection state
    /// holds too.
    versions: Arc<[ServedKind]>,
    /// Who the cluster authenticates this connection's credentials as, once asked (by the
    /// writer only: the review is a POST).
    pub(super) identity: Arc<tokio::sync::OnceCell<Option<Arc<Identity>>>>,
}

impl Connected {
    /// A connection no task registered (one made for a read on demand).
    pub(super) fn unregistered(http: Http, served: Arc<[ServedKind]>) -> Connected {
        Connected {
            http: Arc::new(http),
            versions: served,
            identity: Arc::default(),
        }
    }

    /// This connection with every request sent as `who`, and an identity of its own (the
    /// credentials' review, cached for the connection, is not theirs).
    pub(super) fn sent_as(self, who: Arc<crate::source::Impersonation>) -> Connected {
        Connected {
            http: Arc::new(super::wire::api::impersonating(&self.http, who)),
            identity: Arc::default(),
            ..self
        }
    }

    /// `/apis/<group>/<version>/namespaces/<ns>/<plural>/<name>` at the version this cluster serves.
    pub(super) fn object_path(&self, key: &ObjectKey) -> Result<String, ReadError> {
        let Some(ServedKind { version, .. }) = self.versions.iter().find(|s| s.kind == key.kind)
        else {
            return Err(ReadError::NotServed(key.kind.to_string()));
        };
        Ok(format!(
            "/apis/{}/{version}/namespaces/{}/{}/{}",
            key.kind.group(),
            key.namespace,
            key.kind.plural(),
            key.name
        ))
    }
}

/// Held while a cluster is connected; dropping it forgets the connection.
pub(super) struct Registration {
    clients: Arc<Clients>,
    key: ClusterKey,
}

impl Clients {
    pub(super) fn register(
        self: &Arc<Self>,
        key: ClusterKey,
        http: Arc<Http>,
        versions: Arc<[ServedKind]>,
    ) -> Registration {
        self.connected
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                key.clone(),
                Connected {
                    http,
                    versions,
                    identity: Arc::default(),
                },
            );
        Registration {
            clients: self.clone(),
            key,
        }
    }

    /// Keeps `spec` reachable for hand-offs while the returned guard lives.
    pub(super) fn hold(self: &Arc<Self>, spec: &Arc<ClusterSpec>) -> Held {
        self.specs
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(spec.key(), spec.clone());
        Held {
            clients: self.clone(),
            spec: spec.clone(),
        }
    }

    pub(super) fn get(&self, key: &ClusterKey) -> Option<Connected> {
        self.connected
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.clients
            .connected
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

pub(super) const NOT_CONNECTED: &str =
    "the cluster is not connected right now (its state is in the workspace view)";
