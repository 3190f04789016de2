//! What drift asked of one object learns by reading its copies, beyond what the index holds:
//! the objects two variants' inventories disagree on, and a Kustomization whose controller
//! keeps correcting its live objects (its events say so: kustomize-controller tells every
//! apply that changed something, and a change on a revision it had applied already is a
//! correction of objects someone else changed).

use crate::fleet::SharedText;
use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;
use serde_json::Value;

use crate::fleet::ObjectEvent;
use crate::fleet::workload::ReadError;

/// The most objects named on each side of a difference, and of a correction.
pub const NAMED: usize = 20;

/// The most inventory entries read from one object: a Kustomization applying more is a
/// fleet's bootstrap at most (a few thousand objects).
const ENTRIES: usize = 20_000;

/// A cluster whose copy could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotRead {
    pub cluster: String,
    pub why: ReadError,
}

/// What was read beyond the index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtraReads {
    /// Summarized clusters read for the object.
    pub summarized: usize,
    /// Copies whose events were read (a Kustomization's).
    pub events: usize,
    /// Copies read for their inventories.
    pub inventories: usize,
    /// What could not be read, by cluster.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_read: Vec<NotRead>,
}

impl ExtraReads {
    /// What was read, in a line for people (what was not read is said cluster by cluster).
    pub fn said(&self) -> String {
        use crate::units::count;
        format!(
            "read from the clusters: {}, the events of {}, {} for their inventories",
            count(self.summarized, "summarized cluster", "summarized clusters"),
            count(self.events, "copy", "copies"),
            count(self.inventories, "copy", "copies"),
        )
    }
}

/// An inventory entry's id as long as Kubernetes allows (a namespace, a name, a group, a kind).
const ID: usize = 63 + 253 + 253 + 63 + 3;

/// The objects in an applier's inventory (`status.inventory.entries`, a Kustomization's and,
/// from Flux 2.8, a HelmRelease's), each as kustomize-controller names it in its change log:
/// `Kind/namespace/name` (`Kind/name` for a cluster-scoped object). None where the object
/// keeps no inventory.
pub fn inventory(object: &Value) -> Option<BTreeSet<String>> {
    let entries = object.pointer("/status/inventory/entries")?.as_array()?;
    Some(
        entries
            .iter()
            .take(ENTRIES)
            .filter_map(|e| e.get("id")?.as_str())
            .filter(|id| id.len() <= ID)
            .filter_map(entry_name)
            .collect(),
    )
}

/// `<namespace>_<name>_<group>_<kind>` as `Kind/namespace/name`: the namespace up to the first
/// `_`, the group and kind after the last two, the name between (where `__` is a `:`, as in
/// RBAC names). None for an id that is not one.
pub fn entry_name(id: &str) -> Option<String> {
    let (namespace, rest) = id.split_once('_')?;
    let (rest, kind) = rest.rsplit_once('_')?;
    let (name, _group) = rest.rsplit_once('_')?;
    if name.is_empty() || kind.is_empty() {
        return None;
    }
    let name = name.replace("__", ":");
    Some(match namespace {
        "" => format!("{kind}/{name}"),
        ns => format!("{kind}/{ns}/{name}"),
    })
}

/// Which objects one variant's inventory has that the norm's has not, and the other way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Between {
    /// The cluster whose copy was read for the variant, and for the norm.
    pub read_on: SharedText,
    pub norm_read_on: SharedText,
    /// In the variant's inventory, not the norm's: the first [`NAMED`], and how many.
    pub only_here: Vec<String>,
    pub only_here_count: usize,
    /// In the norm's, not the variant's.
    pub only_norm: Vec<String>,
    pub only_norm_count: usize,
}

impl Between {
    pub fn of(
        (here, read_on): (&BTreeSet<String>, SharedText),
        (norm, norm_read_on): (&BTreeSet<String>, SharedText),
    ) -> Between {
        let only_here: Vec<&String> = here.difference(norm).collect();
        let only_norm: Vec<&String> = norm.difference(here).collect();
        Between {
            read_on,
            norm_read_on,
            only_here_count: only_here.len(),
            only_norm_count: only_norm.len(),
            only_here: only_here.into_iter().take(NAMED).cloned().collect(),
            only_norm: only_norm.into_iter().take(NAMED).cloned().collect(),
        }
    }

