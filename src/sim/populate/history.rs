//! The runs an object's status records from before the simulator started: a Kustomization's
//! newest reconcile and its count, the flapping release's Helm history.

use serde_json::{Value, json};

use crate::clock::Clock;
use crate::flux;
use crate::rng::Rng;
use crate::scenario::{Part, Runs};

/// A Kustomization rendered as it first reconciled its revision `ran_at` seconds before start
/// has reconciled it every interval since (unless its controller stopped): its newest run was
/// within the last half interval, and counted.
pub(super) fn ran_since(
    obj: &mut Value,
    (ran_at, part): (i64, Part),
    clock: &Clock,
    rng: &mut Rng,
) {
    if part == Part::Runs(Runs::Stale) {
        return;
    }
    let interval = obj
        .pointer("/spec/interval")
        .and_then(Value::as_str)
        .and_then(flux::parse_duration)
        .map_or(600, |s| s as i64)
        .max(60);
    let Some(newest) = obj.pointer_mut("/status/history/0") else {
        return;
    };
    let last = (rng.below(interval as usize / 2) as i64).min(ran_at);
    newest["lastReconciled"] = json!(clock.before_start(last));
    newest["totalReconciliations"] = json!(1 + (ran_at - last) / interval);
}

/// The story's flapping release: its upgrades timed out now and then and the retry got
/// through, so its Helm history alternates — deployed now, after a failed release, after one
/// deployed (superseded since), after another failed.
pub(super) fn flapped(obj: &mut Value, clock: &Clock) {
    let Some(current) = obj.pointer("/status/history/0").cloned() else {
        return;
    };
    let mut entries = Vec::new();
    for (back, status) in [
        (0, "deployed"),
        (1, "failed"),
        (2, "superseded"),
        (3, "failed"),
        (4, "superseded"),
    ] {
        let mut e = current.clone();
        e["version"] = json!(5 - back);
        e["status"] = json!(status);
        e["action"] = json!(if back == 4 { "install" } else { "upgrade" });
        let at = clock.before_start(3_600 * back + 1_800);
        e["firstDeployed"] = json!(at);
        e["lastDeployed"] = json!(at);
        entries.push(e);
    }
    obj["status"]["history"] = Value::Array(entries);
}
