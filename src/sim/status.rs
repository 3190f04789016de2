//! `metav1.Status` error bodies, as the API server sends them for every failure.

use bytes::Bytes;
use http::StatusCode;
use serde_json::{Value, json};

/// An API error: HTTP code, machine reason (`NotFound`, `Forbidden`, …) and a human message.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub code: StatusCode,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

/// The seconds a throttled request is told to wait (`Retry-After`): the least kube-apiserver
/// says (it says up to 16 the more it turns away).
pub const RETRY_AFTER: u32 = 1;

impl ApiError {
    pub fn new(code: StatusCode, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// API Priority and Fairness turned the request away: its queues are full. Answered as
    /// plain text with [`RETRY_AFTER`], not as a Status.
    pub fn too_many_requests() -> ApiError {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "TooManyRequests",
            "Too many requests, please try again later.",
        )
    }

    pub fn with_details(mut self, group: &str, kind: &str, name: &str) -> ApiError {
        let mut d = json!({ "kind": kind });
        if !group.is_empty() {
            d["group"] = json!(group);
        }
        if !name.is_empty() {
            d["name"] = json!(name);
        }
        self.details = Some(d);
        self
    }

    pub fn unauthorized() -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized")
    }

    pub fn not_found(group: &str, plural: &str, name: &str) -> ApiError {
        let resource = qualified(plural, group);
        ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("{resource} \"{name}\" not found"),
        )
        .with_details(group, plural, name)
    }

    /// The body of a request for a path the server does not serve.
    pub fn no_route() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 422 for a list's or watch's options, in kube-apiserver's words.
    pub fn invalid_options(causes: &str) -> ApiError {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!("ListOptions.meta.k8s.io \"\" is invalid: {causes}"),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    pub fn gone(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::GONE, "Expired", message)
    }

    pub fn to_value(&self) -> Value {
        let mut v = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        if let Some(d) = &self.details {
            v["details"] = d.clone();
        }
        v
    }

    pub fn to_bytes(&self) -> Bytes {
        Bytes::from(self.to_value().to_string())
    }
}

/// `plural.group`, or `plural` for the core group: how error messages name a resource.
pub fn qualified(plural: &str, group: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_reads_like_the_api_server() {
        let e = ApiError::not_found("kustomize.toolkit.fluxcd.io", "kustomizations", "apps");
        let v = e.to_value();
        assert_eq!(
            v["message"],
            "kustomizations.kustomize.toolkit.fluxcd.io \"apps\" not found"
        );
        assert_eq!(v["code"], 404);
        assert_eq!(v["details"]["name"], "apps");
    }
}
