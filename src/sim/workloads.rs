//! The workloads behind the Flux objects, served read-only: `apps/v1` Deployments and
//! ReplicaSets (StatefulSets and DaemonSets: none), `batch/v1` Jobs (CronJobs: none), core/v1
//! pods with label selectors and `limit`, their logs (`container`, `previous`, `tailLines`,
//! `limitBytes`) and their Warning events beside the stored ones. What each workload is and what
//! is wrong with it is derived on every request ([`shape`]); [`render`] writes its objects,
//! [`said`] its pods' events and logs.

pub mod render;
pub mod said;
pub mod shape;

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::body::{Body, json as respond};
use crate::resources::Res;
use crate::scenario::Cast;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::world::{Caller, Cluster, Role};
use shape::Workload;

/// The answer to a request for a workload resource, or None when the path is not one.
pub fn serve(
    cluster: &Cluster,
    story: Option<&Cast>,
    now: i64,
    caller: &Caller,
    method: &Method,
    segs: &[&str],
    q: &HashMap<String, String>,
) -> Option<Result<Response<Body>, ApiError>> {
    let (group, rest) = match segs {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group @ ("apps" | "batch"), "v1", rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (namespace, plural, name, sub) = match rest {
        ["namespaces", ns, plural] => (Some(*ns), *plural, None, None),
        ["namespaces", ns, plural, name] => (Some(*ns), *plural, Some(*name), None),
        ["namespaces", ns, plural, name, sub] => (Some(*ns), *plural, Some(*name), Some(*sub)),
        [plural] => (None, *plural, None, None),
        _ => return None,
    };
    let known = match group {
        "" => matches!(plural, "pods" | "events"),
        "apps" => matches!(
            plural,
            "deployments" | "replicasets" | "statefulsets" | "daemonsets"
        ),
        _ => matches!(plural, "jobs" | "cronjobs"),
    };
    // Events are the store's unless the workloads have some to add (below); a watch of them is
    // the store's too, and so is an Event created (recorded by a client).
    let store_events = name.is_some() || q.contains_key("watch") || method == Method::POST;
    if !known || (plural == "events" && store_events) {
        return None;
    }
    if method != Method::GET {
        return Some(Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("the simulator serves workloads read-only ({method})"),
        )));
    }
    if q.get("watch").is_some_and(|w| w == "true" || w == "1") {
        return Some(Err(ApiError::bad_request(
            "the simulator does not watch workloads",
        )));
    }
    let workloads = {
        let store = cluster.store();
        shape::all(cluster, &store, story)
    };
    let answer = match (plural, name, sub) {
        ("events", None, None) => return events(cluster, &workloads, namespace?, q, now),
        ("pods", Some(pod), Some("log")) => {
            log(cluster, &workloads, caller, namespace?, pod, q, now)
        }
        (_, _, Some(_)) => Err(ApiError::no_route()),
        (plural, None, None) => list(cluster, &workloads, plural, namespace, q, now),
        (plural, Some(name), None) => {
            get(&workloads, plural, namespace.unwrap_or_default(), name, now)
        }
    };
    cluster.counters.get.fetch_add(1, Ordering::Relaxed);
    Some(answer)
}

