//! One kind's list-then-watch on one cluster, the way a Kubernetes reflector does it: a paginated
//! list (replacing the kind's rows at once), then a watch from the list's resourceVersion with
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

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use jiff::Timestamp;
use kube::api::{ListParams, WatchParams};
use tokio::time::Instant;

use super::page::{Page, WatchLine};
use super::summarize::{key_of, summarize};
use crate::fleet::{FluxKind, FluxSummary, ObjectKey, Phase};
use crate::k8s::wire::api::{self, Http, Reason, Trouble};
use crate::k8s::wire::backoff::Backoff;
use crate::k8s::wire::errors::Failure;
use crate::k8s::wire::response::ResponseBody;

/// The server ends a watch after this long (kube and client-go use about 5 minutes); it is then
/// re-opened from the last resourceVersion seen.
pub(super) const WATCH_SECONDS: u32 = 290;
/// A watch line longer than this is a misbehaving server, not a Flux object.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// A watch that ran this long before it broke is resumed at once: it was a working watch, not a
/// server refusing to hold one (client-go's reflector calls a watch under a second with no
/// event "very short").
pub(in crate::k8s) const RAN_LONG_ENOUGH: Duration = Duration::from_secs(5);
/// Watches that broke sooner are resumed at once this many times a minute, then backed off.
pub(in crate::k8s) const QUICK_RESUMES: u8 = 3;
const QUICK_WINDOW: Duration = Duration::from_secs(60);

/// What a kind's watch has to say next.
#[derive(Debug)]
pub(in crate::k8s) enum Step {
    /// A complete list: the kind's rows, replacing whatever was known.
    Listed(Vec<FluxSummary>),
    /// The watch request was accepted: from here on, changes arrive as they happen.
    Watching,
    Applied(Box<FluxSummary>),
    Deleted(ObjectKey),
    /// The server broke the watch and it was resumed at once from where it stopped: nothing
    /// was missed, and the kind stays live.
    Restarted,
    /// A request failed; this watch tries again by itself at `retry_at`.
    Failed {
        /// What the server's refusal meant; None when no server answered.
        reason: Option<Reason>,
        failure: Failure,
        retry_at: Timestamp,
    },
}

pub(in crate::k8s) struct KindWatch {
    /// Shared by the cluster's kinds: a clone of the service stack is ~650 bytes, made per
    /// request instead of kept per watch.
    http: Arc<Http>,
    kind: FluxKind,
    /// The version served, of which the path is made for each request (a path kept by each of
    /// 70,000 watches was 5 MiB).
    version: Box<str>,
    /// Where the watch resumes; None means list first.
    resource_version: Option<String>,
    body: Option<ResponseBody>,
    lines: Lines,
    chunk_size: u32,
    /// Objects this kind may hold on this cluster, and how many it holds (listed, plus added,
    /// less deleted since).
    max_objects: usize,
    objects: usize,
    backoff: Backoff,
    wait: Option<Duration>,
    /// When the open watch was opened.
    opened: Option<Instant>,
    /// Since when quick resumes are counted, and how many there were since.
    quick: Option<(Instant, u8)>,
}

impl KindWatch {
    pub(in crate::k8s) fn new(
        http: Arc<Http>,
        kind: FluxKind,
        version: &str,
        chunk_size: usize,
        max_objects: usize,
        max_backoff: Duration,
        seed: u64,
    ) -> KindWatch {
        KindWatch {
            http,
            kind,
            version: version.into(),
            resource_version: None,
            body: None,
            lines: Lines::default(),
            chunk_size: u32::try_from(chunk_size).unwrap_or(u32::MAX).max(1),
            max_objects,
            objects: 0,
            backoff: Backoff::new(Duration::from_millis(500), max_backoff, seed),
            wait: None,
            opened: None,
            quick: None,
        }
    }

    pub(in crate::k8s) fn kind(&self) -> FluxKind {
        self.kind
    }

    /// `/apis/<group>/<version>/<plural>`
    fn path(&self) -> String {
        let kind = self.kind;
        format!("/apis/{}/{}/{}", kind.group(), self.version, kind.plural())
    }

