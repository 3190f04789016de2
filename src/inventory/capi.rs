//! Reading a management cluster's objects (FACTS §4): Cluster API `Cluster`s (v1beta2 or
//! v1beta1) with their lifecycle, their `<name>-kubeconfig` Secrets, and Kommander `Workspace` /
//! `KommanderCluster` objects. Pure: the objects come in as JSON, fleet clusters go out. A
//! Secret's contents never appear in an error.

pub use super::spec::Lifecycle;
use std::collections::BTreeMap;

use crate::json::At;
use base64::Engine;
use kube::config::Kubeconfig;
use serde::Serialize;
use serde_json::Value;

/// One `Cluster` of a management cluster.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CapiCluster {
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    pub lifecycle: Lifecycle,
    /// `Available` (v1beta2) or `Ready` (v1beta1), when reported.
    pub available: Option<bool>,
    /// `RemoteConnectionProbe` is False: CAPI cannot reach it either.
    pub unreachable: bool,
}

/// Reads a `Cluster` of either API version; None when it has no name.
pub fn cluster(object: &Value) -> Option<CapiCluster> {
    let meta = object.get("metadata")?;
    let name = meta.get("name")?.as_str()?.to_string();
    let namespace = meta
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let labels: BTreeMap<String, String> = meta
        .get("labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let status = object.get("status");
    let text = |path: &str| object.at(path).and_then(Value::as_str);
    let condition = |kind: &str| {
        status?
            .get("conditions")?
            .as_array()?
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
    };
    let is_true = |kind: &str| {
        condition(kind)
            .and_then(|c| c.get("status"))
            .and_then(Value::as_str)
            .map(|s| s == "True")
    };
    let deleting = meta.get("deletionTimestamp").is_some_and(|v| !v.is_null())
        || text("/status/phase") == Some("Deleting");
    let paused = object.at("/spec/paused").and_then(Value::as_bool) == Some(true);
    let failure = text("/status/failureMessage")
        .or_else(|| text("/status/deprecated/v1beta1/failureMessage"))
        .or_else(|| text("/status/failureReason"))
        .filter(|m| !m.is_empty());
    let lifecycle = if deleting {
        Lifecycle::Deleting
    } else if paused {
        Lifecycle::Paused
    } else if text("/status/phase") == Some("Failed") || failure.is_some() {
        Lifecycle::Failed(
            failure
                .unwrap_or("Cluster API reports the cluster as failed")
                .to_string(),
        )
    } else if matches!(text("/status/phase"), Some("Provisioned"))
        || object
            .at("/status/initialization/controlPlaneInitialized")
            .and_then(Value::as_bool)
            == Some(true)
        || object
            .at("/status/controlPlaneReady")
            .and_then(Value::as_bool)
            == Some(true)
    {
        Lifecycle::Provisioned
    } else {
        Lifecycle::Provisioning
    };
    Some(CapiCluster {
        name,
        namespace,
        labels,
        lifecycle,
        available: is_true("Available").or_else(|| is_true("Ready")),
        unreachable: is_true("RemoteConnectionProbe") == Some(false),
    })
}

/// Why a cluster's kubeconfig Secret gives no kubeconfig: what is wrong, never what the
/// Secret holds. Each is the cluster's own problem; the rest of the fleet is read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The Secret is not there (the cluster is still being made, or it was deleted).
    #[error("no Secret {0}")]
    Missing(String),
    /// RBAC: the management cluster's user may not read it.
    #[error("forbidden to read the Secret {0}")]
    Forbidden(String),
    /// The management cluster did not answer with it.
    #[error("reading the Secret {name}: {why}")]
    Unread { name: String, why: String },
    #[error("the Secret has no data")]
    NoData,
    #[error("the Secret has no `value`, `value.yaml` or `kubeconfig` key")]
    NoKey,
    #[error("the Secret's `{0}` is not base64")]
    NotBase64(&'static str),
    #[error("the Secret's `{0}` is not text")]
    NotText(&'static str),
    #[error("the Secret's `{0}` is not a kubeconfig")]
    NotKubeconfig(&'static str),
    #[error("the kubeconfig in the Secret's `{0}` has no context or no cluster")]
    Empty(&'static str),
}

/// The kubeconfig in a CAPI kubeconfig Secret: data key `value`, else `value.yaml`, else
/// `kubeconfig` (FACTS §4.5). Errors say what is wrong, never what the Secret holds.
pub fn kubeconfig(secret: &Value) -> Result<Kubeconfig, SecretError> {
    let data = secret
        .get("data")
        .and_then(Value::as_object)
        .ok_or(SecretError::NoData)?;
    let (key, encoded) = ["value", "value.yaml", "kubeconfig"]
        .iter()
        .find_map(|k| Some((*k, data.get(*k)?.as_str()?)))
        .ok_or(SecretError::NoKey)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| SecretError::NotBase64(key))?;
    let text = String::from_utf8(bytes).map_err(|_| SecretError::NotText(key))?;
    let config = Kubeconfig::from_yaml(&text).map_err(|_| SecretError::NotKubeconfig(key))?;
    if config.contexts.is_empty() || config.clusters.is_empty() {
        return Err(SecretError::Empty(key));
    }
    Ok(config)
}

/// The API server a kubeconfig's current (else first) context points at.
pub fn server_of(config: &Kubeconfig) -> Option<String> {
    let context = config
        .current_context
        .as_deref()
        .and_then(|c| config.contexts.iter().find(|n| n.name == c))
        .or_else(|| config.contexts.first())?;
    let cluster = &context.context.as_ref()?.cluster;
    config
        .clusters
        .iter()
        .find(|c| &c.name == cluster)?
        .cluster
        .as_ref()?
        .server
        .clone()
}

/// A Kommander workspace: its namespace on the management cluster and its display name.
#[derive(Clone, Debug, PartialEq)]
pub struct KommanderWorkspace {
    pub namespace: String,
    pub name: String,
}

/// Reads a `Workspace` (workspaces.kommander.mesosphere.io); the display name when set.
pub fn kommander_workspace(object: &Value) -> Option<KommanderWorkspace> {
    let name = object.at("/metadata/name")?.as_str()?;
    let namespace = object
        .at("/spec/namespaceName")
        .and_then(Value::as_str)
        .unwrap_or(name);
    let display = object
        .at("/metadata/annotations/kommander.mesosphere.io~1display-name")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .unwrap_or(name);
    Some(KommanderWorkspace {
        namespace: namespace.to_string(),
        name: display.to_string(),
    })
}

/// A `KommanderCluster`: which Secret holds its kubeconfig, and whether it is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct KommanderCluster {
    pub name: String,
    pub namespace: String,
    pub kubeconfig_secret: String,
    /// `status.phase`: Pending, Joining, Joined, JoinFailed, Unjoining, …
    pub phase: String,
}

impl KommanderCluster {
    /// An attached cluster without a Cluster API `Cluster`, as a cluster of the fleet.
    pub fn as_cluster(&self) -> CapiCluster {
        let lifecycle = match self.phase.as_str() {
            "Joined" => Lifecycle::Provisioned,
            "JoinFailed" | "UnjoinFailed" => {
                Lifecycle::Failed(format!("Kommander: {}", self.phase))
            }
            "Unjoining" | "Unjoined" => Lifecycle::Deleting,
            _ => Lifecycle::Provisioning,
        };
        CapiCluster {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            labels: BTreeMap::new(),
            lifecycle,
            available: None,
            unreachable: false,
        }
    }
}

pub fn kommander_cluster(object: &Value) -> Option<KommanderCluster> {
    let name = object.at("/metadata/name")?.as_str()?.to_string();
    let namespace = object
        .at("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let kubeconfig_secret = object
        .at("/spec/kubeconfigRef/name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{name}-kubeconfig"), str::to_string);
    let phase = object
        .at("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("Pending")
        .to_string();
    Some(KommanderCluster {
        name,
        namespace,
        kubeconfig_secret,
        phase,
    })
}

/// One cluster found on a management cluster, with its kubeconfig when it is worth connecting
/// to (None while provisioning, paused, deleting or failed).
#[derive(Clone, Debug)]
pub struct Found {
    pub cluster: CapiCluster,
    pub kubeconfig: Option<Result<Kubeconfig, SecretError>>,
}

/// Adds what a management cluster holds to the fleet. Workspace: the Kommander workspace of its
/// namespace, else the value of `workspace_label` on the Cluster, else its namespace. A cluster
/// whose Secret cannot be used is a problem of that cluster alone.
pub fn add(
    inventory: &mut super::spec::Inventory,
    management: &[String],
    found: Vec<Found>,
    kommander: &BTreeMap<String, String>,
    workspace_label: Option<&str>,
    reserved: &std::collections::HashSet<String>,
) {
    let path = management.join(" ▸ ");
    for Found {
        cluster,
        kubeconfig,
    } in found
    {
        let workspace = kommander
            .get(&cluster.namespace)
            .cloned()
            .or_else(|| workspace_label.and_then(|l| cluster.labels.get(l).cloned()))
            .unwrap_or_else(|| cluster.namespace.clone());
        let secret = format!("{}/{}-kubeconfig", cluster.namespace, cluster.name);
        let source = std::path::PathBuf::from(format!("{path}: Secret {secret}"));
        let taken = |name: &str| {
            reserved.contains(name) || inventory.clusters.iter().any(|c| c.name == name)
        };
        let name = if taken(&cluster.name) {
            format!("{}/{}", cluster.namespace, cluster.name)
        } else {
            cluster.name.clone()
        };
        let discovered = Some(super::spec::CapiDiscovered {
            management: management.to_vec(),
            namespace: cluster.namespace.clone(),
            lifecycle: cluster.lifecycle.clone(),
            probe_failed: cluster.unreachable,
        });
        // A kubeconfig from a Secret is data: one holding instructions is refused.
        let usable = kubeconfig.map(|found| {
            let found = found.map_err(|e| e.to_string())?;
            let loaded =
                super::kubeconfig::current(found, source.clone()).map_err(|e| e.to_string())?;
            match super::untrusted::refusal(&loaded.kubeconfig) {
                None => Ok(loaded),
                Some(why) => Err(why),
            }
        });
        let (context, server, kubeconfig) = match usable {
            None => (cluster.name.clone(), String::new(), Kubeconfig::default()),
            Some(Ok(loaded)) => (loaded.context, loaded.server, loaded.kubeconfig),
            Some(Err(e)) => {
                inventory
                    .problems
                    .push(problem(&path, &cluster.name, &secret, &e));
                continue;
            }
        };
        inventory.clusters.push(super::spec::ClusterSpec {
            name,
            context,
            workspace,
            server,
            labels: cluster.labels,
            source,
            kubeconfig: kubeconfig.into(),
            discovered,
        });
    }
}

fn problem(path: &str, cluster: &str, secret: &str, what: &str) -> super::spec::Problem {
    super::spec::Problem {
        source: format!("{path}: Secret {secret}"),
        context: Some(cluster.to_string()),
        message: what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hostile::sample;
    use serde_json::json;

    #[test]
    fn a_provisioned_v1beta2_cluster_keeps_its_labels_and_is_connectable() {
        let c = cluster(&sample("capi-cluster-v1beta2-provisioned.yaml")).unwrap();
        assert_eq!(c.name, "prod-eu-1");
        assert_eq!(c.namespace, "fleet");
        assert_eq!(c.labels["env"], "prod");
        assert_eq!(c.lifecycle, Lifecycle::Provisioned);
        assert!(c.lifecycle.connectable());
        assert_eq!(c.available, Some(true));
        assert!(!c.unreachable);
    }

    #[test]
    fn lifecycle_states_come_before_connection_errors() {
        let base = sample("capi-cluster-v1beta2-provisioned.yaml");
        let with = |f: &dyn Fn(&mut Value)| {
            let mut v = base.clone();
            f(&mut v);
            cluster(&v).unwrap().lifecycle
        };
        assert_eq!(
            with(&|v| v["metadata"]["deletionTimestamp"] = json!("2026-11-21T10:00:00Z")),
            Lifecycle::Deleting
        );
        assert_eq!(
            with(&|v| v["spec"]["paused"] = json!(true)),
            Lifecycle::Paused
        );
        assert_eq!(
            with(&|v| {
                v["status"]["phase"] = json!("Provisioning");
                v["status"]["initialization"]["controlPlaneInitialized"] = json!(false);
            }),
            Lifecycle::Provisioning
        );
        assert_eq!(
            with(&|v| {
                v["status"]["phase"] = json!("Failed");
                v["status"]["deprecated"]["v1beta1"]["failureMessage"] = json!("quota exceeded");
            }),
            Lifecycle::Failed("quota exceeded".into())
        );
        // v1beta1: booleans and a Ready condition.
        let old = json!({"metadata": {"name": "old", "namespace": "ns"},
            "status": {"phase": "Provisioned", "controlPlaneReady": true,
                "conditions": [{"type": "Ready", "status": "False"}]}});
        let c = cluster(&old).unwrap();
        assert_eq!(c.lifecycle, Lifecycle::Provisioned);
        assert_eq!(c.available, Some(false));
        let probe = with(&|v| {
            for c in v["status"]["conditions"].as_array_mut().unwrap() {
                if c["type"] == "RemoteConnectionProbe" {
                    c["status"] = json!("False");
                }
            }
        });
        assert_eq!(probe, Lifecycle::Provisioned);
    }

    #[test]
    fn a_broken_secret_says_what_is_wrong_and_never_what_it_holds() {
        let redacted = sample("capi-cluster-kubeconfig-secret.yaml");
        let e = kubeconfig(&redacted).unwrap_err();
        assert_eq!(e, SecretError::NotKubeconfig("value"));
        assert_eq!(e.to_string(), "the Secret's `value` is not a kubeconfig");
        let not_base64 = json!({"data": {"value": "%%%secret-token%%%"}});
        let e = kubeconfig(&not_base64).unwrap_err();
        assert_eq!(e, SecretError::NotBase64("value"));
        assert!(!e.to_string().contains("secret-token"), "{e}");
        assert_eq!(
            kubeconfig(&json!({"data": {"other": "eA=="}})).unwrap_err(),
            SecretError::NoKey
        );
        let good = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://x:6443}\n\
                    users:\n- name: u\n  user: {token: abc}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n";
        let encoded = base64::engine::general_purpose::STANDARD.encode(good);
        let k = kubeconfig(&json!({"data": {"value.yaml": encoded}})).unwrap();
        assert_eq!(k.contexts[0].name, "x");
    }

    #[test]
    fn kommander_objects_give_workspace_names_and_kubeconfig_references() {
        let w = kommander_workspace(&sample("kommander-workspace.yaml")).unwrap();
        assert_eq!(
            w,
            KommanderWorkspace {
                namespace: "dev-workspace".into(),
                name: "Development".into()
            }
        );
        let c = kommander_cluster(&sample("kommandercluster-joined.yaml")).unwrap();
        assert_eq!(c.namespace, "dev-workspace");
        assert_eq!(c.kubeconfig_secret, "prod-eu-1-kubeconfig");
        assert_eq!(c.phase, "Joined");
        // An attached cluster without a Cluster API Cluster: its phase is its lifecycle.
        assert_eq!(c.as_cluster().lifecycle, Lifecycle::Provisioned);
        let mut joining = c.clone();
        joining.phase = "Joining".into();
        assert_eq!(joining.as_cluster().lifecycle, Lifecycle::Provisioning);
        joining.phase = "JoinFailed".into();
        assert!(matches!(
            joining.as_cluster().lifecycle,
            Lifecycle::Failed(_)
        ));
    }
}
