//! Halting a rollout from the TUI and resuming it.

use super::*;

/// The copy of `apps` on cluster `id`, suspended with `reason`, as the watch would show it.
fn suspended_apps(id: ClusterId, applied: &str, reason: &str) -> Event {
    let mut ks = sample("kustomization-suspended.yaml");
    ks["metadata"]["name"] = Value::from("apps");
    ks["metadata"]["namespace"] = Value::from("flux-system");
    ks["metadata"]["annotations"] = serde_json::json!({
        "fluxfleet.dev/suspended-by": "alice", "fluxfleet.dev/suspend-reason": reason,
    });
    ks["status"]["lastAppliedRevision"] = Value::from(applied);
    ks["status"]["lastAttemptedRevision"] = Value::from(applied);
    let summary = FluxSummary::of(FluxKind::Kustomization, &ks).unwrap();
    event(id, Change::Applied(summary))
}

#[test]
fn halting_a_rollout_suspends_where_it_has_not_arrived_and_resuming_undoes_exactly_that() {
    let mut m = rollout_model();
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    command(&mut m, "rollout ks");
    m.refresh_rows();
    key(&mut m, KeyCode::Char('o'));
    key(&mut m, KeyCode::Char('o'));
    m.refresh_rows();
    assert_eq!(m.screen().selected, Some(RowId::Rollout(apps.clone())));
    key(&mut m, KeyCode::Enter);
    m.refresh_rows();
    // H: the copies not on the newest revision (staging-2 tried it and failed; prod has not
    // had it), with the reason already given.
    key(&mut m, KeyCode::Char('H'));
    let confirm = m.confirming().cloned().expect("a confirmation");
    let new = "main@sha1:2222222222222222222222222222222222222222";
    assert_eq!(confirm.verb, Verb::Suspend);
    let mut targets: Vec<u32> = confirm.targets.iter().map(|(c, _)| c.0).collect();
    targets.sort_unstable();
    assert_eq!(targets, [3, 4, 5]);
    assert_eq!(confirm.reason, format!("halted rollout of {new}"));
    key(&mut m, KeyCode::Esc);
    // Suspended as asked, and one more suspended by hand for another reason.
    let old = "main@sha1:1111111111111111111111111111111111111111";
    let reason = format!("halted rollout of {new}");
    let events = vec![
        suspended_apps(ClusterId(3), old, &reason),
        suspended_apps(ClusterId(4), old, &reason),
        suspended_apps(ClusterId(5), old, &reason),
        suspended_apps(ClusterId(0), new, "CHG-1: node pool maintenance"),
    ];
    update(&mut m, Msg::Fleet(events));
    m.refresh_rows();
    // H again: nothing left to halt; U: exactly what the halt suspended.
    key(&mut m, KeyCode::Char('H'));
    assert!(m.confirming().is_none(), "{:?}", m.flash());
    key(&mut m, KeyCode::Char('U'));
    let confirm = m.confirming().cloned().expect("a confirmation");
    assert_eq!(confirm.verb, Verb::Resume);
    let mut targets: Vec<u32> = confirm.targets.iter().map(|(c, _)| c.0).collect();
    targets.sort_unstable();
    assert_eq!(targets, [3, 4, 5]);
    assert!(confirm.targets.iter().all(|(_, k)| *k == apps));
}
