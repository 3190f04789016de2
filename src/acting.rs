//! The writes without a terminal: `fluxfleet suspend | resume | reconcile` ([`act`]) and a
//! person's decision on a proposal, `approve` and `reject` ([`approve`]). Each goes through the
//! one guardrail and the one executor ([`crate::actions`]), after a person confirmed it, into the
//! same journal as the TUI; each returns what was sent ([`Sent`]) or why nothing was
//! ([`crate::export::outcome::Failed`]), and the edge (`cli`) says it.

pub mod act;
pub mod approve;
mod send;

pub use send::Sent;
