//! Plain requests on a cluster's HTTP service, and what their failures mean. The engine sends its
//! own requests (discovery, lists, watches) instead of going through `kube::Client`: a client puts
//! a request queue and a task in front of every cluster, and kube's watcher keeps an 8 KiB line
//! buffer per watch — at thousands of clusters that is most of the engine's memory.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, Version};
use kube::client::Body;
use serde::de::{DeserializeOwned, DeserializeSeed};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, ServiceExt};

use super::backoff::Backoff;
use super::body;
use super::errors::{self, Failure, NotHttp2};
use super::response::ResponseBody;
pub use super::status::Reason;
use crate::fleet::Phase;

/// One cluster's HTTP service: base URI, credentials and headers applied, one connection under it.
/// Cheap to clone; `kube::Client::new(http, namespace)` turns it into a kube client when one is
/// needed (actions).
pub type Http = BoxCloneSyncService<Request<Body>, Response<ResponseBody>, BoxError>;

/// `http` with every request sent as `who`: `Impersonate-User` and one `Impersonate-Group` per
/// group. The credentials under it must be allowed to `impersonate` (users and groups); the
/// cluster's RBAC then decides as for `who`.
pub fn impersonating(http: &Http, who: Arc<crate::source::Impersonation>) -> Http {
    let service = tower::ServiceBuilder::new()
        .map_request(move |mut request: Request<Body>| {
            let headers = request.headers_mut();
            headers.remove(IMPERSONATE_GROUP);
            headers.insert(IMPERSONATE_USER, who.user().clone());
            for group in who.groups() {
                headers.append(IMPERSONATE_GROUP, group.clone());
            }
            request
        })
        .service(http.clone());
    BoxCloneSyncService::new(service)
}

const IMPERSONATE_USER: &str = "impersonate-user";
const IMPERSONATE_GROUP: &str = "impersonate-group";

/// The most of an error body read to explain it.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// The largest answer read whole (a list page, a discovery document, one object). A page of 500
/// objects is a few MiB even with large HelmRelease values; a server sending more is misbehaving.
pub const BODY_LIMIT: usize = 64 * 1024 * 1024;
/// How long one request may take, headers and body (watches: until their headers). The server
/// that takes longer is that cluster's error, never a task waiting forever.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Why a request failed.
#[derive(Debug)]
pub enum Trouble {
    /// The server answered with an API error (an HTTP status, or an ERROR event in a watch):
    /// what it means, and the server's words.
    Status { reason: Reason, failure: Failure },
    /// No usable answer: connection, TLS, a timeout, a broken stream, something not Kubernetes.
    Failed(Failure),
    /// HTTP/2 was required and the server speaks only HTTP/1.1: fall back.
    NotHttp2,
}

impl Trouble {
    /// What the server's refusal means; None when no server answered.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Trouble::Status { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    pub fn into_failure(self) -> Failure {
        match self {
            Trouble::Status { failure, .. } | Trouble::Failed(failure) => failure,
            Trouble::NotHttp2 => Failure::new(Phase::Unreachable, NotHttp2.to_string()),
        }
    }

    pub fn status(status: &kube::core::Status) -> Trouble {
        Trouble::refused(status, None)
    }

    /// `status`, with the `Retry-After` its answer carried.
    pub(in crate::k8s) fn refused(
        status: &kube::core::Status,
        retry_after: Option<Duration>,
    ) -> Trouble {
        Trouble::Status {
            reason: Reason::of(status.code, retry_after),
            failure: errors::of_status(status),
        }
    }

    /// The answer could not be read as what a Kubernetes API server sends.
    pub fn garbage(e: impl std::fmt::Display) -> Trouble {
        Trouble::Failed(Failure::new(
            Phase::ServerError,
            format!("the answer is not from a Kubernetes API server: {e}"),
        ))
    }

    /// A failure below HTTP (or of the body while it streams).
    pub fn transport(e: &(dyn StdError + 'static)) -> Trouble {
        let mut source: Option<&(dyn StdError + 'static)> = Some(e);
        while let Some(s) = source {
            if s.is::<NotHttp2>() {
                return Trouble::NotHttp2;
            }
            source = s.source();
        }
        Trouble::Failed(errors::of_transport(e))
    }
}

/// A read the server turned away for now (API Priority and Fairness answers 429, a restarting
/// or overloaded server 503 or 504) is asked again this many times before it counts as failed.
const READ_RETRIES: u32 = 3;
/// The longest `Retry-After` honoured; a server asking for longer fails the read, and the
/// caller's own backoff takes over.
const RETRY_AFTER_LIMIT: Duration = Duration::from_secs(5);

/// GETs `path_and_query`; a non-success status becomes [`Trouble::Status`] with the server's
/// explanation. Reads are idempotent: one turned away for now is retried a few times, with
/// jittered backoff or after the server's `Retry-After`, so that one busy moment of a flaky
/// server does not fail a whole discovery or list.
pub async fn get(http: &Http, path_and_query: &str) -> Result<Response<ResponseBody>, Trouble> {
    get_accepting(http, path_and_query, None).await
}

/// [`get`] with an `Accept` header (a media type the server may or may not offer).
async fn get_accepting(
    http: &Http,
    path_and_query: &str,
    accept: Option<&'static str>,
) -> Result<Response<ResponseBody>, Trouble> {
    let mut backoff = Backoff::new(
        Duration::from_millis(200),
        Duration::from_secs(2),
        seed(path_and_query),
    );
    let mut attempt = 0;
    loop {
        let mut request = Request::get(path_and_query);
        if let Some(accept) = accept {
            request = request.header(http::header::ACCEPT, accept);
        }
        let request = request
            .body(Body::empty())
            .map_err(|e| Trouble::Failed(Failure::new(Phase::Invalid, e.to_string())))?;
        let response = answer(http, request).await?;
        if response.status().is_success() {
            return Ok(response);
        }
        let asked = retry_after(response.headers());
        let reason = Reason::of(response.status().as_u16(), asked);
        if attempt < READ_RETRIES && reason.retryable() {
            let delay = asked.unwrap_or_else(|| backoff.next_delay());
            if delay <= RETRY_AFTER_LIMIT {
                drop(response);
                attempt += 1;
                // Backoff before asking again, not synchronisation.
                tokio::time::sleep(delay).await;
                continue;
            }
        }
        return Err(rejected(response).await);
    }
}

/// `Retry-After` in seconds (the form API servers send); an HTTP date is not read.
fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::RETRY_AFTER)?;
    let seconds: u64 = value.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds))
}

