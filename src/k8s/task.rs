//! One task per cluster: credentials → client → discovery (`connect.rs`) → the watches
//! (`watch.rs`, `kind_watch.rs`), or its FluxReport alone (`summary_tier.rs`), reported as changes.

pub(in crate::k8s) mod cluster;
pub(in crate::k8s) mod connect;
pub mod discovery;
pub(in crate::k8s) mod failures;
pub(in crate::k8s) mod flux_report;
pub(in crate::k8s) mod kind_watch;
pub(in crate::k8s) mod page;
pub(in crate::k8s) mod reporter;
pub(in crate::k8s) mod restarts;
pub(in crate::k8s) mod summarize;
pub(in crate::k8s) mod summary_tier;
pub(in crate::k8s) mod warm;
pub(in crate::k8s) mod watch;
