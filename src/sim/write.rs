//! PATCH, as the API server does it for custom resources: JSON merge patch on the object (never
//! touching `.status`) or on the status subresource (touching only `.status`); a spec change bumps
//! `metadata.generation`; a `metadata.resourceVersion` in the patch is a precondition.

use std::sync::Arc;

use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;

use super::body::{Body, json};
use super::controller::Msg;
use super::merge::merge_patch;
use super::request::Filter;
use super::resources::Res;
use super::state::State;
use super::status::{ApiError, qualified};
use super::world::Cluster;

/// The largest request body the API server accepts (3 MiB).
const MAX_BODY: usize = 3 * 1024 * 1024;

const PROTECTED: [&str; 6] = [
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "generation",
    "managedFields",
];

pub async fn patch(
    state: &Arc<State>,
    cluster: &Arc<Cluster>,
    filter: &Filter,
    ns: &str,
    name: &str,
    status_only: bool,
    req: Request<Incoming>,
) -> Result<http::Response<Body>, ApiError> {
    let res = filter.res;
    let patch = read_patch(req).await?;
    let mut store = cluster.store();
    let current = store
        .get(res, ns, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(res.group(), res.plural(), name))?;
    let old = current.value();
    if let Some(want) = patch
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        && want != current.rv.to_string()
    {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "Conflict",
            format!("Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again", qualified(res.plural(), res.group())),
        )
        .with_details(res.group(), res.plural(), name));
    }
    let mut new = patched(&old, &patch, status_only);
    new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
    if new == old {
        // A no-op patch changes nothing, not even the resourceVersion.
        return Ok(json(StatusCode::OK, filter.render(&current)));
    }
    if !status_only && new.get("spec") != old.get("spec") {
        bump_generation(&mut new, &old);
    }
    let stored = store.put(res, new, current.intent);
    drop(store);
    cluster.notify(stored.rv);
    if let Res::Flux(kind) = res {
        // The controller decides whether this asks for a reconcile.
        let _ = state.controller.send(Msg::Changed {
            cluster: cluster.index,
            kind,
            namespace: ns.to_string(),
            name: name.to_string(),
        });
    }
    Ok(json(StatusCode::OK, filter.render(&stored)))
}

/// The body of a PATCH: a JSON merge patch (the only kind the simulator takes), an object,
/// at most `MAX_BODY` bytes.
/// POST of a `core/v1` Event into namespace `ns`, as the API server creates one: a name from
/// `generateName` when none is given, a uid and a creation time; kept with the cluster's other
/// events (the oldest dropped beyond the store's limit) and seen by their lists and watches.
pub async fn create_event(
    cluster: &Arc<Cluster>,
    (filter, ns, now): (&Filter, &str, String),
    req: Request<Incoming>,
) -> Result<http::Response<Body>, ApiError> {
    let mut event = read_json(req, "application/json").await?;
    if event["kind"] != "Event" || event["apiVersion"] != "v1" {
        return Err(ApiError::bad_request(
            "the body is not a v1 Event (apiVersion: v1, kind: Event)",
        ));
    }
    let meta = &event["metadata"];
    if meta["namespace"].as_str().is_some_and(|n| n != ns) {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let involved = event["involvedObject"]["namespace"].as_str().unwrap_or(ns);
    if involved != ns {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!(
                "Event is invalid: involvedObject.namespace: Invalid value: {involved:?}: does not match event.namespace"
            ),
        ));
    }
    let mut store = cluster.store();
    let name = match (meta["name"].as_str(), meta["generateName"].as_str()) {
        (Some(name), _) if !name.is_empty() => name.to_string(),
        (_, Some(prefix)) if !prefix.is_empty() => {
            let mut rng = super::rng::Rng::fork(store.rv(), prefix);
            format!("{prefix}{}", rng.hex(5))
        }
        _ => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                "Event is invalid: metadata.name: Required value: name or generateName is required",
            ));
        }
    };
    if store.get(Res::Event, ns, &name).is_some() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "AlreadyExists",
            format!("events \"{name}\" already exists"),
        ));
    }
    let uid = super::populate::uuid(&mut super::rng::Rng::fork(store.rv(), &name));
    event["metadata"]["name"] = Value::from(name);
    event["metadata"]["namespace"] = Value::from(ns);
    event["metadata"]["uid"] = Value::from(uid);
    event["metadata"]["creationTimestamp"] = Value::from(now);
    let stored = store.put(Res::Event, event, None);
    drop(store);
    cluster.notify(stored.rv);
    Ok(json(StatusCode::CREATED, filter.render(&stored)))
}

/// A JSON object of media type `media`, at most [`MAX_BODY`].
async fn read_json(req: Request<Incoming>, media: &str) -> Result<Value, ApiError> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let sent = content_type.split(';').next().unwrap_or("").trim();
    if sent != media {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {media} (the simulator does not implement {sent:?})"
            ),
        ));
    }
    let body = http_body_util::Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "RequestEntityTooLarge",
                format!("request body: {e}"),
            )
        })?
        .to_bytes();
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("error decoding the body: {e}")))?;
    match value.is_object() {
        true => Ok(value),
        false => Err(ApiError::bad_request("the body is not a JSON object")),
    }
}

/// A review's body (an access review: JSON, small).
pub async fn read_review(req: Request<Incoming>) -> Result<Value, ApiError> {
    read_json(req, "application/json").await
}

async fn read_patch(req: Request<Incoming>) -> Result<Value, ApiError> {
    read_json(req, "application/merge-patch+json").await
}

/// `old` with `patch` merged in as the API server does: a status patch changes only the
/// status, any other only the rest; kind, apiVersion and the server's own metadata stay.
fn patched(old: &Value, patch: &Value, status_only: bool) -> Value {
    let mut new = old.clone();
    if status_only {
        if let Some(status) = patch.get("status") {
            merge_patch(&mut new, &serde_json::json!({ "status": status }));
        }
    } else {
        merge_patch(&mut new, patch);
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.remove("status");
                }
            }
        }
    }
    new["apiVersion"] = old["apiVersion"].clone();
    new["kind"] = old["kind"].clone();
    for key in PROTECTED {
        match old["metadata"].get(key) {
            Some(v) => new["metadata"][key] = v.clone(),
            None => {
                if let Some(m) = new["metadata"].as_object_mut() {
                    m.remove(key);
                }
            }
        }
    }
    new
}

/// A spec that changed is a new generation.
fn bump_generation(new: &mut Value, old: &Value) {
    let generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    new["metadata"]["generation"] = Value::from(generation + 1);
}
