//! One-off reads from a cluster the engine is connected to: an object's events and its YAML. They
//! go over the connection the watches use (no second connection, no new credentials) and only
//! while that cluster is connected. The [`KubeReader`] can only read: it has no operation that
//! changes anything on a cluster.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::clients::{Clients, Connected, NOT_CONNECTED};
use super::wire::api;
use crate::fleet::workload::{Evidence, ReadError};
use crate::fleet::{ClusterKey, ObjectEvent, ObjectKey};

/// Reads from connected clusters: the kubeconfig source's [`crate::source::Read`], which
/// `session::Reader` routes each cluster's reads to. Cheap to clone; read-only by construction.
#[derive(Clone)]
pub struct KubeReader {
    pub(super) clients: Arc<Clients>,
    pub(super) timeout: Duration,
    /// What the cluster tasks share (None for a session's direct reach, which connects by
    /// itself): a cluster not connected now is reached through it over a connection of its own
    /// for one read (a trace, a tree, a namespace's events).
    pub(super) shared: Option<Arc<super::task::connect::TaskShared>>,
    /// The engine summarizes: a summarized cluster is opened to be read as when the user opens
    /// it.
    pub(super) summary: bool,
}

impl KubeReader {
    /// The events whose involved object is one of `keys`, newest first: an object and what
    /// `flux events --for` shows beside it (`fleet::told_with`), one list each, at once. Only
    /// the first (the object's own) must be read.
    pub async fn events(
        &self,
        cluster: &ClusterKey,
        keys: &[ObjectKey],
    ) -> Result<Vec<ObjectEvent>, ReadError> {
        let connected = self.reached(cluster).await?;
        let lists = keys.iter().map(|key| {
            let selector = format!(
                "involvedObject.kind={},involvedObject.name={},involvedObject.namespace={}",
                key.kind, key.name, key.namespace
            );
            let path = format!(
                "/api/v1/namespaces/{}/events?fieldSelector={}",
                key.namespace,
                crate::fleet::read::query_escape(&selector)
            );
            let connected = &connected;
            async move { self.get(connected, &path).await }
        });
        // The object's own must be read; a source's may not be (its namespace forbidden to a
        // team's credentials): then the object's are shown without them.
        let mut lists = futures::future::join_all(lists).await.into_iter();
        let mut events = match lists.next() {
            Some(own) => ObjectEvent::from_list(&own?),
            None => Vec::new(),
        };
        events.extend(lists.flatten().flat_map(|l| ObjectEvent::from_list(&l)));
        crate::fleet::newest_first(&mut events);
        Ok(events)
    }

    /// The events of every `kind` object in `namespace`, newest first: one list (fleet-wide
    /// drift reads its Kustomizations' so), over a connection of its own where the cluster is
    /// not connected now.
    pub async fn kind_events(
        &self,
        cluster: &ClusterKey,
        namespace: &str,
        kind: crate::fleet::FluxKind,
    ) -> Result<Vec<ObjectEvent>, ReadError> {
        let connected = self.for_one_read(cluster).await?;
        let selector = format!("involvedObject.kind={kind}");
        let path = format!(
            "/api/v1/namespaces/{namespace}/events?fieldSelector={}",
            crate::fleet::read::query_escape(&selector)
        );
        Ok(ObjectEvent::from_list(&self.get(&connected, &path).await?))
    }

    /// The object as the cluster has it now (a summarized cluster opened first, as for
    /// [`KubeReader::workloads`]).
    pub async fn object(&self, cluster: &ClusterKey, key: &ObjectKey) -> Result<Value, ReadError> {
        let connected = self.reached(cluster).await?;
        let path = connected.object_path(key)?;
        self.get(&connected, &path).await
    }

    /// What broke inside: the workloads of the Kustomization or HelmRelease `key`, their pods,
    /// Warning events and failing containers' log tails (see [`super::workloads`]). A cluster
    /// the engine only summarizes is opened first (watched for a while, as when the user opens
    /// it), and read once connected.
    pub async fn workloads(
        &self,
        cluster: &ClusterKey,
        key: &ObjectKey,
    ) -> Result<Evidence, ReadError> {
        let connected = self.reached(cluster).await?;
        let path = connected.object_path(key)?;
        super::workloads::read(&connected.http, &path, key, self.timeout).await
    }

    /// Where `asked` on `cluster` comes from: its owners and the Flux objects that applied it
    /// (see [`super::trace`]). A summarized cluster is not opened (a trace asks every cluster,
    /// and opening more than `engine.warm_clusters` closes the first again): it is reached over
    /// a connection of its own, made within a connecting slot as its look is, and closed after.
    pub async fn trace(
        &self,
        cluster: &ClusterKey,
        asked: &crate::fleet::trace::Asked,
    ) -> Result<crate::fleet::trace::ClusterChain, ReadError> {
        let connected = self.for_one_read(cluster).await?;
        super::trace::read(&connected, asked, self.timeout).await
    }

    /// `root`'s tree on `cluster` (see [`super::trace::tree`]), a summarized cluster reached
    /// as for [`KubeReader::trace`].
    pub async fn tree(
        &self,
        cluster: &ClusterKey,
        root: &ObjectKey,
    ) -> Result<crate::fleet::tree::ClusterTree, ReadError> {
        let connected = self.for_one_read(cluster).await?;
        super::trace::tree(&connected, root, self.timeout).await
    }

