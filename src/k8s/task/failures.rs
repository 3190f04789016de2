//! What a summarized cluster's FluxReport counts as not ready, named. A report counts failing
//! and suspended objects by kind but names none; so at each look, over the same short
//! connection, the kinds it counts them in are listed, and the cluster keeps only its not-ready
//! objects and what they depend on — enough for triage and root causes, in memory proportional
//! to its failures rather than to its objects.
//!
//! What they depend on may be of a kind the report counts nothing wrong with (a ready
//! GitRepository behind a failing Kustomization), so that kind is listed too; and a kind listed
//! for a dependency may turn out to hold not-ready objects the report, read earlier, did not
//! count yet. Each kind is listed at most once per look.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use super::connect::TaskShared;
use super::kind_watch::{KindWatch, Step};
use crate::fleet::graph::upstream;
use crate::fleet::report::Report;
use crate::fleet::{FluxKind, FluxSummary, HealthCounts, Lists, ObjectKey, ServedKind};
use crate::k8s::wire::api::{Http, Reason};
use crate::k8s::wire::errors::Failure;

/// What a summarized cluster holds after a look.
pub(in crate::k8s) struct Held {
    pub objects: Vec<FluxSummary>,
    /// Kinds the credentials may not list: their failures are not held.
    pub forbidden: Vec<FluxKind>,
    /// Every kind listed, counted by health from its whole list: exact where the report is not.
    pub counted: Vec<(FluxKind, HealthCounts)>,
}

/// The watched kinds `report` counts failing or suspended objects of; and where it counts any,
/// the kinds `dependsOn` chains run through (Kustomization, HelmRelease) with them. The Flux
/// Operator does not count an object held back by a dependency as failing (reason
/// `DependencyNotReady`; flux-operator v0.58.1, checked on it): a Kustomization held back by
/// one that is progressing or suspended, on a cluster where a HelmRelease fails, is in no count.
pub(in crate::k8s) fn not_ready_kinds(report: &Report, kinds: &[FluxKind]) -> BTreeSet<FluxKind> {
    let counted: BTreeSet<FluxKind> = report
        .reconcilers
        .iter()
        .filter(|r| r.failing > 0 || r.suspended > 0)
        .filter_map(|r| FluxKind::from_kind(&r.kind))
        .filter(|k| kinds.contains(k))
        .collect();
    let chained = [FluxKind::Kustomization, FluxKind::HelmRelease];
    let with_chains = (!counted.is_empty())
        .then_some(chained)
        .into_iter()
        .flatten();
    counted
        .iter()
        .copied()
        .chain(with_chains)
        .filter(|k| kinds.contains(k))
        .collect()
}

/// Lists what `report` counts as not ready, and what that depends on, over `http`: the
/// cluster's not-ready objects and their dependencies, of the kinds `served`.
pub(in crate::k8s) async fn held(
    http: &Arc<Http>,
    shared: &TaskShared,
    served: &[ServedKind],
    report: &Report,
) -> Result<Held, Failure> {
    let mut listed: BTreeMap<ObjectKey, FluxSummary> = BTreeMap::new();
    let mut done: HashSet<FluxKind> = HashSet::new();
    let mut forbidden = Vec::new();
    let mut counted = Vec::new();
    let mut next = not_ready_kinds(report, &shared.kinds);
    while !next.is_empty() {
        for kind in std::mem::take(&mut next) {
            done.insert(kind);
            let Some(s) = served.iter().find(|s| s.kind == kind) else {
                continue;
            };
            match list_once(http, shared, s, done.len() as u64).await? {
                Listed::Objects(objects) => {
                    let mut counts = HealthCounts::default();
                    objects.iter().for_each(|o| counts.add(o.health));
                    counted.push((kind, counts));
                    listed.extend(objects.into_iter().map(|o| (o.key.clone(), o)));
                }
                Listed::Forbidden(_) => forbidden.push(kind),
            }
        }
        let (_, missing) = kept(&listed);
        next = missing.into_iter().filter(|k| !done.contains(k)).collect();
    }
    let (keep, _) = kept(&listed);
    let objects = listed
        .into_iter()
        .filter(|(k, _)| keep.contains(k))
        .map(|(_, o)| o)
        .collect();
    Ok(Held {
        objects,
        forbidden,
        counted,
    })
}

/// Of `listed`, the not-ready objects and what they depend on directly (a ready dependency
/// holds nothing back, so what it depends on does not matter); and the kinds of dependencies
/// not among them.
fn kept(listed: &BTreeMap<ObjectKey, FluxSummary>) -> (HashSet<ObjectKey>, BTreeSet<FluxKind>) {
    let mut keep = HashSet::new();
    let mut missing = BTreeSet::new();
    for o in listed.values().filter(|o| o.health.is_not_ready()) {
        keep.insert(o.key.clone());
        for up in upstream(o) {
            if listed.contains_key(&up) {
                keep.insert(up);
            } else {
                missing.insert(up.kind);
            }
        }
    }
    (keep, missing)
}

