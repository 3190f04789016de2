//! fluxfleet: the Flux CD state of a whole fleet of Kubernetes clusters, in one terminal.
//!
//! Module map, lowest floor first. A module imports only from its own floor or the floors below
//! it, and no two files import each other (`tests/imports.rs` checks both; a bullet's modules are
//! those named before its dash).
//! - [`units`], [`glob`], [`errors`], [`private`], [`places`], [`der`], [`json`], [`userinfo`],
//!   [`endpoints`], `hostile` (tests only) — leaves, importing nothing of the crate: durations,
//!   ages, shortened hashes; the globs of selectors and rules; error text for people, redacted
//!   where input may hold credentials; URLs' users and passwords split off, decoded and hidden;
//!   owner-only files; where fluxfleet keeps its files (config, journal, log), found in one place;
//!   just enough DER to read any X.509 certificate's public key; JSON pointers without
//!   allocating; the probes and metrics endpoints of long-running commands; mutated inputs for
//!   the property tests of every parser of untrusted input.
//! - [`fleet`] — pure domain, no I/O: Flux kinds and versions, health rules (failing,
//!   needs-attention), object summaries, the annotations fluxfleet reads and writes, the exact
//!   patches of suspend / resume / reconcile, the index (which alone numbers clusters) and its
//!   rollups; what broke inside a Kustomization or HelmRelease (its workloads' verdicts, folded
//!   across clusters).
//! - [`config`] — settings, modes and guardrails (which fail closed), the write grant, themes.
//! - [`audit`] — the journal of actions (intent before anything is sent, outcomes after).
//! - [`inventory`] — where clusters come from: kubeconfig files and directories, `KUBECONFIG`,
//!   the config's sources, Cluster API / Kommander Secrets on management clusters (read as data,
//!   never as instructions). Turns them into `ClusterSpec`s without opening a connection.
//! - [`source`] — the seam every source of fleet state implements: changes through a `Sink`
//!   under stable cluster keys, and where it can, reads (`Read`) and actions (`Write`).
//! - [`k8s`] — the only code that talks to API servers, and the first source (`k8s::Kube`): the
//!   HTTP/2 transport and proxies, exec credentials, per-kind discovery, one bounded
//!   list-then-watch task per cluster, management discovery and following.
//! - [`bus`] — the fleet's state shared through NATS JetStream: collectors run the engine on
//!   their share of the fleet (rendezvous hashing over the live ones) and publish into a KV
//!   bucket and a history stream; the reader is a source that holds no connection to a cluster.
//! - [`session`] — the index and the registered sources, reads and writes routed to each
//!   cluster's source, and the one opening of the fleet (kubeconfigs with their management
//!   clusters, or the bus) every command uses.
//! - [`actions`] — one action on many objects: the one door every front door hands an action to
//!   (`admit`: every check in one order, one refusal, one message; only what it admits becomes
//!   a job), the target planner and carrying the job out — Flux's verbs asked first where the
//!   config says, an Event on each target changed, journaled in [`audit`].
//! - [`proposals`] — actions an assistant asks for and a person decides: the targets and exact
//!   patches as planned, a content hash of them, an expiry, the decision; kept beside the journal.
//! - [`app`] — the TUI's state and its changes: model, messages, update function, typed
//!   commands, keymap, plugins; no terminal, no drawing.
//! - [`ui`] — draws the model, a pure function of it and the theme; what a frame learns of the
//!   model (its page size, the map's room) is returned as a value, never written into it.
//! - [`tui`] — the event loop above both: keys and fleet events into messages, effects off the
//!   render path, the model laid out and drawn.
//! - [`headless`] — what every headless command shares: what it tells a person on the way (to
//!   an `Edge`, never to stderr itself), the fleet opened for it and why that failed, tables and
//!   JSON with server text escaped for terminals.
//! - [`export`] — the headless commands that read: `get`, `rollout`, `gate`, `drift`,
//!   `workloads`, `trace`, `tree`, `inventory`, `proposals`, as tables, JSON and NDJSON; `alert`,
//!   one alert per root cause to Alertmanager. Each returns how it ended or why it failed
//!   (`export::outcome::ReadFailed`, `export::alert::AlertFailed`).
//! - [`acting`] — the headless writes: `suspend` / `resume` / `reconcile` and `approve` /
//!   `reject`, through [`actions`], returning what was sent or why not (`ActFailed`,
//!   `ProposalFailed`); it imports nothing of [`export`].
//! - [`mcp`] — `fluxfleet mcp`: the fleet for assistants, a Model Context Protocol server over
//!   stdio (or HTTP for a team, `--listen`) whose tools answer with the JSON of the headless
//!   commands, a page at a time; with `--propose`, actions kept as [`proposals`] a person
//!   decides; with `--write` (automation), actions confirmed by a dry run's token, through
//!   [`actions`] like every other.
//! - [`cli`] — the command line: each command's options (the shared ones declared once, offered
//!   only where used) beside its run; `cli::dispatch` runs the one asked for, and `main.rs`
//!   only calls it.
//!
//! The simulated fleet is a crate of its own, `fluxfleet-sim` (`src/sim/`, a member of the
//! workspace): a Kubernetes-API-compatible server for Flux objects serving many virtual clusters,
//! with its own statement of the Flux facts it serves. It imports nothing of this crate; [`cli`]
//! starts it for `fluxfleet sim` and `fluxfleet demo`, tests and benchmarks run
//! against it.

pub mod acting;
pub mod actions;
pub mod app;
pub mod audit;
pub mod bus;
pub mod cli;
pub mod config;
pub mod der;
pub mod endpoints;
pub mod errors;
pub mod export;
pub mod fleet;
pub mod glob;
pub mod headless;
#[cfg(test)]
mod hostile;
pub mod inventory;
pub mod json;
pub mod k8s;
pub mod mcp;
pub mod places;
pub mod private;
pub mod proposals;
pub mod session;
pub mod source;
pub mod tui;
pub mod ui;
pub mod units;
pub mod userinfo;
