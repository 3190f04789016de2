//! The watching half of a cluster task: one list-then-watch per served kind (`kind_watch.rs`) on
//! the cluster's one connection, and the cluster's connection state derived from where each
//! kind's watch stands.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;

use super::connect::{Attempt, Connected, TaskShared, attempt, exec_of, first_protocol};
use super::kind_watch::Step;
use super::reporter::Reporter;
use super::restarts::Restarts;
use crate::fleet::index::Change;
use crate::fleet::report::Report;
use crate::fleet::{Connection, Counted, FluxKind, Lists, Phase};
use crate::inventory::ClusterSpec;
use crate::k8s::wire::api::{Reason, Trouble};
use crate::k8s::wire::backoff::Backoff;
use crate::k8s::wire::errors::Failure;
use crate::k8s::wire::transport::Protocol;
use crate::source::Closed;
use kinds::kind_watches;

/// Why watching stopped.
pub(in crate::k8s) enum Stopped {
    /// Reconnect from scratch (new credentials, new discovery) after backing off.
    Reconnect(Failure),
    /// The credentials are about to expire: reconnect now with fresh ones, no backoff.
    Renew,
    /// Every kind listed and nothing to watch (`engine.list_only`): the connection is let go.
    Listed,
    Closed,
}

/// Connects and watches every served kind, reconnecting after failures with backoff, for as
/// long as it is polled.
pub(in crate::k8s) async fn watched(
    reporter: &mut Reporter,
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
) -> Result<(), Closed> {
    let mut protocol = first_protocol(spec);
    let mut backoff = Backoff::new(Duration::from_secs(1), shared.max_backoff, reporter.seed());
    loop {
        {
            // Scoped: a value moved away still takes room in the future until its scope ends.
            let mut connecting = Connection::new(Phase::Connecting);
            connecting.error = reporter.state().error.clone();
            reporter.connection(connecting).await?;
        }
        let Ok(permit) = shared.connecting.acquire().await else {
            return Err(Closed);
        };
        // Boxed: a watching task should not carry the room connecting took.
        let (failure, asked) = match Box::pin(attempt(spec, shared, protocol)).await {
            Attempt::NotHttp2 => {
                protocol = Protocol::Http1;
                continue;
            }
            Attempt::NoFlux => {
                // Never hold a connecting slot while waiting: others go ahead meanwhile.
                drop(permit);
                let failure = Failure::new(
                    Phase::FluxNotInstalled,
                    "the server serves none of the watched Flux kinds",
                );
                reporter.failed(&failure, shared.max_backoff).await?;
                tokio::time::sleep(shared.max_backoff).await;
                continue;
            }
            Attempt::Failed(failure) => {
                drop(permit);
                (failure, None)
            }
            Attempt::Throttled(failure, after) => {
                drop(permit);
                (failure, Some(after))
            }
            Attempt::Connected(connected) => {
                // The slot stays taken until the first lists are in: bounded concurrency there
                // bounds the memory the initial lists need at once.
                // Boxed, the connection's parts: an async function keeps its arguments' room
                // beside its own for as long as it runs.
                match watch(reporter, Box::new(connected), shared, &mut backoff, permit).await {
                    Stopped::Closed => return Err(Closed),
                    // The cluster stays as its lists left it; its connection, TLS state and
                    // buffers are freed for the clusters still listing.
                    Stopped::Listed => return std::future::pending().await,
                    Stopped::Renew => continue,
                    Stopped::Reconnect(failure) => {
                        if failure.phase == Phase::Unauthorized
                            && let Some(exec) = exec_of(spec)
                        {
                            shared.exec.invalidate(&exec);
                        }
                        (failure, None)
                    }
                }
            }
        };
        // A server that said when to ask again is asked then.
        let delay = match asked {
            Some(after) => backoff.asked(after),
            None => backoff.next_delay(),
        };
        tracing::debug!(cluster = %spec.name, phase = %failure.phase, error = %failure.message, ?delay, "backing off");
        reporter.failed(&failure, delay).await?;
        tokio::time::sleep(delay).await;
    }
}

