//! One kind's list-then-watch on one cluster, the way a Kubernetes reflector does it: a streaming
//! list (a watch that begins with every object, where the server serves it) or a paginated one
//! (replacing the kind's rows at once), then a watch from the list's resourceVersion with
//! bookmarks, re-opened where it stopped when the server ends it, relisted on 410 Gone.
//!
//! A watch the server breaks is resumed at once from where it stopped — re-watching from a
//! resourceVersion costs the server little and misses nothing — as long as it had run a while
//! ([`RAN_LONG_ENOUGH`]), and a few times a minute ([`QUICK_RESUMES`]) when it had not. Only a
//! server that breaks its watches faster than that is backed off from, as failing lists and
//! connections are.
//!
//! Between events a watch holds no buffer: a body frame is split into lines where it lies, and
//! only the unfinished tail of a line is copied — and released as soon as the line completes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use hyper::body::Body as _;
use jiff::Timestamp;
use kube::api::{ListParams, WatchParams};
use tokio::time::{Instant, Sleep};

use super::page::ListPage;
use crate::fleet::{FluxKind, FluxSummary, Lists, Phase, SharedText};
use crate::k8s::wire::api::{self, Http, Trouble};
use crate::k8s::wire::errors::Failure;
use crate::k8s::wire::response::ResponseBody;

mod state;

use state::{Came, Stand, Watching};
pub(in crate::k8s) use state::{RAN_LONG_ENOUGH, Step};

/// The server ends a watch after this long (kube and client-go use about 5 minutes); it is then
/// re-opened from the last resourceVersion seen.
pub(super) const WATCH_SECONDS: u32 = 290;
/// A watch line longer than this is a misbehaving server, not a Flux object.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// One kind's watch with its connection: makes the request its state ([`Watching`]) asks for
/// and steps the state with what came of it.
///
/// Polled in place ([`KindWatch::poll_step`]) by the cluster's task beside its other kinds, not
/// as a future of its own: a watch spends its life waiting for the next line of its body, and
/// each of a fleet's 70,000 watches should carry only what that takes. Listing, opening and
/// pausing are boxed while they last.
pub(in crate::k8s) struct KindWatch {
    /// Shared by the cluster's kinds: a clone of the service stack is ~650 bytes, made per
    /// request instead of kept per watch.
    http: Arc<Http>,
    /// The version served, of which the path is made for each request (a path kept by each of
    /// 70,000 watches was 5 MiB); one text for the fleet.
    version: SharedText,
    /// The open watch's body, while the state is [`Stand::Open`].
    body: Option<ResponseBody>,
    lines: Lines,
    state: Watching,
    /// What it waits for other than the open body's next line.
    waiting: Option<Waiting>,
}

/// What a kind's watch waits for, besides its open body.
enum Waiting {
    /// The pause before the next request.
    Pause(Pin<Box<Sleep>>),
    /// A list, or a watch being opened.
    Request(BoxFuture<'static, Answer>),
    /// While a streaming list's initial events arrive: by when their end must be marked.
    Due(Pin<Box<Sleep>>),
}

/// What a request brought.
enum Answer {
    Listed(Result<(Vec<FluxSummary>, String), Trouble>),
    Opened(Result<ResponseBody, Trouble>),
    Streamed(Result<ResponseBody, Trouble>),
}

impl KindWatch {
    pub(in crate::k8s) fn new(
        http: Arc<Http>,
        kind: FluxKind,
        version: SharedText,
        (chunk_size, max_objects): (usize, usize),
        lists: Lists,
        max_backoff: Duration,
        seed: u64,
    ) -> KindWatch {
        KindWatch {
            http,
            version,
            body: None,
            lines: Lines::default(),
            state: Watching::new(kind, (chunk_size, max_objects), lists, max_backoff, seed),
            waiting: None,
        }
    }

    pub(in crate::k8s) fn kind(&self) -> FluxKind {
        self.state.kind()
    }

