//! Kubernetes Events about one Flux object, as the detail view shows them (like `flux events
//! --for Kind/name`): what the controller said, how often, and when last.

use crate::json::At;
use jiff::Timestamp;
use serde_json::Value;

/// One core/v1 (or events.k8s.io) Event, read leniently: a field missing or malformed is left
/// empty rather than dropping the event.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectEvent {
    pub warning: bool,
    pub reason: String,
    pub message: String,
    /// How many times it happened (client-go aggregates identical events).
    pub count: u32,
    pub last_seen: Option<Timestamp>,
    /// The controller that reported it.
    pub from: String,
    /// What it is about, as `flux events` names it in OBJECT: `Kind/name` of its involved
    /// object (an object's events come with its source's, as `flux events --for` shows them).
    pub object: String,
    /// The revision a Flux controller annotates it with (`<group>/revision`): what the object
    /// was reconciling when it was said.
    pub revision: Option<String>,
}

/// The longest `Kind/name` kept: a kind and a name as long as Kubernetes allows.
const OBJECT_LIMIT: usize = 64 + 1 + 253;

impl ObjectEvent {
    pub fn from_value(event: &Value) -> ObjectEvent {
        let text = |path: &str| event.at(path).and_then(Value::as_str).unwrap_or_default();
        let time = |path: &str| text(path).parse::<Timestamp>().ok();
        let last_seen = time("/lastTimestamp")
            .or_else(|| time("/series/lastObservedTime"))
            .or_else(|| time("/eventTime"))
            .or_else(|| time("/firstTimestamp"))
            .or_else(|| time("/metadata/creationTimestamp"));
        let count = event
            .at("/count")
            .or_else(|| event.at("/series/count"))
            .and_then(Value::as_u64)
            .map_or(1, |c| u32::try_from(c).unwrap_or(u32::MAX));
        let from = [
            text("/source/component"),
            text("/reportingComponent"),
            text("/reportingController"),
        ]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or_default();
        ObjectEvent {
            warning: text("/type") == "Warning",
            reason: text("/reason").to_string(),
            message: text("/message").trim().to_string(),
            count: count.max(1),
            last_seen,
            from: from.to_string(),
            object: format!(
                "{}/{}",
                text("/involvedObject/kind"),
                text("/involvedObject/name")
            )
            .chars()
            .take(OBJECT_LIMIT)
            .collect(),
            revision: revision_of(event),
        }
    }

    /// Every item of an EventList, newest first (events without a time last).
    pub fn from_list(list: &Value) -> Vec<ObjectEvent> {
        let mut events: Vec<ObjectEvent> = list
            .get("items")
            .and_then(Value::as_array)
            .map(|items| items.iter().map(ObjectEvent::from_value).collect())
            .unwrap_or_default();
        newest_first(&mut events);
        events
    }
}

/// The `<group>/revision` annotation Flux's controllers put on their events, bounded.
fn revision_of(event: &Value) -> Option<String> {
    let annotations = event.at("/metadata/annotations")?.as_object()?;
    annotations
        .iter()
        .find(|(k, _)| k.ends_with(".fluxcd.io/revision"))
        .and_then(|(_, v)| v.as_str())
        .map(|r| super::bounds::bounded(r, super::bounds::limits::SHORT).to_string())
}

/// Events newest first, those without a time last (a stable sort: several lists merged keep
/// their order where times tie).
pub fn newest_first(events: &mut [ObjectEvent]) {
    events.sort_by_key(|e| std::cmp::Reverse(e.last_seen));
}

