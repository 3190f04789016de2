//! The simulator's truth in the client's words: the state the simulator means an object to be
//! is the health the client must derive from the status the simulator writes (FACTS §3.8).
//! Shared by the tests (through `common`) and the chaos harness.

#![allow(dead_code)] // each includer uses part of it

use fluxfleet::fleet::Health;
use fluxfleet_sim::facts::Health as Meant;

pub fn seen(meant: Meant) -> Health {
    match meant {
        Meant::Stalled => Health::Stalled,
        Meant::Failed => Health::Failed,
        Meant::Progressing => Health::Progressing,
        Meant::Suspended => Health::Suspended,
        Meant::Ready => Health::Ready,
        Meant::NotApplicable => Health::NotApplicable,
    }
}

/// A client's kind as the simulator names it, for the handle's calls that take one.
pub fn sim_kind(kind: fluxfleet::fleet::FluxKind) -> fluxfleet_sim::facts::FluxKind {
    fluxfleet_sim::facts::FluxKind::from_kind(kind.as_str())
        .unwrap_or_else(|| panic!("the simulator does not serve {kind}"))
}

/// A Kustomization the tests can break: ready and not suspended.
pub fn breakable(o: &fluxfleet_sim::TruthObject) -> bool {
    o.kind == "Kustomization" && !o.suspended && !o.health.is_failing()
}

/// The first Kustomization of `cluster` the tests can break.
pub fn breakable_of(cluster: &fluxfleet_sim::TruthCluster) -> fluxfleet_sim::TruthObject {
    cluster
        .objects
        .iter()
        .find(|o| breakable(o))
        .cloned()
        .unwrap_or_else(|| panic!("{} has no ready Kustomization", cluster.name))
}
