//! Where one kind's watch stands, and what it does next, apart from its I/O — as kube-runtime's
//! watcher keeps an explicit state stepped by what each request brought. [`Watching::advance`]
//! is a function of the state, what [`Came`] of the last request, and the time: it says what to
//! tell ([`Step`]), where the watch stands now ([`Stand`]: list, open a watch from a version, or
//! read the open one) and how long to wait before the next request. The driver
//! ([`super::KindWatch`]) only makes the request the stand asks for.
//!
//! A kind is listed by streaming where the server serves it (Kubernetes' "watch list", KEP-3157,
//! on by default since 1.34, what client-go's informers do since 1.35): one watch with
//! `sendInitialEvents=true` sends every object as an ADDED event, then a BOOKMARK annotated
//! `k8s.io/initial-events-end`, and stays open. A server that refuses it (400 or 422: before 1.27,
//! or the `WatchList` gate off), or that sends the initial events without that mark (a proxy that
//! drops the parameters), or not within [`END_DUE`], has the kind listed in pages from then on.

use std::time::Duration;

use bytes::Bytes;
use jiff::Timestamp;
use tokio::time::Instant;

use super::super::page::WatchLine;
use super::super::summarize::{key_of, summarize};

mod initial;

use crate::fleet::{FluxKind, FluxSummary, Lists, ObjectKey, Phase};
use crate::k8s::wire::api::{Reason, Trouble};
use crate::k8s::wire::backoff::Backoff;
use crate::k8s::wire::errors::Failure;

/// A watch that ran this long before it broke is resumed at once: it was a working watch, not a
/// server refusing to hold one (client-go's reflector calls a watch under a second with no
/// event "very short").
pub(in crate::k8s) const RAN_LONG_ENOUGH: Duration = Duration::from_secs(5);
/// Watches that broke sooner are resumed at once this many times a minute, then backed off.
pub(in crate::k8s) const QUICK_RESUMES: u8 = 3;
const QUICK_WINDOW: Duration = Duration::from_secs(60);
/// A streaming list whose initial events are not marked ended this long after it opened is
/// listed in pages instead: as long as one list request may take.
pub(in crate::k8s) const END_DUE: Duration = crate::k8s::wire::api::REQUEST_TIMEOUT;
/// Nor one silent this long before the mark: kube-apiserver sends the initial events without
/// pause once its cache is fresh (it waits at most 3 s for that), while a proxy that dropped the
/// parameters leaves a plain watch quiet after them until its first bookmark, a minute on.
pub(in crate::k8s) const QUIET_DUE: Duration = Duration::from_secs(10);

/// What a kind's watch has to say next.
#[derive(Debug)]
pub(in crate::k8s) enum Step {
    /// A complete list: the kind's rows, replacing whatever was known, and how it was listed.
    /// Streamed, the kind's watch is open already (no [`Step::Watching`] follows).
    Listed(Vec<FluxSummary>, Lists),
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

/// Where the watch stands: which request comes next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::k8s) enum Stand {
    /// Nothing to watch from: list (again), by streaming or in pages.
    Unlisted,
    /// Listed, or a watch ended where it stopped: open a watch from `rv`.
    From { rv: String },
    /// A watch is open since `since`; `rv` is the last version it told.
    Open { rv: String, since: Instant },
}

/// What the last request brought.
#[derive(Debug)]
pub(in crate::k8s) enum Came {
    /// The whole list, with its resourceVersion; or why not.
    Listed(Result<(Vec<FluxSummary>, String), Trouble>),
    /// The watch request was accepted, or why not.
    Opened(Result<(), Trouble>),
    /// The streaming list's watch was accepted, or why not.
    Streamed(Result<(), Trouble>),
    /// The streaming list's initial events were not marked ended within [`END_DUE`].
    Unmarked,
    /// One line of the open watch.
    Line(Bytes),
    /// The server ended the watch (its timeout).
    Ended,
    /// The stream broke under it (reset, connection lost): it may be resumed.
    Broke(Trouble),
    /// The server said the watch's connection is going away (GOAWAY): the watch moves to a
    /// new connection, from where it stopped.
    Moved,
    /// The connection went silent (the server left a ping unanswered): the watch is lost.
    Lost(Trouble),
    /// The server sent what no watch sends.
    Refused(Trouble),
}

/// A streaming list on its way (its events are read in `initial.rs`).
struct Initial {
    objects: Vec<FluxSummary>,
    /// When it must end by, however busy.
    due: Instant,
    /// When it last sent a line.
    heard: Instant,
}

