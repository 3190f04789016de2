//! What an API server's refusal means, decided once: its HTTP status (and `Retry-After`) become
//! a [`Reason`] — the `metav1.StatusReason` Kubernetes gives that status, as kube's
//! `ErrorResponse` and client-go's `apierrors` read it — which the rest of the engine matches
//! instead of numbers. Changing what is retried, or what counts as forbidden, happens here.

use std::time::Duration;

/// Why the server refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// 400: the request is malformed (a bad selector, a bad patch).
    BadRequest,
    /// 401: the credentials are not (or no longer) accepted: authenticate again.
    Unauthorized,
    /// 403: RBAC (or an admission webhook) refuses this user.
    Forbidden,
    /// 404: the object, or its kind, is not there.
    NotFound,
    /// 405: the resource does not take this verb.
    MethodNotAllowed,
    /// 409: a conflict (a resourceVersion precondition, or AlreadyExists).
    Conflict,
    /// 410: the resourceVersion asked for is older than the server keeps: list again.
    Gone,
    /// 415: the body's media type is not one the resource takes.
    UnsupportedMediaType,
    /// 422: the object is invalid.
    Invalid,
    /// 429: API Priority and Fairness turned it away for now, saying when to ask again.
    TooManyRequests { retry_after: Option<Duration> },
    /// 500: the server failed.
    InternalError,
    /// 503: the server (or an aggregated API) is unavailable for now.
    ServiceUnavailable,
    /// 504: the server, or a proxy before it, gave up waiting.
    Timeout,
    /// Any other status.
    Other(u16),
}

impl Reason {
    /// The reason of HTTP status `code`, with the server's `Retry-After` where it gave one.
    pub fn of(code: u16, retry_after: Option<Duration>) -> Reason {
        match code {
            400 => Reason::BadRequest,
            401 => Reason::Unauthorized,
            403 => Reason::Forbidden,
            404 => Reason::NotFound,
            405 => Reason::MethodNotAllowed,
            409 => Reason::Conflict,
            410 => Reason::Gone,
            415 => Reason::UnsupportedMediaType,
            422 => Reason::Invalid,
            429 => Reason::TooManyRequests { retry_after },
            500 => Reason::InternalError,
            503 => Reason::ServiceUnavailable,
            504 => Reason::Timeout,
            other => Reason::Other(other),
        }
    }

    /// The HTTP status it stands for.
    pub fn code(self) -> u16 {
        match self {
            Reason::BadRequest => 400,
            Reason::Unauthorized => 401,
            Reason::Forbidden => 403,
            Reason::NotFound => 404,
            Reason::MethodNotAllowed => 405,
            Reason::Conflict => 409,
            Reason::Gone => 410,
            Reason::UnsupportedMediaType => 415,
            Reason::Invalid => 422,
            Reason::TooManyRequests { .. } => 429,
            Reason::InternalError => 500,
            Reason::ServiceUnavailable => 503,
            Reason::Timeout => 504,
            Reason::Other(code) => code,
        }
    }

    /// Whether the same request may be answered if asked again shortly: the server turned it away
    /// for now, not for what it is.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Reason::TooManyRequests { .. } | Reason::ServiceUnavailable | Reason::Timeout
        )
    }

    /// When the server asked to be asked again, where it said.
    pub fn retry_after(self) -> Option<Duration> {
        match self {
            Reason::TooManyRequests { retry_after } => retry_after,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_to_its_code_and_only_for_now_is_retried() {
        for code in [
            400, 401, 403, 404, 405, 409, 410, 415, 422, 429, 500, 503, 504, 418, 502,
        ] {
            assert_eq!(Reason::of(code, None).code(), code);
        }
        let busy = Reason::of(429, Some(Duration::from_secs(3)));
        assert_eq!(
            busy,
            Reason::TooManyRequests {
                retry_after: Some(Duration::from_secs(3))
            }
        );
        assert_eq!(busy.retry_after(), Some(Duration::from_secs(3)));
        let retried: Vec<u16> = [400, 401, 403, 404, 409, 410, 429, 500, 502, 503, 504]
            .into_iter()
            .filter(|c| Reason::of(*c, None).retryable())
            .collect();
        assert_eq!(retried, [429, 503, 504]);
    }
}
