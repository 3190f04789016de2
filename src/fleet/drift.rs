//! Same revision, different result: the copies of a Kustomization or HelmRelease grouped by the
//! revision they run and then by what they applied from it — a Kustomization's digest of its
//! applied manifests (`status.history`, Flux ≥ 2.7), a HelmRelease's config digest — the
//! majority the norm, every other variant named with its clusters; and beside it the live drift
//! helm-controller finds (`Drifted=True`).

use std::collections::HashMap;

use jiff::Timestamp;
use serde::Serialize;

pub mod asked;

use super::deployed::content_of;
use super::graph::Cause;
use super::reconciles::{Reconciles, Tally};
use super::{ClusterEntry, ClusterInfo, FluxKind, FluxSummary, SharedText};

/// What one group of copies applied: the digest that tells them apart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// The digest of what they applied (a Kustomization's manifests, a HelmRelease's values).
    pub digest: SharedText,
    /// The clusters whose copy applied it, by name.
    pub clusters: Vec<SharedText>,
    /// Asked of one object: the objects its inventory and the norm's disagree on, where both
    /// were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<asked::Between>,
}

/// What most copies on a revision applied, and how many did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Norm {
    pub digest: SharedText,
    pub copies: usize,
    /// One of its clusters (the first by name): where the norm's copy is read.
    pub cluster: SharedText,
}

/// The copies of one object on one revision that did not all apply the same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Differ {
    pub kind: FluxKind,
    pub namespace: SharedText,
    pub name: SharedText,
    /// The revision they run (as most of them name it: a ring's branch and `main` carrying one
    /// commit are one revision).
    pub revision: SharedText,
    /// Copies on the revision whose applied digest is recorded.
    pub copies: usize,
    /// What most of them applied.
    pub norm: Norm,
    /// Every other variant, the largest first.
    pub variants: Vec<Variant>,
}

impl Differ {
    /// Copies that applied something other than the norm.
    pub fn differing(&self) -> usize {
        self.variants.iter().map(|v| v.clusters.len()).sum()
    }

    /// The sentence a person reads: "3 of 214 copies on main@sha1:28306760 applied something
    /// else: eu-prod-004, eu-prod-017, us-prod-090".
    pub fn said(&self) -> String {
        let names: Vec<&str> = self
            .variants
            .iter()
            .flat_map(|v| v.clusters.iter().map(|c| &**c))
            .collect();
        let what = match self.kind {
            FluxKind::HelmRelease => "was released with other values",
            _ => "applied something else",
        };
        format!(
            "{} of {} copies on {} {what}: {}",
            self.differing(),
            self.copies,
            crate::units::truncate_hex(&self.revision),
            names.join(", ")
        )
    }
}

/// A copy whose live objects differ from what it applied: a HelmRelease with `Drifted=True`,
/// or (asked of one object) a Kustomization whose controller keeps correcting them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Live {
    pub kind: FluxKind,
    pub namespace: SharedText,
    pub name: SharedText,
    pub cluster: SharedText,
    pub workspace: SharedText,
    /// The controller's words: which objects changed, and how.
    pub message: SharedText,
    /// A Kustomization's corrections, as its events tell them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correcting: Option<asked::Correcting>,
}

/// The live drift of the copy `copy` on `cluster` whose events (its own, newest first) say its
/// controller keeps correcting live objects on the revision it applied; None where they do not.
pub fn corrected(
    copy: &crate::fleet::FluxSummary,
    cluster: &crate::fleet::ClusterInfo,
    events: &[crate::fleet::ObjectEvent],
) -> Option<Live> {
    let r = copy.rollout.as_deref()?;
    let c = asked::correcting(events, r.applied.as_deref()?, r.since)?;
    Some(Live {
        kind: copy.key.kind,
        namespace: copy.key.namespace.clone(),
        name: copy.key.name.clone(),
        cluster: cluster.name.as_str().into(),
        workspace: cluster.workspace.as_str().into(),
        message: c.said().into(),
        correcting: Some(c),
    })
}

/// Drift across the scope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// Objects on a revision whose copies applied different things, the most differing first.
    pub differ: Vec<Differ>,
    /// Groups of copies (an object on a revision, on two clusters or more) that all applied the
    /// same.
    pub agree: usize,
    /// Copies that run a revision without recording what they applied (Flux before 2.7 keeps
    /// no Kustomization history): not compared.
    pub unrecorded: usize,
    pub live: Vec<Live>,
    /// How each object's copies reconcile: every Kustomization and HelmRelease in the scope,
    /// those with slow, flapping or stuck copies first.
    pub reconciles: Vec<Reconciles>,
    /// What was read from the clusters beyond the index: asked of one object, its copies; fleet-wide, the Kustomizations' events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<asked::ExtraReads>,
}

