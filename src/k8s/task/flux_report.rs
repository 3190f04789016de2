//! The Flux Operator's report on a cluster: its `FluxReport` and `FluxInstance`, read from a
//! cluster that serves `fluxcd.controlplane.io/v1` and kept as a [`Report`].
//!
//! A watched cluster reads the report once, then watches it ([`watched`]): the operator
//! rewrites it every five minutes by default, and reading it every `report_interval` read the
//! same report most times — two requests a minute for each such cluster, and a tenth of the CPU
//! of following a fleet. A summarized cluster, which holds no connection, reads it each time it
//! is looked at ([`read`]).

use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use jiff::Timestamp;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer};
use tokio::time::Instant;

use super::discovery::OPERATOR_GROUP;
use super::kind_watch::{Lines, RAN_LONG_ENOUGH, Unread, watch_uri};
use super::page::WatchLine;
use crate::fleet::report::{
    self, Instance, InstanceDoc, Report, ReportDoc, first, first_versioned,
};
use crate::k8s::wire::api::{self, Http, Reason, Trouble};
use crate::k8s::wire::response::ResponseBody;

/// A report or an instance is a few KiB; a server sending more for one is misbehaving.
const LIMIT: usize = 1024 * 1024;

/// A report written anew is passed on with the FluxInstance read again, at most this many
/// times a minute; past that it carries the instance read last. The operator writes its
/// report every few minutes: a server that writes it many times a second is not asked for the
/// instance as often.
const INSTANCE_READS: u8 = 6;

/// The operator names both `flux`, in the namespace it runs in — which is the user's choice, so
/// they are found by name across namespaces.
const NAME_SELECTOR: &str = "fieldSelector=metadata.name%3Dflux&limit=1";

/// The first `FluxReport` of a list, read straight from its bytes, as read at `.0`; with the
/// list's resourceVersion.
struct FirstReport(Timestamp);

impl<'de> DeserializeSeed<'de> for FirstReport {
    type Value = (Option<String>, Option<Result<Report, report::ReportError>>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let (version, doc) = first_versioned::<ReportDoc, _>(d)?;
        Ok((version, doc.map(|doc| Report::of(&doc, None, self.0))))
    }
}

/// The first `FluxInstance` of a list, read straight from its bytes.
struct FirstInstance;

impl<'de> DeserializeSeed<'de> for FirstInstance {
    type Value = Option<Instance>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(first::<InstanceDoc, _>(d)?.and_then(|doc| Instance::of(&doc)))
    }
}

/// The first object named `flux` of `plural`, as `seed` reads it; None when the kind is not
/// served (any more).
async fn named_flux<S, T>(http: &Http, plural: &str, seed: S) -> Result<Option<T>, Trouble>
where
    S: for<'de> DeserializeSeed<'de, Value = T>,
{
    let path = format!("/apis/{OPERATOR_GROUP}/v1/{plural}?{NAME_SELECTOR}");
    match api::get_seeded_within(http, &path, LIMIT, seed).await {
        Ok(read) => Ok(Some(read)),
        Err(trouble) if trouble.reason() == Some(Reason::NotFound) => Ok(None),
        Err(trouble) => Err(trouble),
    }
}

/// Reads the cluster's report, with its instance where there is one and it may be read. None:
/// the cluster has no report.
pub(in crate::k8s) async fn read(http: &Http) -> Result<Option<Report>, Trouble> {
    Ok(read_versioned(http).await?.0)
}

/// [`read`], with the resourceVersion of the report's list (None where the operator's kinds
/// are not served).
async fn read_versioned(http: &Http) -> Result<(Option<Report>, Option<String>), Trouble> {
    let read = named_flux(http, "fluxreports", FirstReport(Timestamp::now())).await?;
    let Some((version, report)) = read else {
        return Ok((None, None));
    };
    let Some(report) = report else {
        return Ok((None, version));
    };
    let report = report.map_err(Trouble::garbage)?;
    Ok((Some(with_instance(http, report).await), version))
}

