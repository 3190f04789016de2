//! What a summary reads of an object's status beyond its conditions' words: since when it is in
//! its state (the controllers rewrite Ready's time at every retry: `status.history` tells the
//! first failure), and what a stalled object says.

use crate::fleet::SharedText;

use jiff::Timestamp;

use crate::fleet::bounds::{limits, shared};
use crate::fleet::object::{Condition, Object, Text};
use crate::fleet::{FluxKind, Health};

/// What a stalled object says: Stalled's own message, then the last failure where another
/// condition says one — a HelmRelease out of retries says "Failed to upgrade after 2
/// attempt(s)" in Stalled, the upgrade's error in Released (or Ready), while Ready may already
/// say that the remediation succeeded ("Helm rollback … succeeded"), which failed nothing.
pub(super) fn stalled_words(stalled: &Condition, object: &Object) -> Option<SharedText> {
    let own = stalled.message.get().filter(|m| !m.is_empty());
    let failure = ["Released", "Ready"]
        .into_iter()
        .filter_map(|kind| object.condition(kind))
        .filter(|c| {
            c.status.get() == Some("False")
                && !c.reason.get().is_some_and(|r| r.ends_with("Succeeded"))
        })
        .filter_map(|c| c.message.get())
        .find(|m| !m.is_empty() && Some(*m) != own);
    match (own, failure) {
        (Some(own), Some(failure)) => shared(Some(&format!("{own}: {failure}")), limits::MESSAGE),
        (own, failure) => shared(own.or(failure), limits::MESSAGE),
    }
}

/// See [`FluxSummary::since`]: Ready's time, or for an object failing, the earliest time its
/// history says this failure was first met — a Kustomization's newest `status.history` entry
/// when it failed (`firstReconciled`, not before the last success's `lastReconciled`), a
/// HelmRelease's leading run of failed releases (the oldest one's `lastDeployed`: each retry
/// is a new release).
pub(super) fn since_of(
    kind: FluxKind,
    health: Health,
    ready: Option<&Condition>,
    object: &Object,
) -> Option<Timestamp> {
    let time = |t: &Text| -> Option<Timestamp> { t.get()?.parse().ok() };
    let transition = ready.and_then(|c| time(&c.last_transition_time));
    // Ready=True beside a state that is not ready (a new generation, a reconcile under way)
    // keeps the time it turned ready: it stopped being ready when its controller began the
    // reconcile, where Reconciling says so; unknown before that.
    if health.is_not_ready()
        && health != Health::Suspended
        && ready.and_then(|c| c.status.get()) == Some("True")
    {
        return object
            .condition("Reconciling")
            .filter(|c| c.status.get() == Some("True"))
            .and_then(|c| time(&c.last_transition_time));
    }
    if !health.is_failing() {
        return transition;
    }
    let history = object.history();
    let recorded = match kind {
        FluxKind::Kustomization => {
            let newest = history
                .first()
                .filter(|e| e.last_reconciled_status.get().is_some() && !e.reconciled());
            let last_success = history
                .iter()
                .filter(|e| e.reconciled())
                .filter_map(|e| time(&e.last_reconciled))
                .max();
            newest
                .and_then(|e| time(&e.first_reconciled))
                .map(|first| last_success.map_or(first, |ok| first.max(ok)))
        }
        FluxKind::HelmRelease => history
            .iter()
            .take_while(|e| e.status.get() == Some("failed"))
            .filter_map(|e| time(&e.last_deployed))
            .min(),
        _ => None,
    };
    match (transition, recorded) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