/// Where one kind's watch stands. Boxed where it says why: seven a cluster, kept for as long as
/// it watches, nearly always listing or live.
#[derive(Clone, Debug, PartialEq)]
enum KindState {
    Listing,
    Live,
    Forbidden(Box<str>),
    Failed(Box<(Failure, Timestamp)>),
}

/// Watches until the connection must be rebuilt. `permit` (a connecting slot) is released once
/// every kind has been listed, or after the connect timeout.
pub(in crate::k8s) async fn watch(
    reporter: &mut Reporter,
    connected: Box<Connected>,
    shared: &TaskShared,
    backoff: &mut Backoff,
    permit: tokio::sync::SemaphorePermit<'_>,
) -> Stopped {
    let mut permit = Some(permit);
    let release_by = tokio::time::Instant::now() + shared.connect_timeout;
    let Connected {
        http,
        served,
        operator,
        protocol,
        expires,
    } = *connected;
    // Where the Flux Operator runs, its report is read now, then watched.
    // One service stack (~650 bytes) for the watches, the report and one-off reads alike: each
    // clones it per request.
    let http = Arc::new(http);
    let mut reports = match (operator, shared.list_only) {
        (false, _) => futures::stream::pending().boxed(),
        // A one-shot read reads the report once and watches nothing.
        (true, true) => {
            let http = http.clone();
            futures::stream::once(async move { super::flux_report::read(&http).await })
                .chain(futures::stream::pending())
                .map(boxed_report)
                .boxed()
        }
        (true, false) => super::flux_report::watched(http.clone(), shared.report_interval)
            .map(boxed_report)
            .boxed(),
    };
    let mut reported = false;
    // The first picture of the cluster includes its report: syncing until it has been read.
    let mut report_pending = operator;
    let mut states: Vec<(FluxKind, KindState)> = served
        .iter()
        .map(|s| (s.kind, KindState::Listing))
        .collect();
    let seed = reporter.seed();
    // One-off reads (events, YAML) may use the connection while the watches run.
    let _registration =
        shared
            .clients
            .register(reporter.key().clone(), http.clone(), served.clone());
    let mut merged = kind_watches(http, &served, shared, seed);
    let watching = served.clone();
    // Watches broken and resumed at once: counted for five minutes, the count said with the
    // connection and said again as each restart leaves the window.
    let mut restarts = Restarts::default();
    // How the kinds were listed: the last of their ways (`Lists` is ordered).
    let mut lists: Option<Lists> = None;
    let report = |states: &[(FluxKind, KindState)],
                  report_pending: bool,
                  restarts: u16,
                  lists: Option<Lists>| {
        let mut c = derive(states);
        c.lists = lists;
        if report_pending && c.phase == Phase::Live {
            c.phase = Phase::Syncing;
        }
        c.watching = watching.clone();
        c.protocol = Some(protocol);
        c.restarts = restarts;
        c
    };
    if reporter
        .connection(report(&states, report_pending, 0, lists))
        .await
        .is_err()
    {
        return Stopped::Closed;
    }
    // The timers are made once and boxed: a timer is large (cache-line aligned), and a
    // cluster's task waits here for as long as it watches.
    let mut renew = renewal(expires);
    let mut release = Box::pin(tokio::time::sleep_until(release_by));
    // When the oldest restart leaves the window, while one is counted.
    let mut dropping: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        match (restarts.next_drop(), &mut dropping) {
            (None, _) => dropping = None,
            (Some(at), Some(sleep)) if sleep.deadline() == at => {}
            (Some(at), Some(sleep)) => sleep.as_mut().reset(at),
            (Some(at), None) => dropping = Some(Box::pin(tokio::time::sleep_until(at))),
        }
        let next = tokio::select! {
            item = merged.next() => match item {
                Some(item) => Some(item),
                None => return Stopped::Reconnect(Failure::new(Phase::Unreachable, "every watch ended")),
            },
            _ = &mut release, if permit.is_some() => {
                // Listing is slow here: let other clusters go ahead.
                permit = None;
                continue;
            }
            _ = &mut renew => return Stopped::Renew,
            // The oldest restart leaves the window: the count is said again, smaller.
            () = std::future::poll_fn(|cx| match dropping.as_mut() {
                Some(sleep) => sleep.as_mut().poll(cx),
                None => std::task::Poll::Pending,
            }), if dropping.is_some() => None,
            Some(read) = reports.next(), if operator => {
                // Boxed: passing a report on takes ~1 KB of state, which a cluster's task
                // would otherwise carry for as long as it watches.
                if Box::pin(on_report(reporter, read, &mut reported)).await.is_err() {
                    return Stopped::Closed;
                }
                if !report_pending {
                    continue;
                }
                report_pending = false;
                None
            }
        };
        // None: the report was read for the first time, or a restart left the window, and the
        // connection may change with it.
        if let Some((_, Step::Restarted)) = next {
            restarts.record(tokio::time::Instant::now());
        } else if let Some((kind, step)) = next {
            let listed = match &step {
                Step::Listed(_, how) => lists.max(Some(*how)),
                _ => lists,
            };
            // Boxed: passing a step on holds the change and the channel's send, which the task
            // would otherwise carry between steps.
            let state = match Box::pin(on_step(reporter, kind, step)).await {
                Ok(state) => state,
                Err(ended) => return ended,
            };
            let told = listed != lists;
            lists = listed;
            // Most events leave every kind where it was: nothing to report.
            let Some(slot) = states.iter_mut().find(|(k, _)| *k == kind) else {
                continue;
            };
            match state {
                Some(state) if slot.1 != state => slot.1 = state,
                _ if told => {}
                _ => continue,
            }
        }
        let connection = report(
            &states,
            report_pending,
            restarts.count(tokio::time::Instant::now()),
            lists,
        );
        let live = connection.phase == Phase::Live;
        if connection.phase != Phase::Syncing {
            permit = None;
        }
        if connection.phase == Phase::Live {
            backoff.healthy();
        }
        if reporter.connection(connection).await.is_err() {
            return Stopped::Closed;
        }
        // A summarized cluster opened: counted by its objects once they are all listed.
        if live && reporter.counted(Counted::Objects).await.is_err() {
            return Stopped::Closed;
        }
        if live && shared.list_only {
            return Stopped::Listed;
        }
    }
}

