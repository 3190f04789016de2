//! The headless commands: `fluxfleet get`, `fluxfleet inventory` and `suspend` / `resume` /
//! `reconcile` — selecting from the index and printing tables, JSON and NDJSON. The JSON shapes
//! are documented in docs/commands.md and stable.

pub mod act;
pub mod alert;
pub(crate) mod delivery;
pub mod gate;
pub mod get;
pub(crate) mod history;
pub mod inventory;
pub(crate) mod opening;
pub(crate) mod output;
pub mod proposals;
pub mod request;
pub mod rollout;
pub(crate) mod roots;
pub mod table;
pub mod view;
mod watch;
pub mod workloads;

pub use crate::fleet::filter::{Filter, Status, UnknownStatus};
