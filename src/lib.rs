//! fluxfleet: the Flux CD state of a whole fleet of Kubernetes clusters, in one terminal.
//!
//! Module map (layers never import upward; data flows from top to bottom):
//! - [`inventory`] — where clusters come from: kubeconfig files and directories, `KUBECONFIG`,
//!   the config's sources, Cluster API / Kommander Secrets on management clusters (read as data,
//!   never as instructions). Turns them into `ClusterSpec`s without opening a connection.
//! - [`k8s`] — the only code that talks to API servers: the HTTP/2 transport and proxies, exec
//!   credentials, per-kind discovery, one bounded list-then-watch task per cluster, management
//!   discovery, and the `Reader` / `Writer` for one-off reads and actions.
//! - [`fleet`] — pure domain, no I/O: Flux kinds and versions, health rules, object summaries,
//!   the exact patches of suspend / resume / reconcile, the index and its rollups.
//! - [`actions`] — carrying out one action on many objects (TUI and headless alike), journaled
//!   in [`audit`] (intent before anything is sent, outcomes after).
//! - [`app`] — the TUI's model, messages, update function, keymap and event loop; [`ui`] draws
//!   it, a pure function of the model and the theme.
//! - [`export`] — the headless commands: `get`, `inventory`, `suspend` / `resume` /
//!   `reconcile`, as tables, JSON and NDJSON with server text escaped for terminals.
//! - [`config`] — settings, modes and guardrails (which fail closed), themes; a leaf.
//! - [`sim`] — the simulated fleet: a Kubernetes-API-compatible server for Flux objects serving
//!   many virtual clusters, used by tests, benchmarks and `fluxfleet demo`.
//! - [`cli`] — command-line parsing; `main.rs` only dispatches.
//! - Small helpers: [`errors`] (error text for people, redacted where input may hold
//!   credentials), [`private`] (owner-only files), [`units`] (durations in settings and flags).

pub mod actions;
pub mod app;
pub mod audit;
pub mod cli;
pub mod config;
pub mod errors;
pub mod export;
pub mod fleet;
pub mod glob;
pub mod inventory;
pub mod k8s;
pub mod private;
pub mod session;
pub mod sim;
pub mod source;
pub mod ui;
pub mod units;
