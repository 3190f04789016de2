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
}

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
        }
    }

    /// Every item of an EventList, newest first (events without a time last).
    pub fn from_list(list: &Value) -> Vec<ObjectEvent> {
        let mut events: Vec<ObjectEvent> = list
            .get("items")
            .and_then(Value::as_array)
            .map(|items| items.iter().map(ObjectEvent::from_value).collect())
            .unwrap_or_default();
        events.sort_by_key(|e| std::cmp::Reverse(e.last_seen));
        events
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

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
