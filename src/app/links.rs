//! What the detail view links to: an object's chart, source and dependencies, the root causes
//! holding it back (or its cycle), and what it holds back — each opened with `enter`.

use crate::fleet::graph::Cause;
use crate::fleet::{ClusterEntry, FluxKind, ObjectKey};

/// How a linked object relates to the one in the detail view, in the order they are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// A HelmRelease's chart: its HelmChart, or what its `chartRef` names.
    Chart,
    /// Where it (or its chart) gets its artifact; what an ArtifactGenerator composes from; the
    /// generator of an ExternalArtifact.
    Source,
    DependsOn,
    /// A root cause up its chains, or the cycle it is on or behind.
    BlockedBy,
    /// What it holds back.
    Blocks,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Chart => "chart",
            Role::Source => "source",
            Role::DependsOn => "dependsOn",
            Role::BlockedBy => "blocked by",
            Role::Blocks => "blocks",
        }
    }
}

/// An object the detail view links to, on the same cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub role: Role,
    pub key: ObjectKey,
}

/// The most objects a detail view lists as held back; the rest are counted.
pub const HELD_SHOWN: usize = 8;

/// What the detail view of `key` links to, in order: its chart and source (a HelmRelease's
/// HelmChart's source too), its dependencies, the root causes holding it back (or its cycle),
/// and the first [`HELD_SHOWN`] objects it holds back. Also how many it holds back in all.
pub fn links(cluster: &ClusterEntry, key: &ObjectKey) -> (Vec<Link>, usize) {
    let graph = &cluster.graph;
    let mut out = Vec::new();
    let Some(o) = cluster.objects.get(key) else {
        return (out, 0);
    };
    let source = o
        .source
        .as_ref()
        .and_then(|r| crate::fleet::graph::source_key(key, r));
    if let Some(s) = &source {
        if key.kind == FluxKind::HelmRelease {
            out.push(Link {
                role: Role::Chart,
                key: s.clone(),
            });
            // The chart's own source, when Flux made the chart from a repository.
            for up in graph.upstream(s) {
                out.push(Link {
                    role: Role::Source,
                    key: up.clone(),
                });
            }
        } else {
            out.push(Link {
                role: Role::Source,
                key: s.clone(),
            });
        }
    }
    // What an ArtifactGenerator composes from are its sources.
    let role = match key.kind {
        FluxKind::ArtifactGenerator => Role::Source,
        _ => Role::DependsOn,
    };
    for up in graph.upstream(key) {
        if Some(up) != source.as_ref() {
            out.push(Link {
                role,
                key: up.clone(),
            });
        }
    }
    let behind = match graph.cause(key) {
        Some(Cause::Blocked(roots)) => roots.to_vec(),
        Some(Cause::Cycle(objects)) => objects.iter().filter(|k| *k != key).cloned().collect(),
        _ => Vec::new(),
    };
    out.extend(behind.into_iter().map(|key| Link {
        role: Role::BlockedBy,
        key,
    }));
    let held = graph.held_back(key);
    let count = held.len();
    out.extend(held.into_iter().take(HELD_SHOWN).map(|k| Link {
        role: Role::Blocks,
        key: k.clone(),
    }));
    (out, count)
}
