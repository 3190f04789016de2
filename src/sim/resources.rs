//! The API resources a simulated cluster serves: core/v1 (namespaces, events, secrets), Cluster
//! API `Cluster` on management clusters, and the Flux kinds its Flux release has.

use crate::facts::{FluxKind, FluxRelease, ServedVersion};

/// One kind of API resource the simulator stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Res {
    Namespace,
    Event,
    Secret,
    CapiCluster,
    /// Kommander (DKP/NKP): `workspaces.kommander.mesosphere.io` Workspace, cluster-scoped.
    KommanderWorkspace,
    /// Kommander: `kommander.mesosphere.io` KommanderCluster, in a workspace namespace.
    KommanderCluster,
    Flux(FluxKind),
    /// The Flux Operator's `FluxInstance` and `FluxReport` (fluxcd.controlplane.io/v1).
    FluxInstance,
    FluxReport,
}

const READ_VERBS: &[&str] = &["get", "list", "watch"];
/// Events are read, and created by whoever records one (kubectl, a controller, fluxfleet).
const EVENT_VERBS: &[&str] = &["create", "get", "list", "watch"];
const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl Res {
    pub fn group(self) -> &'static str {
        match self {
            Res::Namespace | Res::Event | Res::Secret => "",
            Res::CapiCluster => "cluster.x-k8s.io",
            Res::KommanderWorkspace => "workspaces.kommander.mesosphere.io",
            Res::KommanderCluster => "kommander.mesosphere.io",
            Res::Flux(k) => k.group(),
            Res::FluxInstance | Res::FluxReport => "fluxcd.controlplane.io",
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            Res::Namespace => "Namespace",
            Res::Event => "Event",
            Res::Secret => "Secret",
            Res::CapiCluster => "Cluster",
            Res::KommanderWorkspace => "Workspace",
            Res::KommanderCluster => "KommanderCluster",
            Res::Flux(k) => k.as_str(),
            Res::FluxInstance => "FluxInstance",
            Res::FluxReport => "FluxReport",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Res::Namespace => "namespaces",
            Res::Event => "events",
            Res::Secret => "secrets",
            Res::CapiCluster => "clusters",
            Res::KommanderWorkspace => "workspaces",
            Res::KommanderCluster => "kommanderclusters",
            Res::Flux(k) => k.plural(),
            Res::FluxInstance => "fluxinstances",
            Res::FluxReport => "fluxreports",
        }
    }

    pub fn singular(self) -> String {
        self.kind().to_ascii_lowercase()
    }

    pub fn namespaced(self) -> bool {
        !matches!(self, Res::Namespace | Res::KommanderWorkspace)
    }

    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            Res::Namespace => &["ns"],
            Res::Event => &["ev"],
            Res::Secret => &[],
            Res::CapiCluster => &["cl"],
            Res::KommanderWorkspace => &["ws"],
            Res::KommanderCluster => &["komm", "kommander"],
            Res::Flux(k) => k.short_names(),
            Res::FluxInstance | Res::FluxReport => &[],
        }
    }

    pub fn categories(self) -> &'static [&'static str] {
        match self {
            Res::CapiCluster => &["cluster-api"],
            Res::Flux(k) => k.categories(),
            _ => &[],
        }
    }

    pub fn verbs(self) -> &'static [&'static str] {
        match self {
            Res::Namespace => READ_VERBS,
            Res::Event => EVENT_VERBS,
            _ => ALL_VERBS,
        }
    }

    pub fn has_status(self) -> bool {
        match self {
            Res::CapiCluster | Res::Namespace | Res::KommanderCluster => true,
            Res::FluxInstance | Res::FluxReport => true,
            Res::KommanderWorkspace => false,
            Res::Flux(k) => k.has_status_subresource(),
            Res::Event | Res::Secret => false,
        }
    }

    /// Field selectors the API server supports for this resource.
    pub fn field_selectors(self) -> &'static [&'static str] {
        match self {
            Res::Event => &[
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ],
            Res::Secret => &["metadata.name", "metadata.namespace", "type"],
            Res::Namespace => &["metadata.name", "status.phase"],
            _ => &["metadata.name", "metadata.namespace"],
        }
    }

    /// Whether reading it is a secret a read-only viewer may not see.
    pub fn is_sensitive(self) -> bool {
        matches!(self, Res::Secret)
    }
}

/// A resource and the versions a cluster serves it in.
#[derive(Clone, Debug)]
pub struct Served {
    pub res: Res,
    pub versions: Vec<ServedVersion>,
}

impl Served {
    pub fn storage_version(&self) -> &'static str {
        self.versions
            .iter()
            .find(|v| v.storage)
            .map_or("v1", |v| v.version)
    }

    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v.version == version)
    }

    /// `group/version` (or `version` for core) of the storage version.
    pub fn api_version(&self) -> String {
        api_version(self.res.group(), self.storage_version())
    }
}

pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

const CORE_V1: &[ServedVersion] = &[ServedVersion {
    version: "v1",
    storage: true,
    deprecated: false,
}];
const CAPI: &[ServedVersion] = &[
    ServedVersion {
        version: "v1beta2",
        storage: true,
        deprecated: false,
    },
    ServedVersion {
        version: "v1beta1",
        storage: false,
        deprecated: true,
    },
];

const KOMMANDER_WORKSPACE: &[ServedVersion] = &[ServedVersion {
    version: "v1alpha1",
    storage: true,
    deprecated: false,
}];
const KOMMANDER_CLUSTER: &[ServedVersion] = &[ServedVersion {
    version: "v1beta1",
    storage: true,
    deprecated: false,
}];

const OPERATOR: &[ServedVersion] = CORE_V1;

/// What a cluster serves: core resources, Cluster API when it is a management cluster, the Flux
/// kinds of its release when Flux is installed, and the Flux Operator's kinds when it runs there.
pub fn served_resources(
    flux: Option<FluxRelease>,
    management: bool,
    operator: bool,
) -> Vec<Served> {
    let mut out: Vec<Served> = [Res::Namespace, Res::Event, Res::Secret]
        .into_iter()
        .map(|res| Served {
            res,
            versions: CORE_V1.to_vec(),
        })
        .collect();
    if management {
        out.push(Served {
            res: Res::CapiCluster,
            versions: CAPI.to_vec(),
        });
        // Kommander's kinds are served on management clusters; objects exist only when the
        // simulation runs with `kommander`.
        out.push(Served {
            res: Res::KommanderWorkspace,
            versions: KOMMANDER_WORKSPACE.to_vec(),
        });
        out.push(Served {
            res: Res::KommanderCluster,
            versions: KOMMANDER_CLUSTER.to_vec(),
        });
    }
    if let Some(release) = flux {
        for kind in FluxKind::ALL {
            let versions = kind.served_versions(release);
            if !versions.is_empty() {
                out.push(Served {
                    res: Res::Flux(kind),
                    versions: versions.to_vec(),
                });
            }
        }
        if operator {
            for res in [Res::FluxInstance, Res::FluxReport] {
                out.push(Served {
                    res,
                    versions: OPERATOR.to_vec(),
                });
            }
        }
    }
    out
}
