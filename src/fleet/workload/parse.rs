//! Reading the API's answers into the evidence's facts, leniently (a field missing or malformed
//! is left empty, never an error) and bounded: what the Flux object names, a workload's
//! selector, replicas and conditions, its pods worst first, Warning events, a log tail.

use std::collections::HashSet;

use serde_json::Value;

use super::{
    Container, Kind, Log, Pod, Replicas, WarningEvent, Workload, WorkloadCondition, WorkloadRef,
    limits,
};
use crate::fleet::bounds::bounded;
use crate::json::At;

fn text<'v>(value: &'v Value, path: &str) -> &'v str {
    value.at(path).and_then(Value::as_str).unwrap_or_default()
}

fn number(value: &Value, path: &str) -> Option<u32> {
    value
        .at(path)
        .and_then(Value::as_u64)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// A name from a cluster, bounded as Kubernetes bounds names.
pub fn bounded_name(text: &str) -> String {
    bounded(text, 253).into()
}

fn kept(text: &str) -> String {
    bounded(text.trim(), limits::MESSAGE).into()
}

/// The workloads a Kustomization deploys: those its health check's message names first (the
/// message lists what it waited for: `[Deployment/ns/name status: 'InProgress']`), then the
/// workload kinds of its `status.inventory`.
pub fn kustomization_workloads(object: &Value) -> Vec<WorkloadRef> {
    let mut out = Vec::new();
    for condition in object
        .at("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if matches!(text(condition, "/type"), "Ready" | "Healthy") {
            out.extend(named_in(text(condition, "/message")));
        }
    }
    for entry in object
        .at("/status/inventory/entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(id) = inventory_entry(text(entry, "/id")) {
            out.push(id);
        }
    }
    let mut seen = HashSet::new();
    out.retain(|r| seen.insert(r.clone()));
    out
}

/// An inventory id, `<namespace>_<name>_<group>_<kind>`, when it names a workload.
pub fn inventory_entry(id: &str) -> Option<WorkloadRef> {
    let mut parts = id.split('_');
    let (namespace, name, group, kind) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || namespace.is_empty() || name.is_empty() {
        return None;
    }
    let kind = Kind::from_kind(kind)?;
    (group == kind.group()).then(|| WorkloadRef {
        kind,
        namespace: bounded(namespace, 63).into(),
        name: bounded(name, 253).into(),
    })
}

/// Every `Kind/namespace/name` of a workload kind in `message`.
pub fn named_in(message: &str) -> Vec<WorkloadRef> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
    let mut out = Vec::new();
    for kind in Kind::ALL {
        let needle = format!("{kind}/");
        let mut rest = message;
        while let Some(at) = rest.find(&needle) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + needle.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric()) {
                continue;
            }
            let namespace: String = rest.chars().take_while(|c| name_char(*c)).collect();
            let after = &rest[namespace.len()..];
            let Some(after) = after.strip_prefix('/') else {
                continue;
            };
            let name: String = after.chars().take_while(|c| name_char(*c)).collect();
            if !namespace.is_empty() && !name.is_empty() && namespace.len() <= 63 {
                out.push(WorkloadRef {
                    kind,
                    namespace,
                    name: bounded(&name, 253).into(),
                });
            }
        }
    }
    out
}

/// The label selector of a workload's pods, as a `labelSelector` query value; None when it
/// selects none (a CronJob's pods belong to its Jobs) or selects everything.
pub fn selector(workload: &Value) -> Option<String> {
    let selector = workload.at("/spec/selector")?;
    let mut terms = Vec::new();
    for (key, value) in selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        terms.push(format!("{key}={}", value.as_str()?));
    }
    for expression in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = text(expression, "/key");
        let values: Vec<&str> = expression
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        terms.push(match text(expression, "/operator") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return None,
        });
    }
    (!terms.is_empty()).then(|| terms.join(","))
}

