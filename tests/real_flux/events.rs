//! The Events the controllers left, read as `flux events` shows them.

use serde_json::Value;

use super::object;

/// The Events the controllers (and fluxfleet's actions) left in flux-system, read as the detail
/// view and MCP's `describe_object` read an object's: who reported each, how many times (the
/// recorder's aggregation), when last, newest first.
#[test]
fn the_controllers_events_read_as_flux_events_shows_them() {
    use fluxfleet::fleet::ObjectEvent;
    let list = object("events-flux-system.yaml");
    let of = |kind: &str, name: &str| {
        let items: Vec<Value> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["involvedObject"]["kind"] == kind && e["involvedObject"]["name"] == name)
            .cloned()
            .collect();
        ObjectEvent::from_list(&serde_json::json!({ "items": items }))
    };
    let held = of("Kustomization", "after-broken");
    let newest = &held[0];
    assert_eq!(newest.reason, "DependencyNotReady");
    assert_eq!(newest.from, "kustomize-controller");
    assert_eq!(
        newest.message,
        "Dependencies do not meet ready condition, retrying in 30s"
    );
    assert!(newest.count > 1, "aggregated: {}", newest.count);
    let hello = of("HelmRelease", "hello");
    let said: Vec<(&str, &str)> = hello
        .iter()
        .map(|e| (e.from.as_str(), e.reason.as_str()))
        .collect();
    for expected in [
        ("helm-controller", "InstallSucceeded"),
        ("helm-controller", "UpgradeSucceeded"),
        ("fluxfleet", "ForceRequested"),
        ("fluxfleet", "ResetRequested"),
    ] {
        assert!(said.contains(&expected), "{expected:?} in {said:?}");
    }
    // Every event says who reported it and when; the newest comes first.
    let all = ObjectEvent::from_list(&list);
    assert!(
        all.iter()
            .all(|e| !e.from.is_empty() && e.last_seen.is_some())
    );
    assert!(all.windows(2).all(|w| w[0].last_seen >= w[1].last_seen));
    assert!(all.iter().any(|e| e.warning && e.reason == "BuildFailed"));
}
