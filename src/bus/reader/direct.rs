//! What a reader of the bus does on a cluster itself — events, YAML, kubeconfigs for plugins,
//! actions — where the user's own kubeconfigs reach it (by its API server's URL, else by its
//! name), over a connection made when first needed. Never through the bus.

use crate::fleet::SharedText;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use futures::future::BoxFuture;

use super::super::Options;
use super::super::wire::ClusterState;
use crate::fleet::read::ReadError;
use crate::fleet::verbs::{Outcome, Step};
use crate::fleet::workload::Evidence;
use crate::fleet::{ClusterKey, ObjectEvent, ObjectKey};
use crate::k8s::direct::Direct;

/// Each cluster's API server, by name: how a cluster of the bus is found among the user's.
pub(super) type Servers = Arc<RwLock<HashMap<String, String>>>;

/// Remembers a cluster's server, for a reader that reaches the user's own clusters directly
/// (one that does not finds none: 100,000 servers kept for nothing were 12 MiB).
pub(super) fn remember(servers: &Servers, direct: Option<&Arc<Direct>>, state: &ClusterState) {
    if direct.is_none() {
        return;
    }
    servers
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(state.name.clone(), state.server.clone());
}

/// The user's own cluster behind a cluster of the bus: the one at its server's URL, else of its
/// name.
fn spec_of(
    direct: Option<&Arc<Direct>>,
    servers: &Servers,
    cluster: &ClusterKey,
) -> Result<crate::inventory::ClusterSpec, ReadError> {
    let name = cluster.as_str().strip_prefix("nats#").unwrap_or_default();
    let server = servers
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
        .cloned()
        .unwrap_or_default();
    direct
        .and_then(|d| d.spec(&server, name).cloned())
        .ok_or_else(not_on_the_bus)
}

fn not_on_the_bus() -> ReadError {
    ReadError::NoKubeconfig(NOT_ON_THE_BUS.into())
}

/// Why no action reaches a cluster of the bus (see [`crate::fleet::ClusterInfo::unreachable`]):
/// none of the user's kubeconfigs reaches it, by its server's URL or its name.
pub(super) fn unreachable(
    direct: Option<&Arc<Direct>>,
    state: &ClusterState,
) -> Option<SharedText> {
    let reached = direct.is_some_and(|d| d.spec(&state.server, &state.name).is_some());
    // One copy for every cluster it says it of: 100,000 copies were 23 MiB.
    static SHARED: std::sync::LazyLock<SharedText> =
        std::sync::LazyLock::new(|| crate::fleet::SharedText::from(NOT_ON_THE_BUS));
    (!reached).then(|| SHARED.clone())
}

/// The user's own cluster behind a cluster of the bus, connected.
async fn reach(
    direct: Option<&Arc<Direct>>,
    servers: &Servers,
    cluster: &ClusterKey,
) -> Result<ClusterKey, ReadError> {
    let spec = spec_of(direct, servers, cluster)?;
    match direct {
        Some(d) => d.connect(&spec).await,
        None => Err(not_on_the_bus()),
    }
}

/// What a reader of the bus reads of an object: from the cluster itself, where the user's own
/// kubeconfigs reach it; nothing otherwise (collectors publish summaries only).
pub(super) struct FromBus {
    pub(super) direct: Option<Arc<Direct>>,
    pub(super) servers: Servers,
    pub(super) options: Options,
    /// Where clusters the user opens are said, when the reader summarizes.
    pub(super) opens: Option<tokio::sync::mpsc::Sender<ClusterKey>>,
}

/// Why events, YAML, kubeconfigs and actions are not there.
const NOT_ON_THE_BUS: &str = "this cluster's state comes from collectors through NATS, which \
    publish summaries only, and none of your kubeconfigs reaches it (by its server's URL or its \
    name): its events, its YAML and actions are on the cluster itself";

