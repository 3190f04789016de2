//! Pure domain: Flux kinds and versions, health rules. No I/O, no terminal, no kube client.

mod health;
mod kind;

pub use health::{Health, condition, health_of, is_suspended};
pub use kind::{FluxKind, FluxRelease, ServedVersion, compare_versions};
