//! The headless commands that read: `fluxfleet get`, `rollout`, `gate`, `workloads`,
//! `inventory`, `alert`, `proposals` — selecting from the index and writing tables, JSON and
//! NDJSON (the JSON shapes are documented in docs/commands.md and stable). Each returns how it
//! ended or why it failed ([`outcome`]) and tells what happens on the way to a
//! [`crate::headless::Edge`];
//! the writes are in [`crate::acting`].

pub mod alert;
pub(crate) mod delivery;
pub mod drift;
pub mod gate;
pub mod get;
pub(crate) mod history;
pub mod inventory;
pub mod outcome;
pub(crate) mod output;
pub mod proposals;
pub mod query;
pub mod rollout;
pub mod roots;
pub mod shapes;
pub mod trace;
pub mod tree;
mod watch;
pub mod workloads;

pub use crate::fleet::filter::{Filter, StatusFilter, UnknownStatus};