/// Fires a minute before the exec credential runs out (at least a second from now), or never.
fn renewal(expires: Option<Timestamp>) -> futures::future::BoxFuture<'static, ()> {
    match expires {
        Some(t) => {
            let left = t.duration_since(Timestamp::now()).as_secs_f64() - 60.0;
            let at = tokio::time::Instant::now() + Duration::from_secs_f64(left.max(1.0));
            Box::pin(tokio::time::sleep_until(at))
        }
        None => Box::pin(std::future::pending()),
    }
}

/// A read of the report, boxed as soon as it is read: a cluster's task holds what its watches and
/// its report bring between polls, and a report is ~250 bytes.
fn boxed_report(read: Result<Option<Report>, Trouble>) -> Result<Option<Box<Report>>, Trouble> {
    read.map(|found| found.map(Box::new))
}

/// Passes a read of the Flux Operator's report on: a report found, or its going away once one
/// was found. A report that cannot be read leaves the last one standing, ageing.
async fn on_report(
    reporter: &Reporter,
    read: Result<Option<Box<Report>>, Trouble>,
    reported: &mut bool,
) -> Result<(), Closed> {
    match read {
        Ok(found) if found.is_some() || *reported => {
            *reported = found.is_some();
            reporter.send(Change::Report(found)).await
        }
        Ok(_) => Ok(()),
        Err(trouble) => {
            let failure = trouble.into_failure();
            tracing::debug!(cluster = %reporter.key(), error = %failure.message, "reading the FluxReport");
            Ok(())
        }
    }
}

