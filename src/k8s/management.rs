//! Reading a management cluster: its Cluster API `Cluster`s (v1beta2, else v1beta1), the
//! kubeconfig Secret of each provisioned one, and Kommander workspace names when Kommander runs
//! there. One connection, opened for the occasion with the fleet's own transport and credentials.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::clients::Clients;
use super::task::connect::{TaskShared, client};
use super::wire::api::{self, Http, Reason, Trouble};
use super::wire::transport::Protocol;
use crate::config;
use crate::inventory::ClusterSpec;
use crate::inventory::capi::{self, Found};
use crate::json::At;

/// What a management cluster holds.
pub struct Holdings {
    pub found: Vec<Found>,
    /// Kommander: workspace namespace → display name.
    pub kommander: BTreeMap<String, String>,
}

/// Why a management cluster's clusters could not be listed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManagementError {
    /// No complete answer in time: tried again at the next look.
    #[error("no complete answer within {}", crate::units::format_duration(*.0))]
    TimedOut(std::time::Duration),
    /// It is not a management cluster: nothing to follow.
    #[error("Cluster API is not installed (no cluster.x-k8s.io API group)")]
    NoClusterApi,
    /// RBAC: its user may not list them.
    #[error("forbidden to list {0}")]
    Forbidden(String),
    /// It could not be connected to, or answered with an error: tried again at the next look.
    #[error("{0}")]
    Unreachable(String),
}

/// Lists `management`'s clusters. Fails as a whole only when the management cluster itself
/// cannot be read; a cluster whose Secret is missing or broken carries its own error.
pub async fn discover(
    management: &ClusterSpec,
    settings: &config::EngineSection,
) -> Result<Holdings, ManagementError> {
    let within = settings.connect_timeout * 4 + settings.exec_timeout;
    match tokio::time::timeout(within, read(management, settings)).await {
        Ok(result) => result,
        Err(_) => Err(ManagementError::TimedOut(within)),
    }
}

async fn read(
    management: &ClusterSpec,
    settings: &config::EngineSection,
) -> Result<Holdings, ManagementError> {
    let (events, _) = mpsc::channel(1);
    let sink = crate::source::Sink::new(crate::fleet::SourceId::default(), events);
    let shared = Arc::new(TaskShared::new(
        settings,
        sink,
        Arc::new(Clients::default()),
        1,
        false,
    ));
    // HTTP/2 first; a server that speaks only HTTP/1.1 is asked again over that.
    let mut protocol = Protocol::Http2;
    let (http, version) = loop {
        let (http, _) = client(management, &shared, protocol)
            .await
            .map_err(|f| ManagementError::Unreachable(f.message))?;
        match capi_version(&http).await {
            Ok(version) => break (http, version),
            Err(Trouble::NotHttp2) if protocol == Protocol::Http2 => protocol = Protocol::Http1,
            Err(t) if t.reason() == Some(Reason::NotFound) => {
                return Err(ManagementError::NoClusterApi);
            }
            Err(t) => return Err(ManagementError::Unreachable(t.into_failure().message)),
        }
    };
    let items = list(&http, &format!("/apis/cluster.x-k8s.io/{version}/clusters")).await?;
    let mut clusters: Vec<capi::CapiCluster> = items.iter().filter_map(capi::cluster).collect();
    // Kommander: which Secret holds each cluster's kubeconfig, and the attached clusters that
    // have no Cluster API Cluster.
    let kommander_clusters: Vec<capi::KommanderCluster> = list(
        &http,
        "/apis/kommander.mesosphere.io/v1beta1/kommanderclusters",
    )
    .await
    .unwrap_or_default()
    .iter()
    .filter_map(capi::kommander_cluster)
    .collect();
    let mut secrets: BTreeMap<(String, String), String> = BTreeMap::new();
    for k in &kommander_clusters {
        secrets.insert(
            (k.namespace.clone(), k.name.clone()),
            k.kubeconfig_secret.clone(),
        );
        if !clusters
            .iter()
            .any(|c| c.namespace == k.namespace && c.name == k.name)
        {
            clusters.push(k.as_cluster());
        }
    }
    let found = futures::stream::iter(clusters)
        .map(|cluster| {
            let http = http.clone();
            let name = secrets
                .get(&(cluster.namespace.clone(), cluster.name.clone()))
                .cloned()
                .unwrap_or_else(|| format!("{}-kubeconfig", cluster.name));
            async move {
                let kubeconfig = if cluster.lifecycle.connectable() {
                    Some(secret(&http, &cluster.namespace, &name).await)
                } else {
                    None
                };
                Found {
                    cluster,
                    kubeconfig,
                }
            }
        })
        .buffered(16)
        .collect()
        .await;
    Ok(Holdings {
        found,
        kommander: kommander(&http).await,
    })
}

/// v1beta2 when served (CAPI ≥ 1.11), else v1beta1.
async fn capi_version(http: &Http) -> Result<&'static str, Trouble> {
    let (group, _) = api::get_json::<Value>(http, "/apis/cluster.x-k8s.io").await?;
    let served = |v: &str| {
        group["versions"]
            .as_array()
            .is_some_and(|vs| vs.iter().any(|x| x["version"] == v))
    };
    if served("v1beta2") {
        Ok("v1beta2")
    } else if served("v1beta1") {
        Ok("v1beta1")
    } else {
        Err(Trouble::Failed(super::wire::errors::Failure::new(
            crate::fleet::Phase::ServerError,
            "Cluster API serves neither v1beta2 nor v1beta1 Clusters",
        )))
    }
}