/// What `flux events --for Kind/name` shows the events of, beside the object itself: its
/// source (`spec.sourceRef`, `spec.chartRef`), and for a HelmRelease of `spec.chart` both the
/// HelmRepository it names and the HelmChart Flux makes from it.
pub fn told_with(o: &super::FluxSummary) -> Vec<super::ObjectKey> {
    let mut out = vec![o.key.clone()];
    if let Some(r) = o.source.as_deref()
        && let Some(kind) = super::FluxKind::from_kind(&r.kind)
    {
        out.push(super::ObjectKey::new(kind, &r.namespace, &r.name));
    }
    if let Some(made) = o
        .source
        .as_deref()
        .and_then(|r| super::graph::source_key(&o.key, r))
        && !out.contains(&made)
    {
        out.push(made);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// The objects `flux events --for Kind/name` lists events of (flux2's `fluxKindMap`).
    #[test]
    fn an_object_is_told_with_its_source_as_flux_events_tells_it() {
        use crate::fleet::{FluxKind, FluxSummary, ObjectKey};
        let told = |kind: FluxKind, v: serde_json::Value| {
            let o = FluxSummary::of(kind, &v).unwrap();
            told_with(&o)
                .iter()
                .map(|k| format!("{}/{}/{}", k.kind, k.namespace, k.name))
                .collect::<Vec<_>>()
        };
        let ks = json!({"metadata": {"name": "apps", "namespace": "flux-system"},
                        "spec": {"sourceRef": {"kind": "GitRepository", "name": "fleet"}}});
        assert_eq!(
            told(FluxKind::Kustomization, ks),
            [
                "Kustomization/flux-system/apps",
                "GitRepository/flux-system/fleet"
            ]
        );
        let hr = json!({"metadata": {"name": "hello", "namespace": "apps"},
                        "spec": {"chart": {"spec": {"chart": "hello", "sourceRef":
                            {"kind": "HelmRepository", "name": "charts", "namespace": "flux-system"}}}}});
        assert_eq!(
            told(FluxKind::HelmRelease, hr),
            [
                "HelmRelease/apps/hello",
                "HelmRepository/flux-system/charts",
                "HelmChart/flux-system/apps-hello"
            ]
        );
        let by_ref = json!({"metadata": {"name": "redis", "namespace": "data"},
                            "spec": {"chartRef": {"kind": "OCIRepository", "name": "redis",
                                                  "namespace": "flux-system"}}});
        assert_eq!(
            told(FluxKind::HelmRelease, by_ref),
            ["HelmRelease/data/redis", "OCIRepository/flux-system/redis"]
        );
        let alone = json!({"metadata": {"name": "fleet", "namespace": "flux-system"}});
        let key = ObjectKey::new(FluxKind::GitRepository, "flux-system", "fleet");
        let o = FluxSummary::of(FluxKind::GitRepository, &alone).unwrap();
        assert_eq!(told_with(&o), [key]);
    }

    #[test]
    fn an_aggregated_warning_keeps_its_count_and_last_time() {
        let e = ObjectEvent::from_value(&json!({
            "type": "Warning", "reason": "HealthCheckFailed", "message": "timeout\n",
            "count": 3, "firstTimestamp": "2026-08-20T11:07:11Z",
            "lastTimestamp": "2026-08-20T11:19:12Z",
            "source": {"component": "kustomize-controller"},
        }));
        assert!(e.warning);
        assert_eq!(e.reason, "HealthCheckFailed");
        assert_eq!(e.message, "timeout");
        assert_eq!(e.count, 3);
        assert_eq!(e.last_seen, Some("2026-08-20T11:19:12Z".parse().unwrap()));
        assert_eq!(e.from, "kustomize-controller");
    }

    #[test]
    fn new_style_events_use_event_time_and_series() {
        let e = ObjectEvent::from_value(&json!({
            "type": "Normal", "reason": "Progressing",
            "eventTime": "2026-08-20T11:00:00.000000Z",
            "series": {"count": 7, "lastObservedTime": "2026-08-20T11:30:00.000000Z"},
            "reportingController": "helm-controller",
        }));
        assert!(!e.warning);
        assert_eq!(e.count, 7);
        assert_eq!(e.last_seen, Some("2026-08-20T11:30:00Z".parse().unwrap()));
        assert_eq!(e.from, "helm-controller");
    }

    #[test]
    fn a_list_is_newest_first_and_malformed_items_stay() {
        let list = json!({"items": [
            {"reason": "A", "lastTimestamp": "2026-08-20T10:00:00Z"},
            {"reason": "B", "lastTimestamp": "2026-08-20T12:00:00Z"},
            {"reason": 5, "lastTimestamp": "yesterday"},
        ]});
        let reasons: Vec<String> = ObjectEvent::from_list(&list)
            .into_iter()
            .map(|e| e.reason)
            .collect();
        assert_eq!(reasons, ["B", "A", ""]);
        assert_eq!(ObjectEvent::from_list(&json!({"kind": "Status"})), []);
    }
}