/// Passes one step of a kind's watch on to the index; the kind's new state when the step
/// changes it, or how watching ends.
async fn on_step(
    reporter: &Reporter,
    kind: FluxKind,
    step: Step,
) -> Result<Option<KindState>, Stopped> {
    let change = match step {
        // Streamed, the kind's watch is open already: it is live.
        Step::Listed(summaries, Lists::Streaming) => {
            let change = Change::Replaced(kind, summaries);
            return match reporter.send(change).await {
                Ok(()) => Ok(Some(KindState::Live)),
                Err(_) => Err(Stopped::Closed),
            };
        }
        Step::Listed(summaries, _) => Change::Replaced(kind, summaries),
        Step::Watching => return Ok(Some(KindState::Live)),
        // Resumed at once: the kind stays where it was (the caller counts the restart).
        Step::Restarted => return Ok(None),
        Step::Applied(summary) => Change::Applied(*summary),
        Step::Deleted(key) => Change::Deleted(key),
        Step::Failed {
            reason,
            failure,
            retry_at,
        } => {
            return match reason {
                Some(Reason::Unauthorized) => Err(Stopped::Reconnect(failure)),
                // The kind is gone from the server (Flux uninstalled or downgraded).
                Some(Reason::NotFound) => Err(Stopped::Reconnect(Failure::new(
                    Phase::ServerError,
                    format!("{kind} is no longer served; discovering again"),
                ))),
                Some(Reason::Forbidden) => Ok(Some(KindState::Forbidden(failure.message.into()))),
                _ => Ok(Some(KindState::Failed(Box::new((failure, retry_at))))),
            };
        }
    };
    match reporter.send(change).await {
        Ok(()) => Ok(None),
        Err(_) => Err(Stopped::Closed),
    }
}

/// The cluster's connection from the state of each kind's watch.
fn derive(states: &[(FluxKind, KindState)]) -> Connection {
    let forbidden: Box<[FluxKind]> = states
        .iter()
        .filter(|(_, s)| matches!(s, KindState::Forbidden(_)))
        .map(|(k, _)| *k)
        .collect();
    let failed = states.iter().filter_map(|(k, s)| match s {
        KindState::Failed(failed) => Some((k, &failed.0, &failed.1)),
        _ => None,
    });
    let worst = failed.min_by_key(|(_, f, _)| f.phase);
    let mut connection = if let Some((_, failure, at)) = worst {
        let mut c = Connection::new(failure.phase);
        c.error = Some(failure.message.as_str().into());
        c.retry_at = Some(*at);
        c
    } else if !states.is_empty() && forbidden.len() == states.len() {
        let mut c = Connection::new(Phase::Forbidden);
        c.error = states.iter().find_map(|(_, s)| match s {
            KindState::Forbidden(m) => Some(m.clone()),
            _ => None,
        });
        c
    } else if states.iter().any(|(_, s)| *s == KindState::Listing) {
        Connection::new(Phase::Syncing)
    } else {
        Connection::new(Phase::Live)
    };
    if connection.phase != Phase::Forbidden {
        partly_forbidden(&mut connection, forbidden);
    } else {
        connection.forbidden = forbidden;
    }
    connection
}

/// Names the kinds the credentials may not list on a connection whose other kinds are visible
/// (watched or listed); an error already there stays first.
pub(in crate::k8s) fn partly_forbidden(connection: &mut Connection, forbidden: Box<[FluxKind]>) {
    if !forbidden.is_empty() {
        let names: Vec<&str> = forbidden.iter().map(|k| k.as_str()).collect();
        connection.error.get_or_insert_with(|| {
            format!(
                "forbidden to list {}; the other kinds are visible",
                names.join(", ")
            )
            .into()
        });
    }
    connection.forbidden = forbidden;
}

mod kinds;
#[cfg(test)]
mod tests;
