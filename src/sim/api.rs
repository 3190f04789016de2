//! Request routing: `/clusters/<name>/…` (or a cluster's own port) to discovery and resources,
//! `/sim/…` to the observability endpoints. Every failure is a `Status` body.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Incoming;
use serde_json::Value;

use super::body::{Body, json};
use super::discovery;
use super::injected;
use super::list;
use super::observe;
use super::request::{Filter, flag, parse_query};
use super::resources::{Res, Served};
use super::state::{Conn, PatchInFlight, State};
use super::status::ApiError;
use super::watch::{self, Params, Start};
use super::world::{Caller, Cluster};
use super::write;

/// The review that tells a client who it is authenticated as.
const SELF_REVIEWS: &str = "authentication.k8s.io/v1/selfsubjectreviews";
/// The review that tells a client whether it may do something (`kubectl auth can-i`).
const ACCESS_REVIEWS: &str = "authorization.k8s.io/v1/selfsubjectaccessreviews";

fn error(e: ApiError) -> Response<Body> {
    match e.code {
        StatusCode::TOO_MANY_REQUESTS => injected::throttled(&e),
        code => json(code, e.to_bytes()),
    }
}

pub async fn handle(
    state: Arc<State>,
    conn: Arc<Conn>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    state.stats.requests_total.fetch_add(1, Ordering::Relaxed);
    if conn.h2 {
        state
            .stats
            .h2_requests_total
            .fetch_add(1, Ordering::Relaxed);
    }
    // Boxed: hyper keeps each HTTP/2 stream's task sized for this future for as long as the
    // response body lives, and a watch lives for minutes. Unboxed, every open watch would hold
    // the whole request handler's state (kilobytes) after it finished.
    let response = Box::pin(route(&state, &conn, req)).await;
    Ok(response.unwrap_or_else(error))
}

fn bearer<B>(req: &Request<B>) -> Option<&str> {
    req.headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

async fn route(
    state: &Arc<State>,
    conn: &Arc<Conn>,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let path = req.uri().path().to_string();
    if conn.fixed_cluster.is_none()
        && let Some(rest) = path.strip_prefix("/sim/")
    {
        if bearer(&req) != Some(state.world.sim_token.as_str()) {
            return Err(ApiError::unauthorized());
        }
        let q = parse_query(req.uri().query());
        return observe::endpoint(state, rest, &q);
    }
    let (cluster, rest) = cluster_of(state, conn, &req, &path)?;
    if conn.serves(cluster.index) {
        cluster.counters.connections.fetch_add(1, Ordering::Relaxed);
        cluster
            .counters
            .connections_total
            .fetch_add(1, Ordering::Relaxed);
    }
    let counters = &cluster.counters;
    let method = req.method().clone();
    // A review (who am I) is a POST that changes nothing: not a write.
    let reviewed =
        |which: &str| method == Method::POST && rest.trim_end_matches('/').ends_with(which);
    let review = reviewed(SELF_REVIEWS) || reviewed(ACCESS_REVIEWS);
    // Held until the answer is ready: slow answers (the `slow` fault) count as in flight.
    let _patching = (method == Method::PATCH).then(|| PatchInFlight::start(&state.stats));
    if method == Method::PATCH {
        counters.patch.fetch_add(1, Ordering::Relaxed);
    } else if method != Method::GET && method != Method::HEAD && !review {
        counters.other_write.fetch_add(1, Ordering::Relaxed);
    }
    // As the API server's union of authenticators: a client certificate first, then a token.
    let certified = conn
        .client
        .as_ref()
        .filter(|who| who.cluster == cluster.name);
    let by_certificate = certified.map(|who| who.role);
    let Some(role) = by_certificate.or_else(|| bearer(&req).and_then(|t| cluster.role_of(t)))
    else {
        counters.rejected.fetch_add(1, Ordering::Relaxed);
        return Err(ApiError::unauthorized());
    };
    let caller = super::rbac::caller(&cluster, certified, role, req.headers())?;
    // Held until the answer is ready, as API Priority and Fairness holds a seat (a watch's
    // stream goes on without one).
    let _seat = injected::on_the_way(&cluster).await?;
    let q = parse_query(req.uri().query());
    let segs: Vec<String> = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let world = &state.world;
    let now = world.clock.now_seconds();
    let story = world.story.as_ref();
    if let Some(answer) = super::workloads::serve(&cluster, story, now, &caller, &method, &segs, &q)
    {
        return answer;
    }
    let served = &cluster.served;
    let ok = |v: Value| Ok(json(StatusCode::OK, Bytes::from(v.to_string())));
    let discovery_hit = || counters.discovery.fetch_add(1, Ordering::Relaxed);
    match segs.as_slice() {
        ["version"] => {
            discovery_hit();
            ok(discovery::version(cluster.flux))
        }
        ["api"] => {
            discovery_hit();
            Ok(core(&req, &cluster))
        }
        ["api", "v1"] => {
            discovery_hit();
            ok(discovery::resource_list(served, "", "v1").ok_or_else(ApiError::no_route)?)
        }
        ["apis"] => {
            discovery_hit();
            Ok(apis(&req, &cluster))
        }
        ["apis", group] => {
            discovery_hit();
            ok(discovery::group(served, group).ok_or_else(ApiError::no_route)?)
        }
        ["apis", group, version] => {
            discovery_hit();
            ok(discovery::resource_list(served, group, version).ok_or_else(ApiError::no_route)?)
        }
        ["apis", "authentication.k8s.io", "v1", "selfsubjectreviews"] if review => {
            ok(super::rbac::who_am_i(&caller))
        }
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
        ] if review => {
            let asked = super::write::read_review(req).await?;
            ok(super::rbac::can_i(&cluster, &caller, asked))
        }
        ["api", "v1", rest @ ..] => {
            resource(state, conn, &cluster, &caller, "", "v1", rest, q, req).await
        }
        ["apis", group, version, rest @ ..] => {
            let (group, version) = (group.to_string(), version.to_string());
            resource(
                state, conn, &cluster, &caller, &group, &version, rest, q, req,
            )
            .await
        }
        _ => Err(ApiError::no_route()),
    }
}