    /// Waits for the next thing worth telling. Never ends: failures are reported and retried.
    ///
    /// Listing, opening and backing off are boxed: a watch spends its life waiting for the next
    /// line, and each of a fleet's watches should carry only what that takes.
    pub(in crate::k8s) async fn next(&mut self) -> Step {
        loop {
            if let Some(delay) = self.wait.take() {
                Box::pin(tokio::time::sleep(delay)).await;
            }
            if self.resource_version.is_none() {
                match Box::pin(self.list()).await {
                    Ok(items) => return Step::Listed(items),
                    Err(trouble) => match self.failed(trouble) {
                        Some(step) => return step,
                        None => continue,
                    },
                }
            }
            if self.body.is_none() {
                match Box::pin(self.open()).await {
                    Ok(body) => {
                        // Opening is not health: a server may break every watch it accepts.
                        self.body = Some(body);
                        self.opened = Some(Instant::now());
                        return Step::Watching;
                    }
                    Err(trouble) => match self.failed(trouble) {
                        Some(step) => return step,
                        None => continue,
                    },
                }
            }
            let outcome = match self.line().await {
                Ok(Some(line)) => {
                    let event = self.event(&line);
                    if event.is_ok() {
                        self.backoff.healthy();
                    }
                    event
                }
                Ok(None) => {
                    // The server ended the watch (its timeout): resume where it stopped.
                    self.body = None;
                    Ok(None)
                }
                Err(Cut::Broke(trouble)) => {
                    self.body = None;
                    self.lines = Lines::default();
                    match self.resume_at_once(Instant::now()) {
                        Ok(()) => return Step::Restarted,
                        Err(broken) => Err(broke_often(trouble, broken)),
                    }
                }
                Err(Cut::Refused(trouble)) => Err(trouble),
            };
            match outcome {
                Ok(Some(step)) => return step,
                Ok(None) => {}
                Err(trouble) => {
                    self.body = None;
                    self.lines = Lines::default();
                    if let Some(step) = self.failed(trouble) {
                        return step;
                    }
                }
            }
        }
    }

    /// Whether the watch that just broke may be resumed at once (it ran long enough, or a quick
    /// resume is left this minute); else how many quick ones this minute already took.
    fn resume_at_once(&mut self, now: Instant) -> Result<(), u8> {
        let ran = self.opened.take().map(|t| now.duration_since(t));
        if ran.is_some_and(|ran| ran >= RAN_LONG_ENOUGH) {
            return Ok(());
        }
        let (since, taken) = match self.quick {
            Some((since, taken)) if now.duration_since(since) < QUICK_WINDOW => (since, taken),
            _ => (now, 0),
        };
        if taken >= QUICK_RESUMES {
            self.quick = Some((since, taken));
            return Err(taken);
        }
        self.quick = Some((since, taken + 1));
        Ok(())
    }

    /// A failure: 410 Gone means relist now; anything else is reported and retried after a delay.
    fn failed(&mut self, trouble: Trouble) -> Option<Step> {
        if trouble.reason() == Some(Reason::Gone) {
            self.resource_version = None;
            return None;
        }
        let delay = self.backoff.next_delay();
        self.wait = Some(delay);
        Some(Step::Failed {
            reason: trouble.reason(),
            failure: trouble.into_failure(),
            retry_at: Timestamp::now() + delay,
        })
    }

