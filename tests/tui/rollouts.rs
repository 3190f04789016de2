//! The TUI's rollouts: each thing's spread, the matrix ring by ring with how each ring
//! delivered, history without collectors, the fleet map's health, freshness and rollout, and
//! halting and resuming a rollout.

use super::*;

mod halt;
mod map;
mod matrix;

/// Three rings of two clusters each, a new revision of `apps` on its way: dev runs it, one
/// staging cluster fails on it (for 50 minutes: stuck), prod runs the one before.
fn rollout_model() -> Model {
    let mut index = Index::new();
    let mut events = Vec::new();
    let old = "main@sha1:1111111111111111111111111111111111111111";
    let new = "main@sha1:2222222222222222222222222222222222222222";
    let ago = |m: i64| (now() - jiff::SignedDuration::from_mins(m)).to_string();
    let clusters: [(&str, &str, &str, Option<&str>, i64); 6] = [
        ("dev-1", "dev", new, None, 120),
        ("dev-2", "dev", new, None, 90),
        ("staging-1", "staging", new, None, 60),
        ("staging-2", "staging", old, Some(new), 50),
        ("prod-1", "prod", old, None, 3000),
        ("prod-2", "prod", old, None, 3000),
    ];
    for (i, (name, ws, applied, tried, minutes)) in clusters.into_iter().enumerate() {
        let id = ClusterId(i as u32);
        index.add_cluster(ClusterInfo {
            key: key_of(id),
            ..ClusterInfo::new(name, ws)
        });
        events.push(event(id, Change::Connection(live())));
        let mut ks = sample(if tried.is_some() {
            "kustomization-health-check-failed.yaml"
        } else {
            "kustomization-ready.yaml"
        });
        ks["metadata"]["name"] = Value::from("apps");
        let status = &mut ks["status"];
        status["lastAppliedRevision"] = Value::from(applied);
        status["lastAttemptedRevision"] = Value::from(tried.unwrap_or(applied));
        status["history"] = serde_json::json!([
            {"firstReconciled": ago(minutes), "metadata": {"revision": applied}}
        ]);
        for c in status["conditions"].as_array_mut().unwrap() {
            c["lastTransitionTime"] = Value::from(ago(minutes));
        }
        let mut hr = sample("helmrelease-ready.yaml");
        let chart = if applied == new { "6.7.1" } else { "6.7.0" };
        hr["status"]["history"][0]["chartVersion"] = Value::from(chart);
        hr["status"]["lastAttemptedRevision"] = Value::from(chart);
        events.push(event(
            id,
            Change::Replaced(
                FluxKind::Kustomization,
                vec![FluxSummary::of(FluxKind::Kustomization, &ks).unwrap()],
            ),
        ));
        events.push(event(
            id,
            Change::Replaced(
                FluxKind::HelmRelease,
                vec![FluxSummary::of(FluxKind::HelmRelease, &hr).unwrap()],
            ),
        ));
    }
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let mut settings = Settings::default();
    settings.rollout.rings.patterns = vec!["dev".into(), "staging".into(), "prod".into()];
    let mut model = Model::new(index, keymap, Vec::new(), now()).with_settings(settings);
    update(&mut model, Msg::Fleet(events));
    model
}