    /// The connection of `cluster`, or where it is not connected now (summarized, or its list
    /// done) one of its own for one read (not registered: closed when dropped).
    async fn for_one_read(&self, cluster: &ClusterKey) -> Result<Connected, ReadError> {
        let shared = match (self.clients.get(cluster), &self.shared) {
            (Some(connected), _) => return Ok(connected),
            (None, Some(shared)) => shared,
            (None, None) => return Err(ReadError::Unreachable(NOT_CONNECTED.into())),
        };
        let spec = self
            .clients
            .specs
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(cluster)
            .cloned()
            .ok_or(ReadError::Left)?;
        let _slot = shared
            .connecting
            .acquire()
            .await
            .map_err(|_| ReadError::Unreachable("the engine is shutting down".into()))?;
        let (http, served) = super::task::connect::on_demand(&spec, shared, self.timeout).await?;
        Ok(Connected::unregistered(http, served))
    }

    /// The connection of `cluster`; a cluster the engine only summarizes is opened first
    /// (watched for a while, as when the user opens it) and its connection waited for.
    async fn reached(&self, cluster: &ClusterKey) -> Result<Connected, ReadError> {
        match (self.clients.get(cluster), &self.shared) {
            (Some(connected), _) => Ok(connected),
            (None, Some(shared)) if self.summary => {
                shared.warm.open(cluster);
                self.connected_within(cluster, self.timeout).await
            }
            (None, _) => Err(ReadError::Unreachable(NOT_CONNECTED.into())),
        }
    }

    /// The connection of `cluster` once its task has made it, waiting at most `within`.
    async fn connected_within(
        &self,
        cluster: &ClusterKey,
        within: Duration,
    ) -> Result<Connected, ReadError> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(connected) = self.clients.get(cluster) {
                return Ok(connected);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ReadError::Unreachable(format!(
                    "the cluster is summarized and did not connect within {}",
                    crate::units::format_duration(within)
                )));
            }
            // Polling the registry: the task registers its connection when discovery is done.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The kubeconfig that reaches `cluster`: its one context, cluster and user, as the
    /// inventory read them (for a cluster found on a management cluster, its Secret's).
    pub fn kubeconfig(&self, cluster: &ClusterKey) -> Result<kube::config::Kubeconfig, ReadError> {
        self.clients
            .specs
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(cluster)
            .map(|spec| spec.kubeconfig.kubeconfig())
            .ok_or(ReadError::Left)
    }

    async fn get(&self, connected: &Connected, path: &str) -> Result<Value, ReadError> {
        match tokio::time::timeout(self.timeout, api::get_json(&connected.http, path)).await {
            Err(_) => Err(ReadError::TimedOut(self.timeout)),
            Ok(Ok((value, _))) => Ok(value),
            Ok(Err(trouble)) => Err(super::workloads::error_of(trouble)),
        }
    }
}

impl crate::source::Read for KubeReader {
    fn events<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        objects: &'a [ObjectKey],
    ) -> futures::future::BoxFuture<'a, Result<Vec<ObjectEvent>, ReadError>> {
        Box::pin(KubeReader::events(self, cluster, objects))
    }

    fn object<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> futures::future::BoxFuture<'a, Result<Value, ReadError>> {
        Box::pin(KubeReader::object(self, cluster, object))
    }

    fn kubeconfig(&self, cluster: &ClusterKey) -> Result<kube::config::Kubeconfig, ReadError> {
        KubeReader::kubeconfig(self, cluster)
    }

    fn trace<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        asked: &'a crate::fleet::trace::Asked,
    ) -> futures::future::BoxFuture<'a, Result<crate::fleet::trace::ClusterChain, ReadError>> {
        Box::pin(KubeReader::trace(self, cluster, asked))
    }

    fn tree<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        root: &'a ObjectKey,
    ) -> futures::future::BoxFuture<'a, Result<crate::fleet::tree::ClusterTree, ReadError>> {
        Box::pin(KubeReader::tree(self, cluster, root))
    }

    fn kind_events<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        namespace: &'a str,
        kind: crate::fleet::FluxKind,
    ) -> futures::future::BoxFuture<'a, Result<Vec<ObjectEvent>, ReadError>> {
        Box::pin(KubeReader::kind_events(self, cluster, namespace, kind))
    }

    fn workloads<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> futures::future::BoxFuture<'a, Result<Evidence, ReadError>> {
        Box::pin(KubeReader::workloads(self, cluster, object))
    }

    fn open(&self, cluster: &ClusterKey) {
        if let Some(shared) = self.shared.as_ref().filter(|_| self.summary) {
            shared.warm.open(cluster);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn yaml_has_no_managed_fields() {
        let object = json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "managedFields": [{"manager": "kubectl"}]},
            "spec": {"interval": "10m"},
        });
        let yaml = crate::source::as_yaml(object);
        assert!(!yaml.contains("managedFields"), "{yaml}");
        assert!(yaml.contains("kind: Kustomization"), "{yaml}");
        assert!(yaml.contains("interval: 10m"), "{yaml}");
        assert!(
            yaml.find("apiVersion") < yaml.find("spec"),
            "apiVersion first: {yaml}"
        );
    }

    #[test]
    fn field_selectors_are_escaped() {
        assert_eq!(
            crate::fleet::read::query_escape("involvedObject.kind=Kustomization,x=a b"),
            "involvedObject.kind%3DKustomization%2Cx%3Da%20b"
        );
    }
}