/// One kind's watch on one cluster, without its connection.
pub(in crate::k8s) struct Watching {
    kind: FluxKind,
    /// Objects asked for in a list page (beside `kind`: one word for both).
    chunk_size: u32,
    /// The watch moved off a connection going away and is not open again yet: a failure to
    /// open it says so (beside `chunk_size`, in the same word).
    moved: bool,
    /// How the kind is listed next (the same word again).
    lists: Lists,
    stand: Stand,
    /// While a streaming list's initial events arrive: the objects so far, and by when their
    /// end must be marked.
    initial: Option<Box<Initial>>,
    /// Objects this kind may hold on this cluster, and how many it holds (listed, plus added,
    /// less deleted since).
    max_objects: usize,
    objects: usize,
    backoff: Backoff,
    /// To wait before the next request.
    wait: Option<Duration>,
    /// Since when quick resumes are counted, and how many there were since.
    quick: Option<(Instant, u8)>,
}

impl Watching {
    pub(in crate::k8s) fn new(
        kind: FluxKind,
        (chunk_size, max_objects): (usize, usize),
        lists: Lists,
        max_backoff: Duration,
        seed: u64,
    ) -> Watching {
        Watching {
            kind,
            chunk_size: u32::try_from(chunk_size).unwrap_or(u32::MAX).max(1),
            moved: false,
            lists,
            stand: Stand::Unlisted,
            initial: None,
            max_objects,
            objects: 0,
            backoff: Backoff::new(Duration::from_millis(500), max_backoff, seed),
            wait: None,
            quick: None,
        }
    }

    pub(in crate::k8s) fn kind(&self) -> FluxKind {
        self.kind
    }

    pub(in crate::k8s) fn stand(&self) -> &Stand {
        &self.stand
    }

    pub(in crate::k8s) fn max_objects(&self) -> usize {
        self.max_objects
    }

    pub(in crate::k8s) fn chunk_size(&self) -> u32 {
        self.chunk_size
    }

    /// The next list is a streaming one.
    pub(in crate::k8s) fn streams(&self) -> bool {
        self.lists == Lists::Streaming
    }

    /// While a streaming list's initial events arrive: by when their end must be marked (or
    /// the next line come).
    pub(in crate::k8s) fn end_due(&self) -> Option<Instant> {
        self.initial
            .as_ref()
            .map(|i| i.due.min(i.heard + QUIET_DUE))
    }

    /// The pause before the next request, once.
    pub(in crate::k8s) fn take_wait(&mut self) -> Option<Duration> {
        self.wait.take()
    }

    /// Steps on what the last request brought, at `now` (`wall` for when a retry is due): what
    /// to tell, if anything.
    pub(in crate::k8s) fn advance(
        &mut self,
        came: Came,
        now: Instant,
        wall: Timestamp,
    ) -> Option<Step> {
        match came {
            Came::Listed(Ok((summaries, rv))) => {
                self.moved = false;
                self.objects = summaries.len();
                self.stand = Stand::From { rv };
                Some(Step::Listed(summaries, self.lists))
            }
            Came::Listed(Err(trouble)) | Came::Opened(Err(trouble)) => self.failed(trouble, wall),
            Came::Streamed(Ok(())) => {
                self.moved = false;
                self.stand = Stand::Open {
                    rv: String::new(),
                    since: now,
                };
                self.initial = Some(Box::new(Initial {
                    objects: Vec::new(),
                    due: now + END_DUE,
                    heard: now,
                }));
                None
            }
            // The server does not take the watch-list parameters: pages from now on.
            Came::Streamed(Err(trouble))
                if matches!(trouble.reason(), Some(Reason::BadRequest | Reason::Invalid)) =>
            {
                tracing::debug!(kind = %self.kind, error = %trouble.into_failure().message, "streaming list refused; listing in pages");
                self.lists = Lists::Refused;
                None
            }
            Came::Streamed(Err(trouble)) => self.failed(trouble, wall),
            Came::Unmarked => {
                self.close();
                self.lists = Lists::Unmarked;
                None
            }
            Came::Opened(Ok(())) => {
                self.moved = false;
                // Opening is not health: a server may break every watch it accepts.
                let rv = self.version().unwrap_or_default();
                self.stand = Stand::Open { rv, since: now };
                Some(Step::Watching)
            }
            Came::Line(line) => {
                if let Some(initial) = self.initial.as_mut() {
                    initial.heard = now;
                }
                match self.event(&line) {
                    Ok(step) => {
                        self.backoff.healthy();
                        step
                    }
                    Err(trouble) => {
                        self.close();
                        self.failed(trouble, wall)
                    }
                }
            }
            Came::Ended => {
                let streaming = self.initial.is_some();
                let since = self.since();
                // Resumed where it stopped; a streaming list ended before its end was marked
                // starts again, and again only a few times a minute.
                self.close();
                if streaming && self.resume_at_once(since, now).is_err() {
                    self.lists = Lists::Unmarked;
                }
                None
            }
            Came::Broke(trouble) => {
                let since = self.since();
                self.close();
                match self.resume_at_once(since, now) {
                    Ok(()) => Some(Step::Restarted),
                    Err(quick) => self.failed(broke_often(trouble, quick), wall),
                }
            }
            Came::Refused(trouble) => {
                self.close();
                self.failed(trouble, wall)
            }
            Came::Moved => {
                let since = self.since();
                self.close();
                // Moving costs a connection: a server that goes away from every watch within
                // seconds is backed off from, as one that breaks them.
                match self.resume_at_once(since, now) {
                    Ok(()) => {
                        self.moved = true;
                        None
                    }
                    Err(quick) => self.failed(went_away_often(quick), wall),
                }
            }
            Came::Lost(trouble) => {
                self.close();
                // Told at once, and asked again at once: nothing was heard for seconds, so the
                // kind is not live until a new connection holds its watch again.
                Some(Step::Failed {
                    reason: None,
                    failure: trouble.into_failure(),
                    retry_at: wall,
                })
            }
        }
    }