/// What the workload's own object says: replicas and conditions.
pub fn workload(id: WorkloadRef, value: &Value) -> Workload {
    let n = |path: &str| number(value, path).unwrap_or(0);
    let replicas = match id.kind {
        Kind::Deployment | Kind::StatefulSet => Some(Replicas {
            desired: number(value, "/spec/replicas").unwrap_or(1),
            updated: n("/status/updatedReplicas"),
            ready: n("/status/readyReplicas"),
            available: n("/status/availableReplicas"),
        }),
        Kind::DaemonSet => Some(Replicas {
            desired: n("/status/desiredNumberScheduled"),
            updated: n("/status/updatedNumberScheduled"),
            ready: n("/status/numberReady"),
            available: n("/status/numberAvailable"),
        }),
        Kind::Job | Kind::CronJob => None,
    };
    let conditions = value
        .at("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(16)
        .map(|c| WorkloadCondition {
            kind: bounded(text(c, "/type"), 64).into(),
            status: bounded(text(c, "/status"), 16).into(),
            reason: bounded(text(c, "/reason"), 128).into(),
            message: kept(text(c, "/message")),
        })
        .collect();
    Workload {
        id,
        missing: false,
        replicas,
        conditions,
        pods: Vec::new(),
        pods_total: 0,
        pods_cut: false,
        events: Vec::new(),
        unread: Vec::new(),
    }
}

/// A workload its Flux object names that is not on the cluster.
pub fn missing(id: WorkloadRef) -> Workload {
    Workload {
        missing: true,
        ..workload(id, &Value::Null)
    }
}

fn pod(value: &Value) -> Pod {
    let containers = value
        .at("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(16)
        .map(|c| {
            let state = |path: &str| -> Option<(String, String)> {
                let s = c.at(path)?;
                Some((
                    bounded(text(s, "/reason"), 128).into(),
                    kept(text(s, "/message")),
                ))
            };
            let ended = |path: &str| -> Option<(String, i32)> {
                let s = c.at(path)?;
                let code = s.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
                Some((
                    bounded(text(s, "/reason"), 128).into(),
                    i32::try_from(code).unwrap_or(i32::MAX),
                ))
            };
            Container {
                name: bounded(text(c, "/name"), 253).into(),
                image: bounded(text(c, "/image"), 512).into(),
                ready: c.get("ready").and_then(Value::as_bool).unwrap_or(false),
                restarts: number(c, "/restartCount").unwrap_or(0),
                waiting: state("/state/waiting"),
                terminated: ended("/state/terminated"),
                last_terminated: ended("/lastState/terminated"),
                log: None,
            }
        })
        .collect();
    let conditions = value.at("/status/conditions").and_then(Value::as_array);
    let condition = |kind: &str| {
        conditions
            .into_iter()
            .flatten()
            .find(|c| text(c, "/type") == kind)
    };
    let unschedulable = condition("PodScheduled")
        .filter(|c| text(c, "/status") == "False")
        .map(|c| {
            (
                bounded(text(c, "/reason"), 128).into(),
                kept(text(c, "/message")),
            )
        });
    Pod {
        name: bounded(text(value, "/metadata/name"), 253).into(),
        phase: bounded(text(value, "/status/phase"), 32).into(),
        ready: condition("Ready").is_some_and(|c| text(c, "/status") == "True"),
        unschedulable,
        containers,
    }
}

/// How bad a pod is, for worst-first order: lower is worse.
pub fn rank(pod: &Pod) -> u8 {
    let waiting = pod
        .containers
        .iter()
        .filter_map(|c| c.waiting.as_ref().map(|w| w.0.as_str()));
    if pod.containers.iter().any(|c| {
        c.waiting
            .as_ref()
            .is_some_and(|w| w.0 == "CrashLoopBackOff")
    }) {
        return 0;
    }
    if waiting
        .clone()
        .any(|w| w != "ContainerCreating" && w != "PodInitializing")
    {
        return 1;
    }
    if pod.unschedulable.is_some() {
        return 2;
    }
    if pod.phase == "Failed" {
        return 3;
    }
    if !pod.ready && pod.phase != "Succeeded" {
        return 4;
    }
    5
}

/// A PodList's pods, the worst first, at most [`limits::PODS_KEPT`]; with how many the
/// selector matched and whether that is more than were listed.
pub fn pods(list: &Value) -> (Vec<Pod>, usize, bool) {
    let items = list.get("items").and_then(Value::as_array);
    let listed = items.map_or(0, Vec::len);
    let remaining = list
        .at("/metadata/remainingItemCount")
        .and_then(Value::as_u64)
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let more = !text(list, "/metadata/continue").is_empty() || remaining > 0;
    let mut pods: Vec<Pod> = items.into_iter().flatten().map(pod).collect();
    pods.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.name.cmp(&b.name)));
    pods.truncate(limits::PODS_KEPT);
    (pods, listed.saturating_add(remaining), more)
}

/// The Warning events of an EventList about the objects `about` names (`Pod/<name>`,
/// `Deployment/<name>` …), the pods named after `workload` (`<workload>-…`: those of a page not
/// listed) and its ReplicaSets (`FailedCreate`: a quota, an admission webhook), the newest first,
/// at most [`limits::EVENTS`].
pub fn events(list: &Value, about: &HashSet<String>, workload: &str) -> Vec<WarningEvent> {
    let prefixes = [
        format!("Pod/{workload}-"),
        format!("ReplicaSet/{workload}-"),
    ];
    let mut out: Vec<WarningEvent> = list
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| text(e, "/type") == "Warning")
        .filter_map(|e| {
            let object = format!(
                "{}/{}",
                text(e, "/involvedObject/kind"),
                text(e, "/involvedObject/name")
            );
            let ours = about.contains(&object) || prefixes.iter().any(|p| object.starts_with(p));
            ours.then(|| {
                let event = crate::fleet::ObjectEvent::from_value(e);
                WarningEvent {
                    object: bounded(&object, 300).into(),
                    reason: bounded(&event.reason, 128).into(),
                    message: kept(uncombined(&event.message)),
                    count: event.count,
                    last_seen: event.last_seen,
                }
            })
        })
        .collect();
    out.sort_by_key(|e| std::cmp::Reverse(e.last_seen));
    out.truncate(limits::EVENTS);
    out
}

/// An event's message without the `(combined from similar events): ` the API server's event
/// recorder puts before one that stands for several (a ReplicaSet's `FailedCreate` retried).
fn uncombined(message: &str) -> &str {
    message
        .strip_prefix("(combined from similar events): ")
        .unwrap_or(message)
}

/// How a log read ended, beside the bytes it brought.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogRead {
    /// The server had more than was read.
    pub cut: bool,
    /// The server answered 204 No Content: it has no log to give.
    pub no_content: bool,
}

/// A log tail from the bytes read: its last [`limits::LOG_LINES`] lines, each bounded.
pub fn log(bytes: &[u8], read: LogRead, previous: bool) -> Log {
    let LogRead { cut, no_content } = read;
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(limits::LOG_LINES);
    let lines: Vec<String> = lines[start..]
        .iter()
        .map(|l| bounded(l, limits::MESSAGE).into())
        .collect();
    let empty = match (lines.is_empty(), no_content) {
        (false, _) => None,
        (true, true) => Some(super::EmptyLog::NoLog),
        (true, false) => Some(super::EmptyLog::NothingWritten),
    };
    Log {
        previous,
        lines,
        cut,
        unread: None,
        empty,
    }
}
