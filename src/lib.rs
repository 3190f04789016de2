//! fluxfleet: the Flux CD state of a whole fleet of Kubernetes clusters, in one terminal.
//!
//! Module map (layers never import upward):
//! - [`fleet`] — pure domain: Flux kinds and versions, health rules. No I/O.
//! - [`sim`] — the simulated fleet: a Kubernetes-API-compatible server for Flux objects serving
//!   many virtual clusters, used by tests, benchmarks and `fluxfleet demo`.
//! - [`cli`] — command-line parsing; `main.rs` only dispatches.
//!
//! Coming with later issues: `inventory/` (where clusters come from), `k8s/` (the only code that
//! talks to API servers), `app/` and `ui/` (the TUI), `config/`, `export/`.

pub mod actions;
pub mod app;
pub mod audit;
pub mod cli;
pub mod config;
pub mod errors;
pub mod export;
pub mod fleet;
pub mod inventory;
pub mod k8s;
pub mod private;
pub mod sim;
pub mod ui;
pub mod units;