    /// Since when the open watch is open.
    fn since(&self) -> Option<Instant> {
        match &self.stand {
            Stand::Open { since, .. } => Some(*since),
            _ => None,
        }
    }

    /// The version the watch is at, if any.
    fn version(&self) -> Option<String> {
        match &self.stand {
            Stand::Unlisted => None,
            Stand::From { rv } | Stand::Open { rv, .. } => Some(rv.clone()),
        }
    }

    /// The open watch is done with: the next one opens where it stopped — a streaming list cut
    /// before its end starts again.
    fn close(&mut self) {
        if self.initial.take().is_some() {
            self.stand = Stand::Unlisted;
            return;
        }
        if let Stand::Open { rv, .. } = &mut self.stand {
            let rv = std::mem::take(rv);
            self.stand = Stand::From { rv };
        }
    }

    /// Whether a watch open since `since` that broke at `now` may be resumed at once (it ran
    /// long enough, or a quick resume is left this minute); else how many quick ones this
    /// minute already took.
    pub(in crate::k8s) fn resume_at_once(
        &mut self,
        since: Option<Instant>,
        now: Instant,
    ) -> Result<(), u8> {
        let ran = since.map(|t| now.duration_since(t));
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

    /// A failure: 410 Gone means relist now; anything else is told and retried after a delay —
    /// when the server said to ask again (429 with `Retry-After`), then.
    fn failed(&mut self, trouble: Trouble, wall: Timestamp) -> Option<Step> {
        let reason = trouble.reason();
        if reason == Some(Reason::Gone) {
            self.stand = Stand::Unlisted;
            return None;
        }
        let delay = match reason.and_then(Reason::retry_after) {
            Some(after) => self.backoff.asked(after),
            None => self.backoff.next_delay(),
        };
        self.wait = Some(delay);
        let mut failure = trouble.into_failure();
        if self.moved {
            failure.message = format!(
                "the server is going away (GOAWAY) and a new connection failed: {}",
                failure.message
            );
        }
        Some(Step::Failed {
            reason,
            failure,
            retry_at: wall + delay,
        })
    }

    /// The server sends more of this kind than one cluster may hold.
    pub(in crate::k8s) fn too_many(&self, what: String) -> Trouble {
        Watching::too_many_of(self.kind, self.max_objects, what)
    }

    /// The server sends more of `kind` than one cluster may hold (`max_objects`).
    pub(in crate::k8s) fn too_many_of(kind: FluxKind, max_objects: usize, what: String) -> Trouble {
        Trouble::Failed(Failure::new(
            Phase::ServerError,
            format!(
                "the server sent {what} of kind {kind} (engine.max_objects is {max_objects}): not kept"
            ),
        ))
    }

    /// One watch event; None for what changes nothing that is shown (bookmarks, unnamed
    /// objects). Its resourceVersion is where the watch stands from now on.
    pub(in crate::k8s) fn event(&mut self, line: &[u8]) -> Result<Option<Step>, Trouble> {
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
            let trouble = Trouble::status(&status);
            // A streaming list the server fails before its end (kube-apiserver on an etcd
            // without progress notifications says 500 "RequestWatchProgress is disabled"):
            // listed in pages instead, as client-go falls back. 410 Gone streams again.
            if self.initial.is_some() && trouble.reason() != Some(Reason::Gone) {
                tracing::debug!(kind = %self.kind, error = %trouble.into_failure().message, "streaming list failed; listing in pages");
                self.close();
                self.lists = Lists::Refused;
                return Ok(None);
            }
            return Err(trouble);
        }
        if let (Some(seen), Stand::Open { rv, .. }) = (object.resource_version(), &mut self.stand) {
            seen.clone_into(rv);
        }
        if self.initial.is_some() {
            return self.initial_event(kind, &object, line);
        }
        Ok(match kind {
            "ADDED" if self.objects >= self.max_objects => {
                // Relist: the count starts again from what the server really holds.
                self.stand = Stand::Unlisted;
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

/// Connections going away within seconds of each watch, more often than quick resumes allow:
/// the server takes watches only to send them elsewhere.
fn went_away_often(quick: u8) -> Trouble {
    Trouble::Failed(Failure::new(
        Phase::ServerError,
        format!(
            "the server went away (GOAWAY) from the watch within {} s of opening it, and from the {quick} before it this minute",
            RAN_LONG_ENOUGH.as_secs()
        ),
    ))
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