    /// Every page of the list, summarised page by page; remembers the list's resourceVersion.
    /// A list longer than `max_objects` (or one whose pages never end) is the server's error.
    async fn list(&mut self) -> Result<Vec<FluxSummary>, Trouble> {
        let mut summaries = Vec::new();
        let mut token: Option<String> = None;
        let (mut items, mut pages) = (0usize, 0usize);
        // Pages may hold fewer items than asked for, but not forever.
        let max_pages = self.max_objects / self.chunk_size as usize * 2 + 16;
        loop {
            pages += 1;
            if pages > max_pages {
                return Err(self.too_many(format!("a list of more than {max_pages} pages")));
            }
            let mut params = ListParams::default().limit(self.chunk_size);
            if let Some(t) = token.take() {
                params = params.continue_token(&t);
            }
            let uri = kube::core::Request::new(self.path())
                .list(&params)
                .map_err(|e| Trouble::Failed(Failure::new(Phase::Invalid, e.to_string())))?
                .uri()
                .to_string();
            let page = api::get_seeded(&self.http, &uri, Page(self.kind)).await?;
            items += page.items;
            if items > self.max_objects {
                return Err(self.too_many(format!("more than {} objects", self.max_objects)));
            }
            summaries.extend(page.summaries);
            match page.continue_token.filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t),
                None => {
                    let rv = page.resource_version.filter(|rv| !rv.is_empty());
                    let Some(rv) = rv else {
                        return Err(Trouble::garbage("a list without a resourceVersion"));
                    };
                    self.resource_version = Some(rv);
                    self.objects = summaries.len();
                    return Ok(summaries);
                }
            }
        }
    }

    /// The server sends more of this kind than one cluster may hold.
    fn too_many(&self, what: String) -> Trouble {
        Trouble::Failed(Failure::new(
            Phase::ServerError,
            format!(
                "the server sent {what} of kind {} (engine.max_objects is {}): not kept",
                self.kind, self.max_objects
            ),
        ))
    }

    async fn open(&self) -> Result<ResponseBody, Trouble> {
        let rv = self.resource_version.as_deref().unwrap_or_default();
        let uri = watch_uri(&self.path(), None, rv)?;
        Ok(api::get(&self.http, &uri).await?.into_body())
    }

    /// The next complete line of the watch; None when the server ended it.
    async fn line(&mut self) -> Result<Option<Bytes>, Cut> {
        let Some(body) = self.body.as_mut() else {
            return Ok(None);
        };
        match self.lines.read(body).await {
            Ok(line) => Ok(line),
            Err(Unread::TooLong) => Err(Cut::Refused(Trouble::garbage(
                "a watch event larger than 16 MiB",
            ))),
            Err(Unread::Broke(e)) => {
                let mut failure = Trouble::transport(&*e).into_failure();
                failure.message = format!("the watch broke: {}", failure.message);
                Err(Cut::Broke(Trouble::Failed(failure)))
            }
        }
    }

    /// One watch event; None for what changes nothing that is shown (bookmarks, unnamed objects).
    fn event(&mut self, line: &[u8]) -> Result<Option<Step>, Trouble> {
        let WatchLine { kind, object } = serde_json::from_slice(line).map_err(Trouble::garbage)?;
        let kind = kind.get().unwrap_or_default();
        let object = object.0.unwrap_or_default();
        if kind == "ERROR" {
            let status = kube::core::Status {
                code: object
                    .code
                    .0
                    .and_then(|c| u16::try_from(c).ok())
                    .unwrap_or(0),
                reason: object.reason.get().unwrap_or_default().to_owned(),
                message: object.message.get().unwrap_or_default().to_owned(),
                ..kube::core::Status::default()
            };
            return Err(Trouble::status(&status));
        }
        if let Some(rv) = object.resource_version() {
            self.resource_version = Some(rv.to_string());
        }
        Ok(match kind {
            "ADDED" if self.objects >= self.max_objects => {
                // Relist: the count starts again from what the server really holds.
                self.resource_version = None;
                return Err(self.too_many(format!("more than {} objects", self.max_objects)));
            }
            "ADDED" | "MODIFIED" => {
                self.objects += usize::from(kind == "ADDED");
                summarize(self.kind, Some(&object)).map(|s| Step::Applied(Box::new(s)))
            }
            "DELETED" => {
                self.objects = self.objects.saturating_sub(1);
                key_of(self.kind, &object).map(Step::Deleted)
            }
            "BOOKMARK" => None,
            other => return Err(Trouble::garbage(format!("a watch event of type {other:?}"))),
        })
    }
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

/// How reading a watch's lines failed.
enum Cut {
    /// The stream broke under it (reset, connection lost): the watch may be resumed.
    Broke(Trouble),
    /// The server sent what no watch sends.
    Refused(Trouble),
}

/// A watch broken again within seconds, more often than quick resumes allow: the server
/// answers but will not hold a watch, which is its error, not a lost route.
fn broke_often(trouble: Trouble, quick: u8) -> Trouble {
    let mut failure = trouble.into_failure();
    failure.phase = Phase::ServerError;
    failure.message = format!(
        "{} (the {} watches before it this minute broke within {} s too)",
        failure.message,
        quick,
        RAN_LONG_ENOUGH.as_secs()
    );
    Trouble::Failed(failure)
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
}

impl<const MAX: usize> Lines<MAX> {
    /// The next complete line of `body`, reading its frames as they come; None once the body
    /// has ended (and the lines start afresh).
    pub(super) async fn read(&mut self, body: &mut ResponseBody) -> Result<Option<Bytes>, Unread> {
        loop {
            match self.next() {
                Ok(Some(line)) => return Ok(Some(line)),
                Ok(None) => {}
                Err(TooLong) => return Err(Unread::TooLong),
            }
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.push(data);
                    }
                }
                Some(Err(e)) => return Err(Unread::Broke(e)),
                None => {
                    *self = Lines::default();
                    return Ok(None);
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
        while let Some(end) = self.frame.iter().position(|b| *b == b'\n') {
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
mod tests;