/// The cluster a request is for, and the rest of its path: the connection's own cluster (a
/// port per cluster), the `/clusters/<name>` prefix, or — without it, as `kubectl get --raw`
/// drops a server URL's path — the cluster whose token the request carries.
fn cluster_of<'p>(
    state: &State,
    conn: &Conn,
    req: &Request<Incoming>,
    path: &'p str,
) -> Result<(Arc<Cluster>, &'p str), ApiError> {
    let world = &state.world;
    if let Some(i) = conn.fixed_cluster {
        let cluster = world
            .clusters
            .get(i)
            .cloned()
            .ok_or_else(ApiError::no_route)?;
        return Ok((cluster, path));
    }
    if let Some(tail) = path.strip_prefix("/clusters/") {
        let (name, rest) = tail.split_once('/').unwrap_or((tail, ""));
        let cluster = world
            .cluster(name)
            .cloned()
            .ok_or_else(ApiError::no_route)?;
        return Ok((cluster, rest));
    }
    let token = bearer(req).ok_or_else(ApiError::unauthorized)?;
    let cluster = world
        .cluster_of_token(token)
        .cloned()
        .ok_or_else(ApiError::unauthorized)?;
    Ok((cluster, path))
}

/// `GET /apis`: the aggregated discovery document when the client asks for it and the cluster
/// is new enough, else the plain group list.
fn apis(req: &Request<Incoming>, cluster: &Cluster) -> Response<Body> {
    let served = &cluster.served;
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    if discovery::wants_aggregated(accept) && !cluster.faults().old_kube {
        let body =
            discovery::aggregated_bytes(served, cluster.flux, cluster.management, cluster.operator);
        let mut response = json(StatusCode::OK, body);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(discovery::AGGREGATED),
        );
        return response;
    }
    json(
        StatusCode::OK,
        Bytes::from(discovery::group_list(served).to_string()),
    )
}

/// `GET /api`: the core group's aggregated discovery when the client asks for it (as kubectl
/// does) and the cluster is new enough, else its versions.
fn core(req: &Request<Incoming>, cluster: &Cluster) -> Response<Body> {
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    if discovery::wants_aggregated(accept) && !cluster.faults().old_kube {
        let body = discovery::aggregated_core(&cluster.served).to_string();
        let mut response = json(StatusCode::OK, Bytes::from(body));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(discovery::AGGREGATED),
        );
        return response;
    }
    let versions = discovery::core_versions("127.0.0.1:6443").to_string();
    json(StatusCode::OK, Bytes::from(versions))
}

/// What a resource path names.
enum Target<'a> {
    Collection(Option<&'a str>),
    Item(&'a str, &'a str),
    Status(&'a str, &'a str),
}