/// `report` with the cluster's FluxInstance, where there is one and it may be read: without it
/// the report still says everything that counts.
async fn with_instance(http: &Http, mut report: Report) -> Report {
    report.instance = named_flux(http, "fluxinstances", FirstInstance)
        .await
        .ok()
        .flatten()
        .flatten()
        .map(Arc::new);
    report
}

/// The report now, then each time the operator writes it anew, for as long as it is polled:
/// read, then watched from the read's resourceVersion (re-opened where it stopped when the
/// server ends it, read again after 410 Gone). Where the watch cannot be held (it fails, breaks,
/// or ends within seconds), the report is read again after `every`, then watched again.
pub(in crate::k8s) fn watched(
    http: Arc<Http>,
    every: Duration,
) -> impl Stream<Item = Result<Option<Report>, Trouble>> {
    let watch = Watch {
        http,
        every,
        next: Next::Read,
        body: None,
        lines: Lines::default(),
        opened: Instant::now(),
        read: Instant::now(),
        instance: Instances {
            last: None,
            minute: Instant::now(),
            reads: 0,
        },
    };
    futures::stream::unfold(watch, |mut watch| async move {
        let read = watch.next().await;
        Some((read, watch))
    })
}

/// What the report's watch does next.
enum Next {
    Read,
    /// Watch from this resourceVersion (the body open, or to be opened).
    Watch(String),
    /// Read again after the interval.
    Wait,
}

struct Watch {
    http: Arc<Http>,
    every: Duration,
    next: Next,
    body: Option<ResponseBody>,
    lines: Lines<LIMIT>,
    /// When the watch was opened, and the report last read: a watch the server ends, or says
    /// 410 Gone to, within seconds of either is not tried again at once.
    opened: Instant,
    read: Instant,
    instance: Instances,
}

/// The FluxInstance as read last, and how often it was read in the current minute.
struct Instances {
    last: Option<Arc<Instance>>,
    minute: Instant,
    reads: u8,
}

impl Instances {
    /// Whether the instance may be read again now (counting the read).
    fn may_read(&mut self) -> bool {
        if self.minute.elapsed() >= Duration::from_secs(60) {
            self.minute = Instant::now();
            self.reads = 0;
        }
        self.reads = self.reads.saturating_add(1);
        self.reads <= INSTANCE_READS
    }
}

// The requests are boxed where they are awaited: a read takes ~1.4 KB of state, and a watch
// spends its life waiting for a line in between.
impl Watch {
    async fn next(&mut self) -> Result<Option<Report>, Trouble> {
        loop {
            match std::mem::replace(&mut self.next, Next::Wait) {
                Next::Wait => {
                    tokio::time::sleep(self.every).await;
                    self.next = Next::Read;
                }
                Next::Read => {
                    self.body = None;
                    self.read = Instant::now();
                    let read = Box::pin(read_versioned(&self.http)).await;
                    if let Ok((report, version)) = &read {
                        self.instance.last = report.as_ref().and_then(|r| r.instance.clone());
                        if let Some(version) = version {
                            self.next = Next::Watch(version.clone());
                        }
                    }
                    return read.map(|(report, _)| report);
                }
                Next::Watch(version) => {
                    if let Some(read) = self.watch(version).await {
                        return read;
                    }
                }
            }
        }
    }