/// A jitter seed that differs between requests, so that retries do not march in step.
fn seed(path: &str) -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(path)
}

/// Who the fields a patch sets are managed by (`metadata.managedFields`), as kubectl names
/// itself `kubectl-patch`.
pub const FIELD_MANAGER: &str = "fluxfleet";

/// A JSON merge patch (`application/merge-patch+json`) of the object at `path` (which has no
/// query), its fields managed by [`FIELD_MANAGER`].
pub async fn merge_patch(
    http: &Http,
    path: &str,
    patch: &serde_json::Value,
) -> Result<Response<ResponseBody>, Trouble> {
    let request = Request::patch(format!("{path}?fieldManager={FIELD_MANAGER}"))
        .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
        .body(Body::from(patch.to_string().into_bytes()))
        .map_err(|e| Trouble::Failed(Failure::new(Phase::Invalid, e.to_string())))?;
    send(http, request).await
}

/// [`merge_patch`], reading the patched object the server answers with as `T` — the outer
/// `Err` when the patch was refused, the inner one when it was accepted but its answer could
/// not be read.
pub async fn merge_patch_json<T: DeserializeOwned>(
    http: &Http,
    path: &str,
    patch: &serde_json::Value,
) -> Result<Result<T, Trouble>, Trouble> {
    let response = merge_patch(http, path, patch).await?;
    Ok(read_json(response, BODY_LIMIT).await)
}

async fn send(http: &Http, request: Request<Body>) -> Result<Response<ResponseBody>, Trouble> {
    let response = answer(http, request).await?;
    if response.status().is_success() {
        return Ok(response);
    }
    Err(rejected(response).await)
}

/// The server's answer, whatever its status.
async fn answer(http: &Http, request: Request<Body>) -> Result<Response<ResponseBody>, Trouble> {
    tokio::time::timeout(REQUEST_TIMEOUT, http.clone().oneshot(request))
        .await
        .map_err(|_| timed_out())?
        .map_err(|e| Trouble::transport(&*e))
}

/// GETs `path` and reads the whole answer as JSON; also says which HTTP version answered.
pub async fn get_json<T: DeserializeOwned>(
    http: &Http,
    path: &str,
) -> Result<(T, Version), Trouble> {
    get_json_accepting(http, path, None).await
}

/// [`get_json`] asking for the media type `accept` first, when there is one.
pub async fn get_json_accepting<T: DeserializeOwned>(
    http: &Http,
    path: &str,
    accept: Option<&'static str>,
) -> Result<(T, Version), Trouble> {
    let response = get_accepting(http, path, accept).await?;
    let version = response.version();
    Ok((read_json(response, BODY_LIMIT).await?, version))
}

/// GETs `path` and reads its body, at most `limit` bytes, with `seed` (which may borrow from it
/// while it reads, and keep only part of it).
pub async fn get_seeded_within<S, T>(
    http: &Http,
    path: &str,
    limit: usize,
    seed: S,
) -> Result<T, Trouble>
where
    S: for<'de> serde::de::DeserializeSeed<'de, Value = T>,
{
    read_body(get(http, path).await?, limit)
        .await?
        .json_seed(seed)
        .map_err(Trouble::garbage)
}

