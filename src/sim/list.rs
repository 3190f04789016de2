//! Lists, paginated as the API server paginates them: `limit` and `continue` (a token holding
//! the list's resourceVersion and the last key returned; 410 Gone once that version is no longer
//! retained), `remainingItemCount`, items rendered in the version asked for.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::Value;

use super::body::{Body, json};
use super::request::Filter;
use super::status::ApiError;
use super::world::Cluster;

/// `continue` tokens: the list's resourceVersion and the last key returned.
fn encode_continue(rv: u64, ns: &str, name: &str) -> String {
    use base64::Engine;
    let raw = serde_json::json!({"rv": rv, "ns": ns, "name": name}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn decode_continue(token: &str) -> Option<(u64, String, String)> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()?;
    let v: Value = serde_json::from_slice(&raw).ok()?;
    Some((
        v["rv"].as_u64()?,
        v["ns"].as_str()?.to_string(),
        v["name"].as_str()?.to_string(),
    ))
}

pub fn respond(
    cluster: &Cluster,
    filter: &Filter,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    cluster.counters.list.fetch_add(1, Ordering::Relaxed);
    let limit = match q.get("limit").map(|l| l.parse::<usize>()) {
        Some(Ok(n)) if n > 0 => Some(n),
        Some(Ok(_)) | None => None,
        Some(Err(_)) => {
            return Err(ApiError::bad_request(
                "limit must be a non-negative integer",
            ));
        }
    };
    let store = cluster.store();
    let (list_rv, after) = match q.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => {
            let (rv, ns, name) = decode_continue(token)
                .ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
            if !store.is_retained(rv) {
                return Err(ApiError::gone(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                ));
            }
            (rv, Some((ns, name)))
        }
        None => (store.resource_version(), None),
    };
    let mut items = store
        .list(filter.res, filter.namespace.as_deref())
        .filter(|o| {
            after
                .as_ref()
                .is_none_or(|(ns, name)| (&o.namespace, &o.name) > (ns, name))
        })
        .filter(|o| filter.matches(o));
    let mut body = Vec::with_capacity(4096);
    body.extend_from_slice(
        format!(
            "{{\"apiVersion\":\"{}\",\"kind\":\"{}List\",\"items\":[",
            filter.api_version, filter.kind
        )
        .as_bytes(),
    );
    let mut last: Option<(String, String)> = None;
    for (i, obj) in items.by_ref().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&filter.render(obj));
        if limit.is_some_and(|l| i + 1 >= l) {
            last = Some((obj.namespace.clone(), obj.name.clone()));
            break;
        }
    }
    let remaining = items.count();
    let mut meta = serde_json::json!({"resourceVersion": list_rv.to_string()});
    if let (Some((ns, name)), true) = (last, remaining > 0) {
        meta["continue"] = Value::String(encode_continue(list_rv, &ns, &name));
        meta["remainingItemCount"] = Value::from(remaining);
    }
    body.extend_from_slice(format!("],\"metadata\":{meta}}}").as_bytes());
    Ok(json(StatusCode::OK, Bytes::from(body)))
}