    /// One step of the watch from `version`: a report to pass on, or None when there is none
    /// yet (`self.next` says what comes next).
    async fn watch(&mut self, version: String) -> Option<Result<Option<Report>, Trouble>> {
        if self.body.is_none() {
            match Box::pin(open(&self.http, &version)).await {
                Ok(body) => {
                    self.body = Some(body);
                    self.lines = Lines::default();
                    self.opened = Instant::now();
                }
                Err(trouble) if trouble.reason() == Some(Reason::Gone) => {
                    self.gone();
                    return None;
                }
                // Next::Wait: read again later, as before there was a watch.
                Err(_) => return None,
            }
        }
        let line = match self.line().await {
            Ok(Some(line)) => line,
            // The server ended it: again from where it was, unless it ends them at once.
            Ok(None) if self.opened.elapsed() >= RAN_LONG_ENOUGH => {
                self.next = Next::Watch(version);
                return None;
            }
            // The server is going away (GOAWAY): watched again at once, on a new connection
            // (one that goes away within seconds of each watch is read again later instead).
            Err(Unread::Moved) if self.opened.elapsed() >= RAN_LONG_ENOUGH => {
                self.next = Next::Watch(version);
                return None;
            }
            Ok(None) | Err(_) => return None,
        };
        // An event without a resourceVersion leaves the watch where it was.
        let at = |new: String| Next::Watch(if new.is_empty() { version.clone() } else { new });
        match event(&line, Timestamp::now()) {
            Event::Moved(new) => self.next = at(new),
            Event::Gone => self.gone(),
            Event::Deleted(new) => {
                self.next = at(new);
                return Some(Ok(None));
            }
            Event::Written(new, mut report) => {
                self.next = at(new);
                if self.instance.may_read() {
                    let read = Box::pin(with_instance(&self.http, *report)).await;
                    self.instance.last = read.instance.clone();
                    return Some(Ok(Some(read)));
                }
                report.instance = self.instance.last.clone();
                return Some(Ok(Some(*report)));
            }
            Event::Garbage(trouble) => {
                self.body = None;
                return Some(Err(trouble));
            }
        }
        None
    }

    /// 410 Gone: read again — at once, unless the report was read only seconds ago (a server
    /// that says so to every watch is not asked twice a second).
    fn gone(&mut self) {
        self.body = None;
        if self.read.elapsed() >= RAN_LONG_ENOUGH {
            self.next = Next::Read;
        }
    }

    /// The watch's next line; None when the server ended it, Err when it broke or sent a line
    /// longer than a report may be (the body is let go either way).
    async fn line(&mut self) -> Result<Option<bytes::Bytes>, Unread> {
        let Some(body) = self.body.as_mut() else {
            return Ok(None);
        };
        let read = self.lines.read(body).await;
        if !matches!(read, Ok(Some(_))) {
            self.body = None;
        }
        read
    }
}

/// Opens the watch of the report named `flux` from `version`, with bookmarks.
async fn open(http: &Http, version: &str) -> Result<ResponseBody, Trouble> {
    let path = format!("/apis/{OPERATOR_GROUP}/v1/fluxreports");
    let uri = watch_uri(&path, Some("metadata.name=flux"), version)?;
    Ok(api::get(http, &uri).await?.into_body())
}

/// What one line of the report's watch says.
enum Event {
    /// A bookmark: nothing changed up to this resourceVersion.
    Moved(String),
    /// The report as written now, at this resourceVersion.
    Written(String, Box<Report>),
    Deleted(String),
    /// 410 Gone: the resourceVersion is too old to watch from; read it again.
    Gone,
    Garbage(Trouble),
}

fn event(line: &[u8], now: Timestamp) -> Event {
    /// The line again, its object read as a report.
    #[derive(Deserialize)]
    struct Written<'a> {
        #[serde(borrow)]
        object: ReportDoc<'a>,
    }
    let head: WatchLine = match serde_json::from_slice(line) {
        Ok(head) => head,
        Err(e) => return Event::Garbage(Trouble::garbage(e)),
    };
    let object = head.object.0.unwrap_or_default();
    let version = object.resource_version().unwrap_or_default().to_owned();
    match head.kind.get().unwrap_or_default() {
        "ERROR" if watch_reason(object.code.0) == Some(Reason::Gone) => Event::Gone,
        "BOOKMARK" => Event::Moved(version),
        "DELETED" => Event::Deleted(version),
        "ADDED" | "MODIFIED" => {
            let report = serde_json::from_slice::<Written>(line)
                .map_err(Trouble::garbage)
                .and_then(|w| Report::of(&w.object, None, now).map_err(Trouble::garbage));
            match report {
                Ok(report) => Event::Written(version, Box::new(report)),
                Err(trouble) => Event::Garbage(trouble),
            }
        }
        other => Event::Garbage(Trouble::garbage(format!(
            "a watch event of type {other:?} for the FluxReport"
        ))),
    }
}

#[cfg(test)]
mod tests;

/// What the code of a watch's ERROR event means.
fn watch_reason(code: Option<i64>) -> Option<Reason> {
    let code = u16::try_from(code?).ok()?;
    Some(Reason::of(code, None))
}