/// Every item of a list, page by page.
async fn list(http: &Http, path: &str) -> Result<Vec<Value>, ManagementError> {
    let mut items = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let page = match &next {
            None => format!("{path}?limit=500"),
            Some(token) => format!("{path}?limit=500&continue={token}"),
        };
        let (mut body, _) =
            api::get_json::<Value>(http, &page)
                .await
                .map_err(|t: Trouble| match t.reason() {
                    Some(Reason::Forbidden) => ManagementError::Forbidden(path.to_string()),
                    _ => ManagementError::Unreachable(t.into_failure().message),
                })?;
        if let Some(Value::Array(page_items)) = body.get_mut("items").map(Value::take) {
            items.extend(page_items);
        }
        next = body
            .at("/metadata/continue")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        if next.is_none() {
            return Ok(items);
        }
    }
}

/// The kubeconfig Secret `name` (`<cluster>-kubeconfig`, or Kommander's reference) in
/// `namespace`.
async fn secret(
    http: &Http,
    namespace: &str,
    name: &str,
) -> Result<kube::config::Kubeconfig, capi::SecretError> {
    let path = format!("/api/v1/namespaces/{namespace}/secrets/{name}");
    match api::get_json::<Value>(http, &path).await {
        Ok((secret, _)) => capi::kubeconfig(&secret),
        Err(t) => Err(match t.reason() {
            Some(Reason::NotFound) => capi::SecretError::Missing(name.to_string()),
            Some(Reason::Forbidden) => capi::SecretError::Forbidden(name.to_string()),
            _ => capi::SecretError::Unread {
                name: name.to_string(),
                why: t.into_failure().message,
            },
        }),
    }
}

/// Kommander's workspace namespaces and names; empty when Kommander is not there.
async fn kommander(http: &Http) -> BTreeMap<String, String> {
    let path = "/apis/workspaces.kommander.mesosphere.io/v1alpha1/workspaces";
    match list(http, path).await {
        Ok(items) => items
            .iter()
            .filter_map(capi::kommander_workspace)
            .map(|w| (w.namespace, w.name))
            .collect(),
        Err(_) => BTreeMap::new(),
    }
}

/// A management cluster to read: a context of the fleet, the label naming workspaces, and how
/// many levels of management clusters below it to follow.
#[derive(Clone, Debug)]
pub struct Management {
    pub context: String,
    pub workspace_label: Option<String>,
    /// 1: its clusters only; 2: also the clusters of those that are management clusters …
    pub depth: usize,
}

/// Adds every cluster of every management cluster to `inventory`, following management clusters
/// found below down to each one's depth. A management cluster that cannot be read is one
/// problem; a cluster that leads back up its own path (a cycle) is reported and not followed.
pub async fn extend(
    inventory: &mut crate::inventory::Inventory,
    settings: &config::EngineSection,
    managements: &[Management],
) {
    use crate::inventory::Problem;
    for m in managements {
        let Some(top) = inventory
            .clusters
            .iter()
            .find(|c| c.context == m.context || c.name == m.context)
            .cloned()
        else {
            inventory.problems.push(Problem {
                source: "--management".into(),
                context: Some(m.context.clone()),
                message: "no such context in the kubeconfigs".into(),
            });
            continue;
        };
        let mut queue = std::collections::VecDeque::from([(
            top.clone(),
            vec![top.name.clone()],
            vec![top.server.clone()],
            m.depth.max(1),
        )]);
        while let Some((spec, path, servers, depth)) = queue.pop_front() {
            let holdings = match discover(&spec, settings).await {
                Ok(h) => h,
                Err(e) if path.len() == 1 => {
                    inventory.problems.push(Problem {
                        source: format!("management cluster {}", spec.name),
                        context: Some(spec.context.clone()),
                        message: e.to_string(),
                    });
                    continue;
                }
                // A cluster below that is not a management cluster (or not reachable now: the
                // engine will say so): nothing to follow.
                Err(_) => continue,
            };
            let mut found = Vec::with_capacity(holdings.found.len());
            for f in holdings.found {
                let server = match &f.kubeconfig {
                    Some(Ok(k)) => capi::server_of(k),
                    _ => None,
                };
                if server.as_ref().is_some_and(|s| servers.contains(s))
                    || path.contains(&f.cluster.name)
                {
                    inventory.problems.push(Problem {
                        source: format!("management cluster {}", spec.name),
                        context: Some(f.cluster.name.clone()),
                        message: format!(
                            "a cycle: {} ▸ {} leads back up the path; not followed",
                            path.join(" ▸ "),
                            f.cluster.name
                        ),
                    });
                    continue;
                }
                found.push(f);
            }
            let before = inventory.clusters.len();
            capi::add(
                inventory,
                &path,
                found,
                &holdings.kommander,
                m.workspace_label.as_deref(),
                &Default::default(),
            );
            if depth > 1 {
                for added in &inventory.clusters[before..] {
                    let connectable = added
                        .discovered
                        .as_ref()
                        .is_some_and(|d| d.lifecycle.connectable());
                    if connectable {
                        let mut below = path.clone();
                        below.push(added.name.clone());
                        let mut seen = servers.clone();
                        seen.push(added.server.clone());
                        queue.push_back((added.clone(), below, seen, depth - 1));
                    }
                }
            }
        }
    }
}