impl Drift {
    /// The live drift in order: by object, then cluster.
    pub fn sort_live(&mut self) {
        self.live.sort_by(|a, b| {
            let key = |l: &Live| {
                (
                    l.kind,
                    l.namespace.clone(),
                    l.name.clone(),
                    l.cluster.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
    }

    /// Whether every compared copy agrees and nothing drifted live.
    pub fn is_clean(&self) -> bool {
        self.differ.is_empty() && self.live.is_empty()
    }
}

/// The digest that tells copies of `o` apart, where recorded.
fn digest_of(o: &FluxSummary) -> Option<&SharedText> {
    let r = o.rollout.as_deref()?;
    match o.key.kind {
        FluxKind::Kustomization => r.digest.as_ref(),
        FluxKind::HelmRelease => r.helm().config_digest.as_ref(),
        _ => None,
    }
}

/// Drift among the Kustomizations and HelmReleases `select` keeps, on `clusters`, and how
/// their reconciles behave by `now`.
pub fn drift<'a>(
    clusters: impl Iterator<Item = &'a ClusterEntry>,
    select: impl Fn(&FluxSummary) -> bool,
    now: Timestamp,
) -> Drift {
    let copies = clusters.flat_map(|c| {
        c.objects.values().map(move |o| {
            // Held back by what it waits on (or awaiting its retry): its controller requeues it
            // without writing a run, which is no sign that nothing reconciles it.
            let waits = matches!(
                c.graph.cause(&o.key),
                Some(Cause::Blocked(_) | Cause::AwaitsRetry)
            );
            (&*c.info, o, waits)
        })
    });
    drift_of_copies(copies, select, now)
}

/// [`drift`] of copies, each with its cluster and whether it waits on what it needs: those the
/// index holds and those read on demand (a summarized cluster's, asked of one object).
pub fn drift_of_copies<'a>(
    copies: impl Iterator<Item = (&'a ClusterInfo, &'a FluxSummary, bool)>,
    select: impl Fn(&FluxSummary) -> bool,
    now: Timestamp,
) -> Drift {
    type Key<'a> = (FluxKind, &'a str, &'a str, &'a str);
    // Per object and revision content: each full revision name met (with how often), and per
    // digest the names of its clusters (borrowed: only the few off the norm are kept).
    #[derive(Default)]
    struct Group<'a> {
        names: Vec<(&'a SharedText, usize)>,
        digests: HashMap<&'a SharedText, Vec<&'a str>>,
    }
    let mut groups: HashMap<Key<'a>, Group<'a>> = HashMap::new();
    let mut found = Drift::default();
    let mut tally = Tally::default();
    for (cluster, o, waits) in copies {
        let kind = o.key.kind;
        if !matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease) || !select(o) {
            continue;
        }
        tally.add(&cluster.name, (o, waits), now);
        let Some(r) = o.rollout.as_deref() else {
            continue;
        };
        if let Some(message) = &r.helm().drifted {
            found.live.push(Live {
                kind,
                namespace: o.key.namespace.clone(),
                name: o.key.name.clone(),
                cluster: cluster.name.as_str().into(),
                workspace: cluster.workspace.as_str().into(),
                message: message.clone(),
                correcting: None,
            });
        }
        let Some(applied) = &r.applied else {
            continue;
        };
        let Some(digest) = digest_of(o) else {
            found.unrecorded += 1;
            continue;
        };
        let key = (kind, &*o.key.namespace, &*o.key.name, content_of(applied));
        let group = groups.entry(key).or_default();
        match group
            .names
            .iter_mut()
            .find(|(n, _)| SharedText::ptr_eq(n, applied) || *n == applied)
        {
            Some((_, count)) => *count += 1,
            None => group.names.push((applied, 1)),
        }
        let on = group.digests.entry(digest).or_default();
        on.push(&cluster.name);
    }
    for ((kind, namespace, name, _), group) in groups {
        let copies: usize = group.digests.values().map(Vec::len).sum();
        if copies < 2 {
            continue;
        }
        if group.digests.len() == 1 {
            found.agree += 1;
            continue;
        }
        let mut digests: Vec<(&SharedText, Vec<&str>)> = group.digests.into_iter().collect();
        // The norm: most copies; among equals, the smaller digest (the same answer each time).
        digests.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(b.0)));
        let (norm, norm_clusters) = digests.remove(0);
        let variants = digests
            .into_iter()
            .map(|(digest, mut clusters)| {
                clusters.sort_unstable();
                Variant {
                    digest: digest.clone(),
                    clusters: clusters.into_iter().map(SharedText::from).collect(),
                    objects: None,
                }
            })
            .collect();
        let revision = group
            .names
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(r, _)| SharedText::clone(r))
            .unwrap_or_default();
        found.differ.push(Differ {
            kind,
            namespace: namespace.into(),
            name: name.into(),
            revision,
            copies,
            norm: Norm {
                digest: norm.clone(),
                copies: norm_clusters.len(),
                cluster: norm_clusters
                    .iter()
                    .min()
                    .copied()
                    .unwrap_or_default()
                    .into(),
            },
            variants,
        });
    }
    found.differ.sort_by(|a, b| {
        b.differing()
            .cmp(&a.differing())
            .then_with(|| (a.kind, &a.namespace, &a.name).cmp(&(b.kind, &b.namespace, &b.name)))
    });
    found.reconciles = tally.finish();
    found.sort_live();
    found
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::fleet::index::{Change, Event};
    use crate::fleet::{ClusterInfo, ClusterKey, Index};

    const REV: &str = "main@sha1:2830676000000000000000000000000000000000";

    fn ks(digest: Option<&str>, revision: &str) -> Value {
        let history = match digest {
            Some(d) => json!([{"digest": d, "firstReconciled": "2026-12-01T00:00:00Z",
                "lastReconciled": "2026-12-01T00:00:00Z", "lastReconciledStatus": "ReconciliationSucceeded",
                "metadata": {"revision": revision}}]),
            None => json!(null),
        };
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
            "status": {"observedGeneration": 1, "lastAppliedRevision": revision,
                "lastAttemptedRevision": revision, "history": history,
                "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                    "message": "Applied revision", "lastTransitionTime": "2026-12-01T00:00:00Z"}]}})
    }

    fn index(objects: &[(&str, FluxKind, Value)]) -> Index {
        let mut index = Index::new();
        for (name, kind, object) in objects {
            let key = ClusterKey::new(name.to_string());
            if index.cluster_named(name).is_none() {
                index.add_cluster(ClusterInfo {
                    key: key.clone(),
                    ..ClusterInfo::new(name, "ws")
                });
            }
            index.apply(Event {
                cluster: key,
                at: jiff::Timestamp::from_second(1_790_000_000).unwrap(),
                change: Change::Replaced(*kind, vec![FluxSummary::of(*kind, object).unwrap()]),
            });
        }
        index
    }

    /// Four copies on one commit (under two branch names), one of which applied other
    /// manifests: the three are the norm, the fourth is named; a copy on Flux without history
    /// is not compared.
    #[test]
    fn the_copies_that_applied_something_else_on_a_revision_are_named() {
        let dev = "ring-dev@sha1:2830676000000000000000000000000000000000";
        let index = index(&[
            ("a", FluxKind::Kustomization, ks(Some("sha256:aaa"), REV)),
            ("b", FluxKind::Kustomization, ks(Some("sha256:aaa"), REV)),
            ("c", FluxKind::Kustomization, ks(Some("sha256:aaa"), dev)),
            ("d", FluxKind::Kustomization, ks(Some("sha256:bbb"), REV)),
            ("e", FluxKind::Kustomization, ks(None, REV)),
        ]);
        let found = drift(
            index.entries().map(|(_, c)| c),
            |_| true,
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(found.unrecorded, 1);
        assert_eq!(found.differ.len(), 1, "{found:?}");
        let d = &found.differ[0];
        assert_eq!((d.copies, d.differing(), &*d.revision), (4, 1, REV));
        assert_eq!(&*d.norm.digest, "sha256:aaa");
        assert_eq!(d.variants[0].clusters, [SharedText::from("d")]);
        assert_eq!(
            d.said(),
            "1 of 4 copies on main@sha1:28306760 applied something else: d"
        );
        assert!(!found.is_clean());
    }

    /// Copies that all applied the same agree, whatever the revision; a lone copy is not
    /// compared with anything.
    #[test]
    fn copies_that_applied_the_same_agree() {
        let other = "main@sha1:9990000000000000000000000000000000000000";
        let index = index(&[
            ("a", FluxKind::Kustomization, ks(Some("sha256:aaa"), REV)),
            ("b", FluxKind::Kustomization, ks(Some("sha256:aaa"), REV)),
            ("c", FluxKind::Kustomization, ks(Some("sha256:ccc"), other)),
        ]);
        let found = drift(
            index.entries().map(|(_, c)| c),
            |_| true,
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!((found.agree, found.differ.len()), (1, 0));
        assert!(found.is_clean());
    }
}
