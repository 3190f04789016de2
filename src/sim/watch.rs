//! Watch streams: newline-delimited `WatchEvent`s over a long-lived response, resumable from any
//! resourceVersion still in the cluster's history, with bookmarks and timeouts like the API server.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use hyper::body::Frame;
use serde_json::json;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::faults::Faults;
use super::request::Filter;
use super::state::Stats;
use super::status::ApiError;
use super::store::{ChangeType, Object};
use super::world::Cluster;

/// Where a watch starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// `resourceVersion` unset or "0": the current objects as ADDED, then changes.
    Current,
    /// Changes after this resourceVersion.
    After(u64),
}

pub struct Params {
    pub start: Start,
    pub filter: Filter,
    pub bookmarks: bool,
    /// `sendInitialEvents=true`: the initial ADDED events end with a marked BOOKMARK.
    pub initial_events: bool,
    pub timeout: Duration,
    pub bookmark_interval: Duration,
    /// Cut the stream (as a dropped connection would) after this long.
    pub cut_after: Option<Duration>,
}

/// Decrements the open-watch gauges when the stream ends or the client goes away.
struct Guard {
    cluster: Arc<Cluster>,
    stats: Arc<Stats>,
    h2: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.cluster
            .counters
            .open_watches
            .fetch_sub(1, Ordering::Relaxed);
        self.stats.open_watches.fetch_sub(1, Ordering::Relaxed);
        if self.h2 {
            self.stats.h2_open_streams.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

struct State {
    cluster: Arc<Cluster>,
    params: Params,
    rv: u64,
    pending: VecDeque<Bytes>,
    done: bool,
    cut: bool,
    deadline: Instant,
    cut_at: Option<Instant>,
    next_bookmark: Instant,
    changed: tokio::sync::watch::Receiver<u64>,
    shutdown: CancellationToken,
    _guard: Guard,
}

fn frame(kind: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// Whether a watch asks for a streaming list, checked as kube-apiserver checks a watch's
/// options (`sendInitialEvents` needs `resourceVersionMatch=NotOlderThan`, which a watch takes
/// only with it), as the cluster's Kubernetes would: refused before 1.27 and with the
/// `WatchList` gate off, its parameters dropped behind a proxy that does not know them.
pub fn initial_events(q: &HashMap<String, String>, faults: &Faults) -> Result<bool, ApiError> {
    let asked = q.get("sendInitialEvents").map(|v| v == "true");
    let matching = q.get("resourceVersionMatch").map(String::as_str);
    if faults.strips_watch_list || (asked.is_none() && matching.is_none()) {
        return Ok(false);
    }
    if faults.old_kube && matching.is_some() {
        return Err(ApiError::invalid_options(
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch",
        ));
    }
    if faults.no_watch_list && asked.is_some() {
        return Err(ApiError::invalid_options(
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        ));
    }
    match (asked, matching) {
        (Some(_), Some("NotOlderThan")) => Ok(asked == Some(true)),
        (Some(_), _) => Err(ApiError::invalid_options(
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        )),
        (None, _) => Err(ApiError::invalid_options(
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        )),
    }
}

/// The most bytes of waiting events sent as one piece.
const COALESCE: usize = 64 * 1024;

fn bookmark(filter: &Filter, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let obj = json!({"apiVersion": filter.api_version, "kind": filter.kind, "metadata": meta});
    frame("BOOKMARK", obj.to_string().as_bytes())
}

fn expired(requested: u64, oldest: u64) -> Bytes {
    let status = ApiError::gone(format!("too old resource version: {requested} ({oldest})"));
    frame("ERROR", status.to_value().to_string().as_bytes())
}

impl State {
    fn encode(&self, kind: ChangeType, obj: &Object) -> Bytes {
        frame(kind.as_str(), &self.params.filter.render(obj))
    }

    /// Moves everything new in the store into `pending`. Returns false when the history no
    /// longer reaches back to our resourceVersion.
    fn collect(&mut self) {
        let store = self.cluster.store();
        let changes = match store.changes_since(self.rv) {
            Ok(changes) => changes,
            Err(e) => {
                self.pending.push_back(expired(e.requested, e.oldest));
                self.done = true;
                return;
            }
        };
        let mut frames = Vec::new();
        let mut last = self.rv;
        for change in changes {
            last = change.rv;
            let f = &self.params.filter;
            let now = f.matches(&change.object);
            // Without a recorded previous version the labels did not change, so it matched
            // before exactly when it matches now (an ADDED object did not exist before).
            let before = match (&change.previous, change.kind) {
                (Some(p), _) => f.matches(p),
                (None, ChangeType::Added) => false,
                (None, _) => now,
            };
            let kind = match (change.kind, before, now) {
                (ChangeType::Deleted, true, _) => ChangeType::Deleted,
                (ChangeType::Deleted, false, _) => continue,
                (_, false, true) => ChangeType::Added,
                (_, true, true) => ChangeType::Modified,
                // It stopped matching the selector: to this watch it is gone.
                (_, true, false) => ChangeType::Deleted,
                (_, false, false) => continue,
            };
            frames.push(self.encode(kind, &change.object));
        }
        drop(store);
        self.rv = last;
        self.pending.extend(frames);
    }

    fn initial(&mut self) {
        let store = self.cluster.store();
        self.rv = store.resource_version();
        let f = &self.params.filter;
        let frames: Vec<Bytes> = store
            .list(f.res, f.namespace.as_deref())
            .filter(|o| f.matches(o))
            .map(|o| frame("ADDED", &f.render(o)))
            .collect();
        drop(store);
        self.pending.extend(frames);
        if self.params.initial_events && self.params.bookmarks {
            self.pending
                .push_back(bookmark(&self.params.filter, self.rv, true));
        }
    }

    async fn next(mut self) -> Option<(Result<Frame<Bytes>, std::io::Error>, State)> {
        loop {
            if let Some(first) = self.pending.pop_front() {
                // Events already waiting go out together, as kube-apiserver flushes a watch
                // only once its queue is empty (a streaming list's initial events, a burst).
                if self.pending.is_empty() {
                    return Some((Ok(Frame::data(first)), self));
                }
                let mut joined = first.to_vec();
                while joined.len() < COALESCE
                    && let Some(next) = self.pending.pop_front()
                {
                    joined.extend_from_slice(&next);
                }
                return Some((Ok(Frame::data(Bytes::from(joined))), self));
            }
            if self.cut {
                let e = std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "watch cut by flap fault",
                );
                self.cut = false;
                self.done = true;
                return Some((Err(e), self));
            }
            if self.done {
                return None;
            }
            self.collect();
            if !self.pending.is_empty() || self.done {
                continue;
            }
            let cut_at = self.cut_at;
            let bookmarks = self.params.bookmarks;
            tokio::select! {
                r = self.changed.changed() => if r.is_err() { self.done = true },
                _ = sleep_until(self.deadline) => {
                    if bookmarks {
                        self.pending.push_back(bookmark(&self.params.filter, self.rv, false));
                    }
                    self.done = true;
                }
                _ = sleep_until(self.next_bookmark), if bookmarks => {
                    self.pending.push_back(bookmark(&self.params.filter, self.rv, false));
                    self.next_bookmark = Instant::now() + self.params.bookmark_interval;
                }
                _ = async { if let Some(t) = cut_at { sleep_until(t).await } else { std::future::pending().await } } => {
                    self.cut = true;
                }
                _ = self.shutdown.cancelled() => self.done = true,
            }
        }
    }
}

/// The body of a watch response. The caller has checked auth and the resource.
pub fn stream(
    cluster: Arc<Cluster>,
    stats: Arc<Stats>,
    h2: bool,
    params: Params,
    shutdown: CancellationToken,
) -> impl Stream<Item = Result<Frame<Bytes>, std::io::Error>> + Send + 'static {
    cluster
        .counters
        .open_watches
        .fetch_add(1, Ordering::Relaxed);
    stats.open_watches.fetch_add(1, Ordering::Relaxed);
    if h2 {
        stats.h2_open_streams.fetch_add(1, Ordering::Relaxed);
    }
    let now = Instant::now();
    let mut state = State {
        changed: cluster.changed.subscribe(),
        _guard: Guard {
            cluster: cluster.clone(),
            stats,
            h2,
        },
        cluster,
        rv: 0,
        pending: VecDeque::new(),
        done: false,
        cut: false,
        deadline: now + params.timeout,
        cut_at: params.cut_after.map(|d| now + d),
        next_bookmark: now + params.bookmark_interval,
        shutdown,
        params,
    };
    match state.params.start {
        // kube-apiserver's watch cache over an etcd without progress notifications takes a
        // streaming list, then fails it.
        Start::Current if state.params.initial_events && state.cluster.faults().old_etcd => {
            let status = ApiError::new(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "RequestWatchProgress is disabled",
            );
            let line = frame("ERROR", status.to_value().to_string().as_bytes());
            state.pending.push_back(line);
            state.done = true;
        }
        Start::Current => state.initial(),
        Start::After(rv) => state.rv = rv,
    }
    futures::stream::unfold(state, State::next)
}