    /// `/apis/<group>/<version>/<plural>`
    fn path(&self) -> String {
        let kind = self.kind();
        format!("/apis/{}/{}/{}", kind.group(), self.version, kind.plural())
    }

    /// Waits for the next thing worth telling. Never ends: failures are reported and retried.
    pub(in crate::k8s) async fn next(&mut self) -> Step {
        std::future::poll_fn(|cx| self.poll_step(cx)).await
    }

    /// The next thing worth telling, once it has come; never ends: failures are reported and
    /// retried. Wakes `cx` when there is more.
    pub(in crate::k8s) fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<Step> {
        loop {
            let came = match &mut self.waiting {
                Some(Waiting::Pause(pause)) => {
                    ready!(pause.as_mut().poll(cx));
                    self.waiting = None;
                    continue;
                }
                Some(Waiting::Request(request)) => {
                    let answer = ready!(request.as_mut().poll(cx));
                    self.waiting = None;
                    match answer {
                        Answer::Listed(listed) => Came::Listed(listed),
                        Answer::Opened(opened) => Came::Opened(self.opened(opened)),
                        Answer::Streamed(opened) => Came::Streamed(self.opened(opened)),
                    }
                }
                Some(Waiting::Due(_)) | None => {
                    if let Some(delay) = self.state.take_wait() {
                        self.waiting = Some(Waiting::Pause(Box::pin(tokio::time::sleep(delay))));
                        continue;
                    }
                    match self.state.stand() {
                        Stand::Unlisted if self.state.streams() => {
                            let (http, uri) = (self.http.clone(), stream_uri(&self.path()));
                            self.request(async move { Answer::Streamed(open(&http, uri).await) });
                            continue;
                        }
                        Stand::Unlisted => {
                            let list = list(
                                self.http.clone(),
                                self.path(),
                                self.kind(),
                                (self.state.chunk_size(), self.state.max_objects()),
                            );
                            self.request(async move { Answer::Listed(list.await) });
                            continue;
                        }
                        Stand::From { rv } => {
                            let uri = watch_uri(&self.path(), None, rv);
                            let http = self.http.clone();
                            self.request(async move { Answer::Opened(open(&http, uri).await) });
                            continue;
                        }
                        Stand::Open { .. } => ready!(self.poll_open(cx)),
                    }
                }
            };
            let step = self.state.advance(came, Instant::now(), Timestamp::now());
            if !matches!(self.state.stand(), Stand::Open { .. }) {
                self.body = None;
                self.lines = Lines::default();
            }
            if self.state.end_due().is_none() && matches!(self.waiting, Some(Waiting::Due(_))) {
                self.waiting = None;
            }
            if let Some(step) = step {
                return Poll::Ready(step);
            }
        }
    }

    fn request(&mut self, request: impl Future<Output = Answer> + Send + 'static) {
        self.waiting = Some(Waiting::Request(Box::pin(request)));
    }

    /// Keeps the body of a watch the server accepted.
    fn opened(&mut self, opened: Result<ResponseBody, Trouble>) -> Result<(), Trouble> {
        self.body = Some(opened?);
        Ok(())
    }

    /// The open watch's next line, or — while a streaming list's initial events arrive — that
    /// their end was not marked in time.
    fn poll_open(&mut self, cx: &mut Context<'_>) -> Poll<Came> {
        if let Poll::Ready(came) = self.poll_line(cx) {
            return Poll::Ready(came);
        }
        let Some(due) = self.state.end_due() else {
            return Poll::Pending;
        };
        if !matches!(self.waiting, Some(Waiting::Due(_))) {
            self.waiting = Some(Waiting::Due(Box::pin(tokio::time::sleep_until(due))));
        }
        let Some(Waiting::Due(deadline)) = &mut self.waiting else {
            return Poll::Pending;
        };
        // Each line heard moves it.
        if deadline.deadline() != due {
            deadline.as_mut().reset(due);
        }
        ready!(deadline.as_mut().poll(cx));
        Poll::Ready(Came::Unmarked)
    }