/// POSTs `body` to `path` (once: a POST is not retried) and reads the answer as JSON.
pub async fn post_json<T: DeserializeOwned>(
    http: &Http,
    path: &str,
    body: &serde_json::Value,
) -> Result<T, Trouble> {
    let request = Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string().into_bytes()))
        .map_err(|e| Trouble::Failed(Failure::new(Phase::Invalid, e.to_string())))?;
    read_json(send(http, request).await?, BODY_LIMIT).await
}

/// GETs `path` and reads the whole answer with `seed` (which may keep only part of it).
pub async fn get_seeded<S, T>(http: &Http, path: &str, seed: S) -> Result<T, Trouble>
where
    S: for<'de> DeserializeSeed<'de, Value = T>,
{
    let body = read_body(get(http, path).await?, BODY_LIMIT).await?;
    body.json_seed(seed).map_err(Trouble::garbage)
}

/// The whole body of a successful answer as JSON, at most `limit` bytes.
async fn read_json<T: DeserializeOwned>(
    response: Response<ResponseBody>,
    limit: usize,
) -> Result<T, Trouble> {
    read_body(response, limit)
        .await?
        .json()
        .map_err(Trouble::garbage)
}

/// The whole body of a successful answer, at most `limit` bytes.
async fn read_body(
    response: Response<ResponseBody>,
    limit: usize,
) -> Result<body::Received, Trouble> {
    let reading = body::read(response, limit);
    tokio::time::timeout(REQUEST_TIMEOUT, reading)
        .await
        .map_err(|_| timed_out())?
        .map_err(|e| match e {
            body::BodyError::TooLarge => {
                let size = match limit / 1024 {
                    kib if kib >= 1024 => format!("{} MiB", kib / 1024),
                    kib => format!("{kib} KiB"),
                };
                Trouble::garbage(format!("an answer larger than {size}"))
            }
            body::BodyError::Broken(e) => Trouble::transport(&*e),
        })
}

fn timed_out() -> Trouble {
    Trouble::Failed(Failure::new(
        Phase::TimedOut,
        format!(
            "a request took longer than {}",
            crate::units::format_duration(REQUEST_TIMEOUT)
        ),
    ))
}

/// The API error a rejected request carries: its `Status` when the body is one, else the bare
/// HTTP status.
async fn rejected(response: Response<ResponseBody>) -> Trouble {
    let code = response.status().as_u16();
    let asked = retry_after(response.headers());
    let reading = body::read(response, ERROR_BODY_LIMIT);
    let body = match tokio::time::timeout(REQUEST_TIMEOUT, reading).await {
        Ok(Ok(body)) => body.joined(),
        _ => Bytes::new(),
    };
    let mut status: kube::core::Status = serde_json::from_slice(&body)
        .unwrap_or_else(|_| kube::core::Status::failure("", "").with_code(code));
    if status.code == 0 {
        status.code = code;
    }
    // A proxy or load balancer answering with HTML says nothing useful beyond its status.
    if status.message.is_empty() && status.reason.is_empty() && body.len() < 200 {
        status.message = String::from_utf8_lossy(&body).trim().to_string();
    }
    Trouble::refused(&status, asked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_and_anything_else_is_ignored() {
        let with = |value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(
                http::header::RETRY_AFTER,
                value
                    .parse()
                    .unwrap_or_else(|_| http::HeaderValue::from_static("")),
            );
            retry_after(&headers)
        };
        assert_eq!(with("1"), Some(Duration::from_secs(1)));
        assert_eq!(with(" 12 "), Some(Duration::from_secs(12)));
        assert_eq!(with("Wed, 21 Oct 2026 07:28:00 GMT"), None);
        assert_eq!(with("-1"), None);
        assert_eq!(retry_after(&http::HeaderMap::new()), None);
    }

    /// `managedFields` names fluxfleet as the manager of what its patches set, as it names
    /// kubectl for `kubectl patch`.
    #[tokio::test]
    async fn a_patch_names_fluxfleet_as_the_manager_of_its_fields() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let http: Http =
            tower::util::BoxCloneSyncService::new(tower::service_fn(move |r: Request<Body>| {
                log.lock()
                    .unwrap()
                    .push((r.method().clone(), r.uri().to_string()));
                async {
                    let body = ResponseBody::scripted(b"{}", None);
                    Ok::<_, BoxError>(Response::new(body))
                }
            }));
        let path =
            "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations/apps";
        let patch = serde_json::json!({"spec": {"suspend": true}});
        merge_patch(&http, path, &patch).await.unwrap();
        assert_eq!(
            seen.lock().unwrap()[..],
            [(
                http::Method::PATCH,
                format!("{path}?fieldManager=fluxfleet")
            )]
        );
    }
}
