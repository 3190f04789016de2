//! The only code that talks to API servers: the HTTP/2 transport, exec credentials, per-kind
//! discovery, and one task per cluster that watches its Flux objects and reports summaries and
//! connection states as [`crate::fleet::index::Event`]s.

mod api;
mod backoff;
mod body;
mod cluster;
mod connect;
pub mod direct;
pub mod discovery;
mod engine;
pub mod errors;
mod exec;
mod follow;
mod h2;
mod identity;
mod kind_watch;
pub mod management;
mod proxy;
pub mod reader;
mod report;
mod reporter;
mod slim;
mod source;
mod summarize;
mod summary;
pub mod transport;
mod warm;
mod watch;
mod writer;

pub use engine::Engine;
pub use reader::Reader;
pub use source::Kube;
pub use writer::Writer;