    /// Both inventories hold the same objects: what differs is their content.
    pub fn same_objects(&self) -> bool {
        self.only_here_count == 0 && self.only_norm_count == 0
    }

    /// What a person reads: "has Ingress/apps/podinfo-internal that the norm has not".
    pub fn said(&self) -> String {
        if self.same_objects() {
            return "the same objects as the norm, with other content".into();
        }
        let list = |names: &[String], count: usize| {
            let mut text = names.join(", ");
            if count > names.len() {
                text.push_str(&format!(" and {} more", count - names.len()));
            }
            text
        };
        let mut parts = Vec::new();
        if self.only_here_count > 0 {
            parts.push(format!(
                "has {} that the norm has not",
                list(&self.only_here, self.only_here_count)
            ));
        }
        if self.only_norm_count > 0 {
            parts.push(format!(
                "lacks {} that the norm has",
                list(&self.only_norm, self.only_norm_count)
            ));
        }
        parts.join("; ")
    }
}

/// A Kustomization's controller correcting live objects on a revision it had applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Correcting {
    /// How many applies the events count that changed these objects.
    pub times: u32,
    /// The objects changed, as the controller named them (`Deployment/apps/podinfo`): the first
    /// [`NAMED`].
    pub objects: Vec<String>,
    /// When it last did.
    pub last: Timestamp,
}