#[allow(clippy::too_many_arguments)]
async fn resource(
    state: &Arc<State>,
    conn: &Arc<Conn>,
    cluster: &Arc<Cluster>,
    caller: &Caller,
    group: &str,
    version: &str,
    rest: &[&str],
    q: HashMap<String, String>,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let (plural, target) = match rest {
        ["namespaces"] => ("namespaces", Target::Collection(None)),
        ["namespaces", name] => ("namespaces", Target::Item("", name)),
        ["namespaces", ns, plural] => (*plural, Target::Collection(Some(*ns))),
        ["namespaces", ns, plural, name] => (*plural, Target::Item(ns, name)),
        ["namespaces", ns, plural, name, "status"] => (*plural, Target::Status(ns, name)),
        [plural] => (*plural, Target::Collection(None)),
        _ => return Err(ApiError::no_route()),
    };
    let served: &Served = cluster
        .served
        .iter()
        .find(|s| s.res.group() == group && s.res.plural() == plural && s.serves(version))
        .ok_or_else(ApiError::no_route)?;
    let res = served.res;
    if let Target::Item(ns, _) | Target::Status(ns, _) = target
        && ns.is_empty() == res.namespaced()
    {
        return Err(ApiError::no_route());
    }
    if let Target::Status(..) = target
        && !res.has_status()
    {
        return Err(ApiError::no_route());
    }
    let verb = verb_of(req.method(), &target, &q)?;
    let (ns, name) = match target {
        Target::Item(ns, name) | Target::Status(ns, name) => (ns, name),
        Target::Collection(ns) => (ns.unwrap_or(""), ""),
    };
    super::rbac::authorize(cluster, caller, res, verb, ns, name)?;
    let namespace = match target {
        Target::Collection(ns) => ns.map(str::to_string),
        Target::Item(ns, _) | Target::Status(ns, _) => Some(ns.to_string()),
    };
    let filter = Filter::new(
        res,
        version,
        served.storage_version(),
        namespace.filter(|n| !n.is_empty()),
        &q,
    )?;
    let mut response = match (verb, target) {
        ("watch", _) => watch_response(state, conn, cluster, filter, &q)?,
        ("list", _) => list::respond(cluster, &filter, &q)?,
        ("get", Target::Item(ns, name) | Target::Status(ns, name)) => {
            let store = cluster.store();
            let obj = store
                .get(res, ns, name)
                .ok_or_else(|| ApiError::not_found(res.group(), res.plural(), name))?;
            cluster.counters.get.fetch_add(1, Ordering::Relaxed);
            json(StatusCode::OK, filter.render(obj))
        }
        ("patch", Target::Item(ns, name)) => {
            write::patch(state, cluster, &filter, ns, name, false, req).await?
        }
        ("patch", Target::Status(ns, name)) => {
            write::patch(state, cluster, &filter, ns, name, true, req).await?
        }
        ("create", Target::Collection(Some(ns))) if res == Res::Event => {
            let now = state.world.clock.now();
            write::create_event(cluster, (&filter, ns, now), req).await?
        }
        _ => return Err(ApiError::no_route()),
    };
    if let Some(warning) = deprecation(served, version) {
        response.headers_mut().insert(header::WARNING, warning);
    }
    Ok(response)
}

/// The verb a request is: get, list or watch a collection, or patch an object or its status.
fn verb_of(
    method: &Method,
    target: &Target,
    q: &HashMap<String, String>,
) -> Result<&'static str, ApiError> {
    Ok(match (method, target) {
        (&Method::GET, Target::Collection(_)) if flag(q, "watch") => "watch",
        (&Method::GET, Target::Collection(_)) => "list",
        (&Method::GET, _) => "get",
        (&Method::PATCH, Target::Item(..) | Target::Status(..)) => "patch",
        (&Method::POST, Target::Collection(Some(_))) => "create",
        _ => {
            return Err(ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                format!(
                    "the server does not allow this method on the requested resource ({method})"
                ),
            ));
        }
    })
}

/// The API server's warning when a request used a deprecated version.
fn deprecation(served: &Served, version: &str) -> Option<header::HeaderValue> {
    served
        .versions
        .iter()
        .any(|v| v.version == version && v.deprecated)
        .then(|| {
            format!(
                "299 - \"{}/{} {} is deprecated; use {}\"",
                served.res.group(),
                version,
                served.res.kind(),
                served.api_version()
            )
        })
        .and_then(|w| header::HeaderValue::from_str(&w).ok())
}

fn watch_response(
    state: &Arc<State>,
    conn: &Arc<Conn>,
    cluster: &Arc<Cluster>,
    filter: Filter,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let initial_events = watch::initial_events(q, &cluster.faults())?;
    cluster.counters.watch.fetch_add(1, Ordering::Relaxed);
    if initial_events {
        cluster.counters.streamed.fetch_add(1, Ordering::Relaxed);
    }
    let start = match q.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => Start::Current,
        Some(_) if initial_events => Start::Current,
        Some(rv) => Start::After(
            rv.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version {rv:?}")))?,
        ),
    };
    let timeout = match q.get("timeoutSeconds") {
        Some(t) => std::time::Duration::from_secs(
            t.parse()
                .map_err(|_| ApiError::bad_request("timeoutSeconds must be an integer"))?,
        ),
        None => state.timing.default_watch_timeout,
    };
    let params = Params {
        start,
        filter,
        bookmarks: flag(q, "allowWatchBookmarks"),
        initial_events,
        timeout,
        bookmark_interval: state.timing.bookmark_interval,
        cut_after: cluster.faults().flap,
    };
    let stream = watch::stream(
        cluster.clone(),
        state.stats.clone(),
        conn.h2,
        params,
        state.shutdown.clone(),
    );
    let mut r = Response::new(StreamBody::new(stream).boxed_unsync());
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}
