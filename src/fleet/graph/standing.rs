//! Where an object stands in its cluster's graph: whether it needs a cause, and whom it holds
//! back, as the controllers decide it.

use crate::fleet::{FluxKind, FluxSummary, Health, Ready};

/// Whether an object is not ready, and so needs a cause: its Ready condition is not True, as
/// Flux's `dependsOn` reads it (a suspended object that is Ready does not block). One without a
/// status to judge (Alert, Provider) never blocks.
pub fn blocks(o: &FluxSummary) -> bool {
    o.ready != Some(Ready::True) && o.health != Health::NotApplicable
}

/// Whether `o`, which an object of kind `by` needs, holds that object back, as the controllers
/// decide it. A `dependsOn` holds back while it is not ready. A source only while it has no
/// artifact to serve: kustomize-controller and source-controller (a HelmChart's repository)
/// apply the last artifact of a source whose fetch now fails, so a Git server answering 503
/// holds nothing back; only a source that never fetched does. helm-controller is stricter with a
/// HelmRelease's chart: also a stalled one, or one whose latest generation is not yet
/// reconciled, holds the release back (`isSourceReady`).
pub fn holds_back(o: &FluxSummary, by: FluxKind) -> bool {
    if !blocks(o) {
        return false;
    }
    if !o.key.kind.is_source() || o.revision.is_none() {
        return true;
    }
    by == FluxKind::HelmRelease
        && o.key.kind != FluxKind::ExternalArtifact
        && (o.health == Health::Stalled || o.observed_generation != Some(o.generation))
}

/// Whether `o` says it waits on its `dependsOn` (kustomize-controller's and helm-controller's
/// `DependencyNotReady`). The controller checked them when it last ran and retries at its
/// `retryInterval`: once every dependency is there and Ready, nothing holds it back — it waits
/// for that retry (a dependent created beside its dependency says so for up to 30 s).
pub fn says_dependency_not_ready(o: &FluxSummary) -> bool {
    !o.depends_on.is_empty() && o.reason.as_deref() == Some(DEPENDENCY_NOT_READY)
}

/// The Ready reason of an object whose `dependsOn` was not ready when its controller last ran.
const DEPENDENCY_NOT_READY: &str = "DependencyNotReady";

/// What an object's state means to the graph, compared to tell whether a change of status
/// needs the causes solved again: whether it needs a cause, whom it holds back, and whether it
/// says it waits on its dependencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphStanding {
    blocks: bool,
    holds_back: bool,
    holds_back_release: bool,
    on_dependencies: bool,
}

/// Where `o` stands in its cluster's graph.
pub fn standing(o: &FluxSummary) -> GraphStanding {
    GraphStanding {
        blocks: blocks(o),
        holds_back: holds_back(o, FluxKind::Kustomization),
        holds_back_release: holds_back(o, FluxKind::HelmRelease),
        on_dependencies: says_dependency_not_ready(o),
    }
}
