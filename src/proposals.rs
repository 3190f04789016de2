//! Proposals: an action an assistant asks for and a person decides. `fluxfleet mcp --propose`
//! plans the action as a dry run does and keeps it — the targets, the exact patches, the
//! refusals, who asked and why, a content hash of all of it, an expiry — instead of acting. A
//! person approves it (`fluxfleet approve`, the TUI's `:proposals`) or rejects it. Approval plans
//! again against the fleet as it is then, with the proposal's own intent: it acts only when that
//! plan hashes the same, and otherwise says what changed. The journal names proposer and
//! approver.
//!
//! Proposals are files beside the journal ([`store`]), one per proposal, owner-only; or, when the
//! fleet is read from collectors, on the bus ([`keeper`]).

mod keeper;
mod proposal;
mod store;

pub use keeper::Keeper;
pub use proposal::*;
pub use store::{Store, StoreError};

#[cfg(test)]
mod tests;
