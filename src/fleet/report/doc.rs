//! A `FluxReport` and a `FluxInstance` as [`Report::read`](super::Report) reads them, typed and
//! lenient (`object::lax`: a field of the wrong type reads as absent): read straight from a
//! list's bytes, strings borrowed where they hold no escape, everything else skipped by the
//! parser — no `serde_json::Value` tree. A `Value` reads into the same form.

use serde::Deserialize;
use serde::de::Deserializer;

pub use crate::fleet::object::Text;
use crate::fleet::object::{Condition, Flag, Int, Lax, List};

/// A `FluxReport`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ReportDoc<'a> {
    #[serde(borrow)]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub spec: Lax<ReportSpec<'a>>,
    #[serde(borrow)]
    pub status: Lax<ReportStatus<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ReportSpec<'a> {
    #[serde(borrow)]
    pub distribution: Lax<Distribution<'a>>,
    #[serde(borrow)]
    pub operator: Lax<Versioned<'a>>,
    #[serde(borrow)]
    pub cluster: Lax<ReportCluster<'a>>,
    #[serde(borrow)]
    pub components: List<Component<'a>>,
    #[serde(borrow)]
    pub reconcilers: List<Reconciler<'a>>,
    #[serde(borrow)]
    pub sync: Lax<Sync<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Distribution<'a> {
    #[serde(borrow)]
    pub version: Text<'a>,
    #[serde(borrow)]
    pub status: Text<'a>,
    #[serde(borrow)]
    pub managed_by: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Versioned<'a> {
    #[serde(borrow)]
    pub version: Text<'a>,
}

/// A report's `spec.cluster`: the Kubernetes version it runs and its nodes.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ReportCluster<'a> {
    #[serde(borrow)]
    pub server_version: Text<'a>,
    pub nodes: Int,
}

/// A Flux controller as a report's `spec.components` writes it.
/// Shares its name with `fleet::report::Component`: this is its shape on the wire, that is what
/// is kept of it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Component<'a> {
    #[serde(borrow)]
    pub name: Text<'a>,
    #[serde(borrow)]
    pub image: Text<'a>,
    pub ready: Flag,
    #[serde(borrow)]
    pub status: Text<'a>,
}

/// The objects of one kind as a report's `spec.reconcilers` writes them.
/// Shares its name with `fleet::report::Reconciler`: this is its shape on the wire, that is what
/// is kept of it.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Reconciler<'a> {
    #[serde(borrow)]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub api_version: Text<'a>,
    #[serde(borrow)]
    pub stats: Lax<Stats<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Stats<'a> {
    pub running: Int,
    pub failing: Int,
    pub suspended: Int,
    #[serde(borrow)]
    pub total_size: Text<'a>,
}

/// The cluster's own sync as a report's `spec.sync` writes it.
/// Shares its name with `fleet::report::Sync`: this is its shape on the wire, that is what is
/// kept of it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Sync<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub source: Text<'a>,
    #[serde(borrow)]
    pub path: Text<'a>,
    pub ready: Flag,
    #[serde(borrow)]
    pub status: Text<'a>,
}

/// A report's or an instance's status: its conditions, and an instance's applied revision.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ReportStatus<'a> {
    #[serde(borrow)]
    pub conditions: List<Condition<'a>>,
    #[serde(borrow)]
    pub last_applied_revision: Text<'a>,
}

impl<'a> ReportStatus<'a> {
    /// Its Ready condition.
    pub fn ready(&self) -> Option<&Condition<'a>> {
        self.conditions
            .0
            .iter()
            .find(|c| c.kind.get() == Some("Ready"))
    }
}

/// A `FluxInstance`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InstanceDoc<'a> {
    #[serde(borrow)]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub metadata: Lax<InstanceMetadata<'a>>,
    #[serde(borrow)]
    pub spec: Lax<InstanceSpec<'a>>,
    #[serde(borrow)]
    pub status: Lax<ReportStatus<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InstanceMetadata<'a> {
    #[serde(borrow)]
    pub name: Text<'a>,
    #[serde(borrow)]
    pub namespace: Text<'a>,
    #[serde(borrow)]
    pub annotations: Lax<InstanceAnnotations<'a>>,
}

/// The one annotation an instance's reading looks at; the others are skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InstanceAnnotations<'a> {
    #[serde(borrow, rename = "fluxcd.controlplane.io/reconcile")]
    pub reconcile: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InstanceSpec<'a> {
    #[serde(borrow)]
    pub distribution: Lax<Distribution<'a>>,
}

/// The first item of a list (the rest are read and dropped): what a
/// `fieldSelector=metadata.name=flux&limit=1` list holds.
pub fn first<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Ok(first_versioned(d)?.1)
}

/// [`first`], with the list's `metadata.resourceVersion`: where a watch of it starts.
pub fn first_versioned<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
) -> Result<(Option<String>, Option<T>), D::Error> {
    #[derive(Default, Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, default, rename = "resourceVersion")]
        resource_version: Text<'a>,
    }
    #[derive(Deserialize)]
    struct Items<'a, T> {
        #[serde(borrow, default)]
        metadata: Lax<Meta<'a>>,
        #[serde(default = "Vec::new")]
        items: Vec<T>,
    }
    let list = Items::<T>::deserialize(d)?;
    let version = list
        .metadata
        .0
        .and_then(|m| m.resource_version.get().map(str::to_owned));
    Ok((version, list.items.into_iter().next()))
}