impl crate::source::Read for FromBus {
    fn events<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        objects: &'a [ObjectKey],
    ) -> BoxFuture<'a, Result<Vec<ObjectEvent>, ReadError>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or_else(not_on_the_bus)?;
            direct.reader().events(&key, objects).await
        })
    }

    fn object<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<serde_json::Value, ReadError>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or_else(not_on_the_bus)?;
            direct.reader().object(&key, object).await
        })
    }

    fn workloads<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<Evidence, ReadError>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or_else(not_on_the_bus)?;
            direct.reader().workloads(&key, object).await
        })
    }

    fn trace<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        asked: &'a crate::fleet::trace::Asked,
    ) -> BoxFuture<'a, Result<crate::fleet::trace::ClusterChain, ReadError>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or_else(not_on_the_bus)?;
            direct.reader().trace(&key, asked).await
        })
    }

    fn kind_events<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        namespace: &'a str,
        kind: crate::fleet::FluxKind,
    ) -> BoxFuture<'a, Result<Vec<ObjectEvent>, ReadError>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or_else(not_on_the_bus)?;
            direct.reader().kind_events(&key, namespace, kind).await
        })
    }

    fn tree<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        root: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<crate::fleet::tree::ClusterTree, ReadError>> {
        Box::pin(async move {
            let key = reach(self.direct.as_ref(), &self.servers, cluster).await?;
            let direct = self.direct.as_ref().ok_or_else(not_on_the_bus)?;
            direct.reader().tree(&key, root).await
        })
    }

    fn kubeconfig(&self, cluster: &ClusterKey) -> Result<kube::config::Kubeconfig, ReadError> {
        spec_of(self.direct.as_ref(), &self.servers, cluster)
            .map(|spec| spec.kubeconfig.kubeconfig())
    }

    fn history(
        &self,
        since: jiff::Timestamp,
    ) -> BoxFuture<'_, Result<Vec<crate::fleet::history::RecordedChange>, ReadError>> {
        Box::pin(async move {
            super::super::history::since(&self.options, since, None)
                .await
                .map_err(|e| ReadError::Unreachable(e.to_string()))
        })
    }

    /// A summarized cluster opened: its objects are read from the bus and followed. An opening
    /// that finds the reader busy with others is dropped (the user opens it again).
    fn open(&self, cluster: &ClusterKey) {
        if let Some(opens) = &self.opens {
            let _ = opens.try_send(cluster.clone());
        }
    }
}

/// Actions on a cluster of the bus: sent to the cluster itself with the user's own kubeconfig
/// and the session's write grant — never through the bus.
pub(super) struct ToCluster {
    pub(super) direct: Arc<Direct>,
    pub(super) writer: crate::k8s::KubeWriter,
    pub(super) servers: Servers,
}

impl crate::source::Write for ToCluster {
    fn acting_as(
        &self,
        who: &Arc<crate::source::Impersonation>,
    ) -> Option<Arc<dyn crate::source::Write>> {
        Some(Arc::new(ToCluster {
            direct: self.direct.clone(),
            writer: self.writer.acting_as(who),
            servers: self.servers.clone(),
        }))
    }

    fn apply<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        token: &'a str,
        wait: Option<Duration>,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match reach(Some(&self.direct), &self.servers, cluster).await {
                Ok(key) => self.writer.apply(&key, steps, token, wait).await,
                Err(why) => Outcome::Refused(why.to_string()),
            }
        })
    }

    fn identity<'a>(
        &'a self,
        cluster: &'a ClusterKey,
    ) -> BoxFuture<'a, Option<Arc<crate::fleet::notice::Identity>>> {
        Box::pin(async move {
            let key = reach(Some(&self.direct), &self.servers, cluster)
                .await
                .ok()?;
            crate::source::Write::identity(&self.writer, &key).await
        })
    }

    fn apply_noting<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        waiting: (&'a str, Option<Duration>),
        notice: &'a crate::fleet::notice::Notice,
    ) -> BoxFuture<
        'a,
        (
            Outcome,
            Option<Result<(), crate::fleet::notice::NotRecorded>>,
        ),
    > {
        Box::pin(async move {
            match reach(Some(&self.direct), &self.servers, cluster).await {
                Ok(key) => {
                    self.writer
                        .apply_noting(&key, steps, waiting, Some(notice))
                        .await
                }
                Err(why) => (Outcome::Refused(why.to_string()), None),
            }
        })
    }

    fn may<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
        verb: &'static str,
    ) -> BoxFuture<'a, crate::fleet::verbs::Access> {
        Box::pin(async move {
            match reach(Some(&self.direct), &self.servers, cluster).await {
                Ok(key) => self.writer.may(&key, object, verb).await,
                Err(why) => crate::fleet::verbs::Access::Unanswered(why.to_string()),
            }
        })
    }

    fn handled<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
        token: &'a str,
        within: Duration,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match reach(Some(&self.direct), &self.servers, cluster).await {
                Ok(key) => {
                    crate::source::Write::handled(&self.writer, &key, object, token, within).await
                }
                Err(why) => Outcome::Refused(why.to_string()),
            }
        })
    }
}
