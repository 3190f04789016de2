//! The writes without a terminal: `fluxfleet suspend | resume | reconcile` ([`act`]) and a
//! person's decision on a proposal, `approve` and `reject` ([`approve`]). Each goes through the
//! one guardrail and the one executor ([`crate::actions`]), after a person confirmed it, into the
//! same journal as the TUI; each returns what was sent ([`Sent`]) or why nothing was
//! ([`ActFailed`], [`ProposalFailed`]), and the edge (`cli`) says it. What they share with the
//! reading commands is below both, in [`crate::headless`].

pub mod act;
pub mod approve;
mod failed;
mod send;

pub use failed::{ActFailed, ProposalFailed};
pub use send::Sent;