/// One kind listed once.
pub(in crate::k8s) enum Listed {
    Objects(Vec<FluxSummary>),
    /// The credentials may not list it: the refusal.
    Forbidden(Failure),
}

/// One kind listed once over `http`.
pub(in crate::k8s) async fn list_once(
    http: &Arc<Http>,
    shared: &TaskShared,
    served: &ServedKind,
    seed: u64,
) -> Result<Listed, Failure> {
    let mut kind = KindWatch::new(
        http.clone(),
        served.kind,
        served.version.clone(),
        (shared.chunk_size, shared.max_objects),
        // A look, not a watch: one list in pages, as `kubectl get` reads.
        Lists::Paged,
        shared.max_backoff,
        seed,
    );
    match kind.next().await {
        Step::Listed(objects, _) => Ok(Listed::Objects(objects)),
        Step::Failed {
            reason: Some(Reason::Forbidden),
            failure,
            ..
        } => Ok(Listed::Forbidden(failure)),
        Step::Failed { failure, .. } => Err(failure),
        // A kind's first step is its list: anything else is not.
        Step::Watching | Step::Applied(_) | Step::Deleted(_) | Step::Restarted => {
            Ok(Listed::Objects(Vec::new()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(kind: &str, name: &str, ready: &str, spec: serde_json::Value) -> FluxSummary {
        let value = json!({
            "apiVersion": "v1", "kind": kind,
            "metadata": {"name": name, "namespace": "flux-system", "generation": 1},
            "spec": spec,
            "status": {"observedGeneration": 1,
                "conditions": [{"type": "Ready", "status": ready, "reason": "R"}]}
        });
        let kind = FluxKind::from_kind(kind).unwrap();
        FluxSummary::of(kind, &value).unwrap()
    }

    #[test]
    fn failures_and_what_they_depend_on_are_kept_and_nothing_else() {
        let git = json!({"sourceRef": {"kind": "GitRepository", "name": "repo"}});
        let objects = [
            object("Kustomization", "apps", "False", git.clone()),
            object("Kustomization", "infra", "True", git.clone()),
            object(
                "Kustomization",
                "web",
                "False",
                json!({"dependsOn": [{"name": "apps"}, {"name": "infra"}],
                       "sourceRef": {"kind": "OCIRepository", "name": "oci"}}),
            ),
            object("Kustomization", "other", "True", git),
        ];
        let listed: BTreeMap<ObjectKey, FluxSummary> =
            objects.into_iter().map(|o| (o.key.clone(), o)).collect();
        let (keep, missing) = kept(&listed);
        let mut names: Vec<&str> = keep.iter().map(|k| &*k.name).collect();
        names.sort();
        assert_eq!(
            names,
            ["apps", "infra", "web"],
            "'other' is ready and needed by none"
        );
        assert_eq!(
            missing,
            BTreeSet::from([FluxKind::GitRepository, FluxKind::OciRepository])
        );
    }

    /// The operator's report of these reconcilers.
    fn report_of(reconcilers: serde_json::Value) -> Report {
        let doc = json!({"apiVersion": "fluxcd.controlplane.io/v1", "kind": "FluxReport",
            "metadata": {"name": "flux", "namespace": "flux-system"},
            "spec": {"reconcilers": reconcilers}});
        Report::read(&doc, None, jiff::Timestamp::UNIX_EPOCH).unwrap()
    }

    #[test]
    fn only_kinds_the_report_counts_wrong_and_fluxfleet_watches_are_listed() {
        let report = report_of(json!([
            {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
             "stats": {"running": 4, "failing": 1, "suspended": 0}},
            {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
             "stats": {"running": 3, "failing": 0, "suspended": 1}},
            {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
             "stats": {"running": 2, "failing": 0, "suspended": 0}},
            {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket",
             "stats": {"running": 1, "failing": 1, "suspended": 0}}]));
        let watched = [
            FluxKind::Kustomization,
            FluxKind::HelmRelease,
            FluxKind::GitRepository,
        ];
        assert_eq!(
            not_ready_kinds(&report, &watched),
            BTreeSet::from([FluxKind::Kustomization, FluxKind::HelmRelease])
        );
    }

    /// The operator counts nothing held back by a dependency as failing: where it counts a
    /// failure at all, the kinds dependsOn chains run through are listed with it; where it
    /// counts none, nothing is.
    #[test]
    fn a_failure_anywhere_lists_the_kinds_dependencies_hold_back() {
        let report = |helm_failing: u32| {
            report_of(json!([
                {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                 "stats": {"running": 4, "failing": 0, "suspended": 0}},
                {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                 "stats": {"running": 3, "failing": helm_failing, "suspended": 0}},
                {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket",
                 "stats": {"running": 1, "failing": 1, "suspended": 0}}]))
        };
        let watched = [FluxKind::Kustomization, FluxKind::HelmRelease];
        assert_eq!(
            not_ready_kinds(&report(1), &watched),
            BTreeSet::from([FluxKind::Kustomization, FluxKind::HelmRelease])
        );
        // A failing Bucket, which fluxfleet does not watch here, lists nothing.
        assert!(not_ready_kinds(&report(0), &watched).is_empty());
    }
}
