//! The only code that talks to API servers: the HTTP/2 transport, exec credentials, per-kind
//! discovery, and one task per cluster that watches its Flux objects and reports summaries and
//! connection states as [`crate::fleet::index::Event`]s.
//!
//! `wire/` is the protocol (HTTP/2, TLS and proxies, exec credentials, plain requests and what
//! their failures mean); `task/` is one cluster's task (connect, discover, list and watch, or
//! read its FluxReport); the files here are the public face: the engine, the source, reads,
//! writes, management clusters.

mod clients;
pub mod direct;
mod engine;
mod follow;
pub mod management;
pub mod reader;
mod source;
mod task;
mod trace;
mod wire;
mod workloads;
mod writer;

pub use engine::Engine;
pub use reader::KubeReader;
pub use source::Kube;
pub use task::discovery;
pub use wire::{errors, transport};
pub use writer::KubeWriter;