/// Every object of `plural` the workloads make, rendered.
fn objects(workloads: &[Workload], plural: &str, now: i64) -> Vec<Value> {
    use shape::Kind;
    let mut out: Vec<Value> = workloads
        .iter()
        .flat_map(|w| match (plural, w.kind) {
            ("deployments", Kind::Deployment) | ("jobs", Kind::Job) => {
                vec![render::workload(w, now)]
            }
            ("replicasets", _) => render::replica_sets(w, now),
            ("pods", _) => render::pods(w, now),
            _ => Vec::new(),
        })
        .collect();
    out.sort_by(|a, b| {
        let key = |v: &Value| {
            (
                v["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                v["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        };
        key(a).cmp(&key(b))
    });
    out
}

fn kind_of(plural: &str) -> (&'static str, &'static str) {
    match plural {
        "deployments" => ("apps/v1", "Deployment"),
        "replicasets" => ("apps/v1", "ReplicaSet"),
        "statefulsets" => ("apps/v1", "StatefulSet"),
        "daemonsets" => ("apps/v1", "DaemonSet"),
        "jobs" => ("batch/v1", "Job"),
        "cronjobs" => ("batch/v1", "CronJob"),
        "events" => ("v1", "Event"),
        _ => ("v1", "Pod"),
    }
}

fn list(
    cluster: &Cluster,
    workloads: &[Workload],
    plural: &str,
    namespace: Option<&str>,
    q: &HashMap<String, String>,
    now: i64,
) -> Result<Response<Body>, ApiError> {
    let labels = LabelSelector::parse(q.get("labelSelector").map_or("", String::as_str))?;
    let items: Vec<Value> = objects(workloads, plural, now)
        .into_iter()
        .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
        .filter(|o| {
            let labels_of: Vec<(&str, &str)> = o["metadata"]["labels"]
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect();
            labels.matches(labels_of.iter().copied())
        })
        .collect();
    Ok(list_body(cluster, plural, items, q))
}

/// A list of `items`, cut at `limit` (the rest counted, never continued).
fn list_body(
    cluster: &Cluster,
    plural: &str,
    mut items: Vec<Value>,
    q: &HashMap<String, String>,
) -> Response<Body> {
    let (api_version, kind) = kind_of(plural);
    let mut metadata = json!({"resourceVersion": cluster.store().resource_version().to_string()});
    if let Some(limit) = q.get("limit").and_then(|l| l.parse::<usize>().ok())
        && limit > 0
        && items.len() > limit
    {
        metadata["remainingItemCount"] = json!(items.len() - limit);
        metadata["continue"] = json!("");
        items.truncate(limit);
    }
    let body = json!({"apiVersion": api_version, "kind": format!("{kind}List"),
                      "metadata": metadata, "items": items});
    respond(StatusCode::OK, Bytes::from(body.to_string()))
}

fn get(
    workloads: &[Workload],
    plural: &str,
    namespace: &str,
    name: &str,
    now: i64,
) -> Result<Response<Body>, ApiError> {
    let (api_version, _) = kind_of(plural);
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    objects(workloads, plural, now)
        .into_iter()
        .find(|o| o["metadata"]["namespace"] == namespace && o["metadata"]["name"] == name)
        .map(|o| respond(StatusCode::OK, Bytes::from(o.to_string())))
        .ok_or_else(|| ApiError::not_found(group, plural, name))
}

/// Warning events of the workloads in `namespace` that the field selector asks for, with the
/// stored events that match it; None (the store's answer) when the workloads have none to add.
fn events(
    cluster: &Cluster,
    workloads: &[Workload],
    namespace: &str,
    q: &HashMap<String, String>,
    now: i64,
) -> Option<Result<Response<Body>, ApiError>> {
    let fields = match FieldSelector::parse(
        q.get("fieldSelector").map_or("", String::as_str),
        Res::Event.field_selectors(),
    ) {
        Ok(fields) => fields,
        Err(e) => return Some(Err(e)),
    };
    let matches = |v: &Value| {
        fields.matches(|f| {
            let path = match f {
                "source" => "/source/component".to_string(),
                other => format!("/{}", other.replace('.', "/")),
            };
            v.pointer(&path).map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        })
    };
    let ours: Vec<Value> = workloads
        .iter()
        .filter(|w| w.namespace == namespace)
        .flat_map(|w| said::events(w, now))
        .filter(|e| matches(e))
        .collect();
    if ours.is_empty() {
        return None;
    }
    let mut items: Vec<Value> = cluster
        .store()
        .list(Res::Event, Some(namespace))
        .map(|o| o.value())
        .filter(|e| matches(e))
        .collect();
    items.extend(ours);
    cluster.counters.list.fetch_add(1, Ordering::Relaxed);
    Some(Ok(list_body(cluster, "events", items, q)))
}

/// A pod's log, as text: `tailLines` then `limitBytes` applied as the kubelet applies them —
/// except by a hostile workload, which sends its 10 MB line whatever was asked.
#[allow(clippy::too_many_arguments)]
fn log(
    cluster: &Cluster,
    workloads: &[Workload],
    caller: &Caller,
    namespace: &str,
    pod: &str,
    q: &HashMap<String, String>,
    now: i64,
) -> Result<Response<Body>, ApiError> {
    if cluster.faults().forbidden_logs || caller.role == Role::Nobody {
        let user = &caller.user;
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            format!(
                "pods \"{pod}\" is forbidden: User \"{user}\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"{namespace}\""
            ),
        )
        .with_details("", "pods", pod));
    }
    let found = workloads
        .iter()
        .filter(|w| w.namespace == namespace)
        .find_map(|w| {
            render::pods(w, now)
                .into_iter()
                .find(|p| p["metadata"]["name"] == pod)
                .map(|p| (w, p))
        });
    let Some((workload, value)) = found else {
        return Err(ApiError::not_found("", "pods", pod));
    };
    if let Some(container) = q.get("container")
        && container != shape::CONTAINER
    {
        return Err(ApiError::bad_request(format!(
            "container {container} is not valid for pod {pod}"
        )));
    }
    // As kube-apiserver: a pod on no node has no log to stream, and the answer is 204 with
    // nothing in it (not an error).
    if value["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        let mut response = Response::new(crate::body::full(Bytes::new()));
        *response.status_mut() = StatusCode::NO_CONTENT;
        return Ok(response);
    }
    let previous = q.get("previous").is_some_and(|p| p == "true");
    let text = said::log(workload, &value, previous, now)
        .map_err(|said::NoLog(why)| ApiError::bad_request(why))?;
    let text = if workload.fault == shape::Fault::Hostile {
        text
    } else {
        bounded(text, q)
    };
    let mut response = Response::new(crate::body::full(Bytes::from(text)));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    Ok(response)
}

/// The last `tailLines` lines, then at most `limitBytes` of them.
fn bounded(text: String, q: &HashMap<String, String>) -> String {
    let mut text = match q.get("tailLines").and_then(|n| n.parse::<usize>().ok()) {
        Some(n) => {
            let lines: Vec<&str> = text.lines().collect();
            let start = lines.len().saturating_sub(n);
            lines[start..].iter().map(|l| format!("{l}\n")).collect()
        }
        None => text,
    };
    if let Some(limit) = q.get("limitBytes").and_then(|n| n.parse::<usize>().ok()) {
        let mut cut = limit.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}
