//! Pure domain: Flux kinds and versions, health rules, object summaries, connection states and
//! the index with its rollups. No I/O, no terminal, no kube client.

pub mod annotations;
mod bounds;
mod connection;
mod deployed;
pub mod drift;
mod events;
pub mod filter;
pub mod graph;
mod health;
pub mod history;
pub mod incident;
pub mod index;
mod kind;
pub mod notice;
pub mod object;
pub mod pace;
pub mod read;
pub mod reconciles;
pub mod report;
pub mod rollouts;
mod rollup;
pub mod runs;
pub mod scope;
mod sorted;
mod summary;
pub mod suspect;
mod text;
pub mod trace;
pub mod tree;
pub mod verbs;
pub mod workload;

pub use connection::{
    Connection, FLAPPING, Lists, Phase, PhaseCounts, RESTARTS_WINDOW, ServedKind,
};
pub use deployed::{HelmRollout, Rollout, content_of, same_content};
pub use events::{ObjectEvent, newest_first, told_with};
pub use health::{Health, condition, health_of, is_suspended};
pub use index::{
    ClusterEntry, ClusterId, ClusterInfo, ClusterKey, Counted, Index, SourceId, WorkspaceEntry,
    WorkspaceId,
};
pub use kind::{FluxKind, FluxRelease, ServedVersion, compare_versions};
pub use rollup::HealthCounts;
pub use summary::{FluxSummary, ObjectKey, ObjectRef, Ready};
pub use text::SharedText;