    /// What the open watch brings next: a complete line, its end, or its breaking.
    fn poll_line(&mut self, cx: &mut Context<'_>) -> Poll<Came> {
        let Some(body) = self.body.as_mut() else {
            return Poll::Ready(Came::Ended);
        };
        Poll::Ready(match ready!(self.lines.poll_read(body, cx)) {
            Ok(Some(line)) => Came::Line(line),
            Ok(None) => Came::Ended,
            Err(Unread::TooLong) => {
                Came::Refused(Trouble::garbage("a watch event larger than 16 MiB"))
            }
            Err(Unread::Moved) => Came::Moved,
            Err(Unread::Broke(e)) => {
                let silent = fluxfleet_h2::H2Error::of(&*e)
                    .is_some_and(|h| h.why == fluxfleet_h2::Why::PingUnanswered);
                let mut failure = Trouble::transport(&*e).into_failure();
                failure.message = format!("the watch broke: {}", failure.message);
                if silent {
                    Came::Lost(Trouble::Failed(failure))
                } else {
                    Came::Broke(Trouble::Failed(failure))
                }
            }
        })
    }
}

/// Every page of the list of `kind` at `path`, summarised page by page, with the list's
/// resourceVersion. A list longer than the kind may hold (or one whose pages never end) is the
/// server's error.
async fn list(
    http: Arc<Http>,
    path: String,
    kind: FluxKind,
    (chunk_size, max_objects): (u32, usize),
) -> Result<(Vec<FluxSummary>, String), Trouble> {
    let mut summaries = Vec::new();
    let mut token: Option<String> = None;
    let (mut items, mut pages) = (0usize, 0usize);
    // Pages may hold fewer items than asked for, but not forever.
    let max_pages = max_objects / chunk_size as usize * 2 + 16;
    loop {
        pages += 1;
        if pages > max_pages {
            let what = format!("a list of more than {max_pages} pages");
            return Err(Watching::too_many_of(kind, max_objects, what));
        }
        let mut params = ListParams::default().limit(chunk_size);
        if let Some(t) = token.take() {
            params = params.continue_token(&t);
        }
        let uri = kube::core::Request::new(&path)
            .list(&params)
            .map_err(|e| Trouble::Failed(Failure::new(Phase::Invalid, e.to_string())))?
            .uri()
            .to_string();
        let page = api::get_seeded(&http, &uri, ListPage(kind)).await?;
        items += page.items;
        if items > max_objects {
            let what = format!("more than {max_objects} objects");
            return Err(Watching::too_many_of(kind, max_objects, what));
        }
        summaries.extend(page.summaries);
        match page.continue_token.filter(|t| !t.is_empty()) {
            Some(t) => token = Some(t),
            None => {
                let rv = page.resource_version.filter(|rv| !rv.is_empty());
                let Some(rv) = rv else {
                    return Err(Trouble::garbage("a list without a resourceVersion"));
                };
                return Ok((summaries, rv));
            }
        }
    }
}

/// Opens the watch at `uri`.
async fn open(http: &Http, uri: Result<String, Trouble>) -> Result<ResponseBody, Trouble> {
    Ok(api::get(http, &uri?).await?.into_body())
}

/// The URI of a watch of the collection at `path` from `version` (the server's, so escaped),
/// with bookmarks, ended by the server after [`WATCH_SECONDS`]; only the objects `fields` selects.
pub(super) fn watch_uri(
    path: &str,
    fields: Option<&str>,
    version: &str,
) -> Result<String, Trouble> {
    let mut params = WatchParams::default().timeout(WATCH_SECONDS);
    if let Some(fields) = fields {
        params = params.fields(fields);
    }
    Ok(kube::core::Request::new(path)
        .watch(&params, version)
        .map_err(|e| Trouble::Failed(Failure::new(Phase::Invalid, e.to_string())))?
        .uri()
        .to_string())
}

/// The URI of a streaming list of the collection at `path`: a watch from the server's most
/// recent version (read as a quorum read would) that begins with every object as ADDED and marks
/// their end with an annotated BOOKMARK; ended by the server after [`WATCH_SECONDS`].
pub(super) fn stream_uri(path: &str) -> Result<String, Trouble> {
    let params = WatchParams::streaming_lists().timeout(WATCH_SECONDS);
    Ok(kube::core::Request::new(path)
        .watch(&params, "")
        .map_err(|e| Trouble::Failed(Failure::new(Phase::Invalid, e.to_string())))?
        .uri()
        .to_string())
}

/// Splits a body arriving in frames into lines of at most `MAX` bytes. Holds no buffer between
/// lines: a frame is split where it lies, and only the start of a line still waiting for its end
/// is copied.
#[derive(Default)]
pub(super) struct Lines<const MAX: usize = MAX_LINE> {
    /// The unread rest of the last frame.
    frame: Bytes,
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
}

#[derive(Debug, PartialEq)]
pub(super) struct TooLong;

/// Why a body gave no line.
pub(super) enum Unread {
    /// A line longer than the lines' bound.
    TooLong,
    /// The body broke (reset, connection lost).
    Broke(tower::BoxError),
    /// Nothing more has come, and the server said the connection is going away (GOAWAY): the
    /// reader should move to a new connection.
    Moved,
}

impl<const MAX: usize> Lines<MAX> {
    /// The next complete line of `body`, reading its frames as they come; None once the body
    /// has ended (and the lines start afresh).
    pub(super) async fn read(&mut self, body: &mut ResponseBody) -> Result<Option<Bytes>, Unread> {
        std::future::poll_fn(|cx| self.poll_read(body, cx)).await
    }

