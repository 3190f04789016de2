//! What each object is meant to be: drawn for a seed (mostly ready, some failing with their
//! controllers' real reasons, the workspace's hot failure), or as the story casts it.

use std::collections::HashMap;

use serde_json::Value;

use crate::facts::{FluxKind, Health};
use crate::flux::{Failure, Intent};
use crate::revisions::ObjKey;
use crate::rng::Rng;
use crate::scenario::Part;

/// Decides what an object is meant to be. `hot` is this workspace's widespread failure.
pub(super) fn decide(
    rng: &mut Rng,
    kind: FluxKind,
    obj: &Value,
    hot: Option<(FluxKind, &str, Failure)>,
    deps: &HashMap<ObjKey, Health>,
) -> Intent {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Some(dep) = obj
        .pointer("/spec/dependsOn/0/name")
        .and_then(Value::as_str)
    {
        let dep_key = (
            FluxKind::Kustomization,
            "flux-system".to_string(),
            dep.to_string(),
        );
        if deps.get(&dep_key).is_some_and(|h| *h != Health::Ready) {
            return Intent {
                health: Health::Failed,
                failure: Some(Failure::DependencyNotReady),
            };
        }
    }
    // The hot failure is its applier's alone: a source of the same name fails its own ways.
    if let Some((hot_kind, hot_name, failure)) = hot
        && hot_kind == kind
        && hot_name == name
        && rng.chance(0.6)
    {
        return Intent {
            health: Health::Failed,
            failure: Some(failure),
        };
    }
    let is_source = !matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease);
    let r = rng.next_u64() as f64 / u64::MAX as f64;
    let (retrying, stalled) = Failure::for_kind(kind);
    let (fail, stall, progress) = if is_source {
        (0.03, 0.0, 0.02)
    } else {
        (0.07, 0.015, 0.03)
    };
    if r < fail {
        Intent {
            health: Health::Failed,
            failure: Some(*rng.pick(retrying)),
        }
    } else if r < fail + stall {
        Intent {
            health: Health::Stalled,
            failure: Some(stalled),
        }
    } else if r < fail + stall + progress {
        Intent {
            health: Health::Progressing,
            failure: None,
        }
    } else {
        Intent {
            health: Health::Ready,
            failure: None,
        }
    }
}

/// What the story means an object to be: ready, unless it plays a part — the bad revision's
/// victim, a misconfiguration — or waits on a dependency that is not ready.
pub(super) fn decide_story(
    part: Part,
    kind: FluxKind,
    obj: &Value,
    deps: &HashMap<ObjKey, Health>,
) -> Intent {
    let failed = |health, failure| Intent {
        health,
        failure: Some(failure),
    };
    match part {
        Part::Bad => return failed(Health::Failed, Failure::HealthCheck),
        Part::Misconfigured(m) => {
            let (retrying, stalled) = Failure::for_kind(kind);
            return if m.stalled {
                failed(Health::Stalled, stalled)
            } else if kind == FluxKind::Kustomization {
                failed(Health::Failed, Failure::BuildFailed)
            } else {
                failed(Health::Failed, retrying[0])
            };
        }
        Part::None | Part::Suspended { .. } | Part::Drift(_) | Part::Runs(_) => {}
    }
    let waits = obj
        .pointer("/spec/dependsOn")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("name")?.as_str())
        .any(|dep| {
            let key = (kind, "flux-system".to_string(), dep.to_string());
            deps.get(&key).is_some_and(|h| *h != Health::Ready)
        });
    if waits {
        return failed(Health::Failed, Failure::DependencyNotReady);
    }
    Intent {
        health: Health::Ready,
        failure: None,
    }
}