impl Correcting {
    /// "corrected Deployment/kube-system/metrics-server 6 times, last 2026-12-03T10:02:00Z".
    pub fn said(&self) -> String {
        format!(
            "kustomize-controller keeps correcting live objects: {} ({} applies that changed them, the last at {})",
            self.objects.join(", "),
            self.times,
            self.last.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    }
}

/// How long after its revision's first reconcile an apply that changes objects still counts as
/// that first apply (its events may be recorded a little before or after the history).
const SETTLING: SignedDuration = SignedDuration::from_secs(60);

/// Whether `events` (a Kustomization's own, newest first) say its controller keeps correcting
/// live objects on `applied`, the revision it runs, first reconciled at `since`: an apply
/// that changed objects (kustomize-controller's Normal event listing `Kind/namespace/name
/// configured`, `created` or `deleted`, annotated with the revision) last seen after that
/// first reconcile — or, where the history does not say when that was (Flux before 2.7), seen
/// more than once.
pub fn correcting(
    events: &[ObjectEvent],
    applied: &str,
    since: Option<Timestamp>,
) -> Option<Correcting> {
    let mut found: Option<Correcting> = None;
    for e in events {
        let ours = !e.warning && e.from == "kustomize-controller";
        let on_applied = e.revision.as_deref().is_none_or(|r| r == applied);
        let Some(last) = e.last_seen.filter(|_| ours && on_applied) else {
            continue;
        };
        let Some(objects) = changed(&e.message) else {
            continue;
        };
        let again = match since {
            Some(since) => last > since + SETTLING,
            None => e.count > 1,
        };
        if !again {
            continue;
        }
        let c = found.get_or_insert_with(|| Correcting {
            times: 0,
            objects: Vec::new(),
            last,
        });
        c.times = c.times.saturating_add(e.count);
        c.last = c.last.max(last);
        for o in objects {
            if c.objects.len() < NAMED && !c.objects.contains(&o) {
                c.objects.push(o);
            }
        }
    }
    found
}

/// The objects an apply's change log names (`Deployment/apps/podinfo configured`, one per
/// line), when every line is one: the object changed by it, not one left unchanged.
fn changed(message: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for line in message.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (subject, action) = line.rsplit_once(' ')?;
        if !matches!(action, "configured" | "created" | "deleted") || !subject.contains('/') {
            return None;
        }
        if subject.contains(' ') {
            return None;
        }
        out.push(subject.to_string());
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const REV: &str = "main@sha1:2830676000000000000000000000000000000000";

    fn apply_event(message: &str, count: u32, last: &str, revision: Option<&str>) -> ObjectEvent {
        let mut e = json!({
            "type": "Normal", "reason": "Progressing", "message": message, "count": count,
            "lastTimestamp": last, "source": {"component": "kustomize-controller"},
            "involvedObject": {"kind": "Kustomization", "name": "infra-controllers"},
        });
        if let Some(r) = revision {
            e["metadata"] = json!({"annotations": {"kustomize.toolkit.fluxcd.io/revision": r}});
        }
        ObjectEvent::from_value(&e)
    }

    #[test]
    fn inventory_ids_read_as_the_change_log_names_them() {
        assert_eq!(
            entry_name("apps_podinfo_apps_Deployment").as_deref(),
            Some("Deployment/apps/podinfo")
        );
        assert_eq!(
            entry_name("_apps__Namespace").as_deref(),
            Some("Namespace/apps")
        );
        assert_eq!(
            entry_name("_system__controller__manager_rbac.authorization.k8s.io_ClusterRole")
                .as_deref(),
            Some("ClusterRole/system:controller:manager")
        );
        assert_eq!(entry_name("nonsense"), None);
        assert_eq!(entry_name("a__"), None);
        let object = json!({"status": {"inventory": {"entries": [
            {"id": "apps_podinfo_apps_Deployment", "v": "v1"},
            {"id": "apps_podinfo__Service", "v": "v1"}, {"v": "v1"}, {"id": 7}]}}});
        let objects = inventory(&object).unwrap();
        assert_eq!(objects.len(), 2);
        assert_eq!(inventory(&json!({"status": {}})), None);
    }

    #[test]
    fn a_variant_says_which_objects_it_has_and_the_norm_has_not() {
        let norm: BTreeSet<String> = ["Service/apps/podinfo", "Deployment/apps/podinfo"]
            .map(String::from)
            .into();
        let mut here = norm.clone();
        here.insert("Ingress/apps/podinfo-internal".into());
        let b = Between::of((&here, "eu-prod-004".into()), (&norm, "eu-prod-001".into()));
        assert_eq!(b.only_here, vec!["Ingress/apps/podinfo-internal"]);
        assert_eq!(b.only_norm_count, 0);
        assert_eq!(
            b.said(),
            "has Ingress/apps/podinfo-internal that the norm has not"
        );
        let b = Between::of((&norm, "a".into()), (&here, "b".into()));
        assert!(b.said().starts_with("lacks Ingress/apps/podinfo-internal"));
        let same = Between::of((&norm, "a".into()), (&norm, "b".into()));
        assert!(same.same_objects());
    }

    #[test]
    fn an_apply_repeated_on_the_same_revision_is_a_correction() {
        let since: Timestamp = "2026-12-03T08:00:00Z".parse().unwrap();
        let message = "Deployment/kube-system/metrics-server configured";
        // The revision's own apply, as it first reconciled: no correction.
        let first = apply_event(message, 1, "2026-12-03T08:00:20Z", Some(REV));
        assert_eq!(correcting(&[first], REV, Some(since)), None);
        // The same change an hour later, six times: someone keeps editing it.
        let again = apply_event(message, 6, "2026-12-03T09:00:00Z", Some(REV));
        let c = correcting(std::slice::from_ref(&again), REV, Some(since)).unwrap();
        assert_eq!(c.times, 6);
        assert_eq!(c.objects, vec!["Deployment/kube-system/metrics-server"]);
        // An apply of another revision is that revision's rollout, not a correction.
        let other = apply_event(message, 6, "2026-12-03T09:00:00Z", Some("main@sha1:ffff"));
        assert_eq!(correcting(&[other], REV, Some(since)), None);
        // Without a history to date the revision, only an apply seen twice counts.
        let once = apply_event(message, 1, "2026-12-03T09:00:00Z", Some(REV));
        assert_eq!(correcting(&[once], REV, None), None);
        assert!(correcting(&[again], REV, None).is_some());
    }

    #[test]
    fn what_is_not_a_change_log_is_no_correction() {
        let since: Timestamp = "2026-12-03T08:00:00Z".parse().unwrap();
        let late = "2026-12-03T09:00:00Z";
        for message in [
            "Reconciliation finished in 1.2s, next run in 10m0s",
            "Deployment/apps/podinfo unchanged",
            "Deployment/apps/podinfo configured\nhealth check failed",
            "",
        ] {
            let e = apply_event(message, 3, late, Some(REV));
            assert_eq!(correcting(&[e], REV, Some(since)), None, "{message:?}");
        }
        let mut warning = apply_event("Deployment/apps/podinfo configured", 3, late, Some(REV));
        warning.warning = true;
        assert_eq!(correcting(&[warning], REV, Some(since)), None);
    }
}