    /// [`Lines::read`], polled: wakes `cx` when a frame comes.
    pub(super) fn poll_read(
        &mut self,
        body: &mut ResponseBody,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Bytes>, Unread>> {
        loop {
            match self.next() {
                Ok(Some(line)) => return Poll::Ready(Ok(Some(line))),
                Ok(None) => {}
                Err(TooLong) => return Poll::Ready(Err(Unread::TooLong)),
            }
            // What came before the server said it is going away is read first.
            let next = match Pin::new(&mut *body).poll_frame(cx) {
                Poll::Pending if body.going_away() => return Poll::Ready(Err(Unread::Moved)),
                Poll::Pending => return Poll::Pending,
                Poll::Ready(frame) => frame,
            };
            match next {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.push(data);
                    }
                }
                Some(Err(e)) => return Poll::Ready(Err(Unread::Broke(e))),
                None => {
                    *self = Lines::default();
                    return Poll::Ready(Ok(None));
                }
            }
        }
    }

    /// Call only once `next` has returned None: the previous frame is used up.
    pub(super) fn push(&mut self, frame: Bytes) {
        self.frame = frame;
    }

    /// The next complete, non-blank line; None when more frames are needed.
    pub(super) fn next(&mut self) -> Result<Option<Bytes>, TooLong> {
        while let Some(end) = memchr::memchr(b'\n', &self.frame) {
            let mut line = self.frame.split_to(end + 1);
            line.truncate(end);
            // Most lines lie whole in one frame: no copy.
            if !self.partial.is_empty() {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(&line);
                line = Bytes::from(whole);
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Ok(Some(line));
            }
        }
        if !self.frame.is_empty() {
            if self.partial.len() + self.frame.len() > MAX {
                self.partial = Vec::new();
                self.frame = Bytes::new();
                return Err(TooLong);
            }
            self.partial.extend_from_slice(&self.frame);
            self.frame = Bytes::new();
        }
        Ok(None)
    }
}

#[cfg(test)]
mod going_away;
#[cfg(test)]
mod streaming;
#[cfg(test)]
mod tests;
