//! The summary tier (`engine.watch = "summary"`): a cluster is looked at once every
//! `report_interval` over a connection of its own, closed afterwards, so that it holds no socket
//! in between. Where the Flux Operator runs, the look is one read of its FluxReport, and the
//! cluster is counted from it; elsewhere every watched kind is listed once. A cluster the user
//! opens is watched like any other until it goes cold ([`super::warm`]).

use std::sync::Arc;
use std::time::Duration;

use super::connect::{TaskShared, client, first_protocol};
use super::discovery::discover;
use super::failures::{self, Held, Listed};
use super::reporter::Reporter;
use super::watch::watched;
use crate::fleet::index::Change;
use crate::fleet::report::Report;
use crate::fleet::{Connection, Counted, FluxKind, FluxSummary, Phase};
use crate::inventory::ClusterSpec;
use crate::k8s::wire::api::{Reason, Trouble};
use crate::k8s::wire::backoff::Backoff;
use crate::k8s::wire::errors::Failure;
use crate::k8s::wire::transport::Protocol;
use crate::source::Closed;

/// What one look found.
enum Seen {
    /// The report, and what it counts not ready with what that depends on (None: they could
    /// not be listed).
    Report(Box<Report>, Option<Held>),
    /// No report (no operator, or it may not be read): every watched kind, listed, but those
    /// the credentials may not list.
    Listed {
        lists: Vec<(FluxKind, Vec<FluxSummary>)>,
        forbidden: Vec<FluxKind>,
    },
}

/// Why a look found nothing.
enum Missed {
    Failed(Failure),
    NotHttp2,
}

impl From<Failure> for Missed {
    fn from(failure: Failure) -> Missed {
        Missed::Failed(failure)
    }
}

impl From<Trouble> for Missed {
    fn from(trouble: Trouble) -> Missed {
        match trouble {
            Trouble::NotHttp2 => Missed::NotHttp2,
            other => Missed::Failed(other.into_failure()),
        }
    }
}

/// Runs a summarized cluster: a look every interval; watched while `opened` says so.
pub(in crate::k8s) async fn summarized(
    reporter: &mut Reporter,
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
    mut flag: super::warm::OpenFlag,
) -> Result<(), Closed> {
    let opened = &mut flag.open;
    reporter.counted(Counted::Report).await?;
    let mut protocol = first_protocol(spec);
    let mut backoff = Backoff::new(Duration::from_secs(1), shared.max_backoff, reporter.seed());
    // Whether the last look found a report: a cluster without one keeps its last list.
    let mut reported = false;
    loop {
        if *opened.borrow_and_update() {
            tokio::select! {
                // Boxed: only an open cluster carries a watch's state.
                ended = Box::pin(watched(reporter, spec, shared)) => return ended,
                _ = opened.wait_for(|open| !*open) => {}
            }
            // Cold again: counted by its report, its objects let go, and looked at now.
            if reported {
                reporter.let_go().await?;
            }
            continue;
        }
        let wait = match Box::pin(glance(spec, shared, protocol)).await {
            Ok(seen) => {
                backoff.reset();
                reported = tell(reporter, seen, reported, protocol).await?;
                shared.report_interval
            }
            Err(Missed::NotHttp2) => {
                protocol = Protocol::Http1;
                continue;
            }
            Err(Missed::Failed(failure)) => {
                let delay = backoff.next_delay();
                tracing::debug!(cluster = %spec.name, error = %failure.message, ?delay, "summary");
                reporter.failed(&failure, delay).await?;
                delay
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = opened.wait_for(|open| *open) => {}
        }
    }
}

/// Sends what a look found; returns whether it was a report.
async fn tell(
    reporter: &mut Reporter,
    seen: Seen,
    reported: bool,
    protocol: Protocol,
) -> Result<bool, Closed> {
    let found_report = matches!(seen, Seen::Report(..));
    let mut state = Connection::new(Phase::Summary);
    state.protocol = Some(protocol.as_str());
    match seen {
        Seen::Report(report, held) => {
            reporter.send(Change::Report(Some(report))).await?;
            reporter.counted(Counted::Report).await?;
            match held {
                Some(Held {
                    objects, forbidden, ..
                }) => {
                    reporter.send(Change::Held(objects)).await?;
                    super::watch::partly_forbidden(&mut state, forbidden.into());
                }
                // Nothing named this time: what an earlier look named is let go.
                None => reporter.let_go().await?,
            }
        }
        Seen::Listed { lists, forbidden } => {
            if reported {
                reporter.send(Change::Report(None)).await?;
            }
            for (kind, objects) in lists {
                reporter.send(Change::Replaced(kind, objects)).await?;
            }
            reporter.counted(Counted::Objects).await?;
            // As with watches: the kinds it may not list are named, the others stay visible.
            super::watch::partly_forbidden(&mut state, forbidden.into());
        }
    }
    reporter.connection(state).await?;
    Ok(found_report)
}

/// One look, within `connect_timeout` and holding a connecting slot: credentials, a connection,
/// the report (or the lists), and the connection closed again.
async fn glance(
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
    protocol: Protocol,
) -> Result<Seen, Missed> {
    let Ok(_slot) = shared.connecting.acquire().await else {
        return Err(Missed::Failed(Failure::new(
            Phase::Connecting,
            "the engine is shutting down",
        )));
    };
    match tokio::time::timeout(shared.connect_timeout, look(spec, shared, protocol)).await {
        Ok(seen) => seen,
        Err(_) => Err(Missed::Failed(Failure::new(
            Phase::TimedOut,
            format!(
                "no answer within {}",
                crate::units::format_duration(shared.connect_timeout)
            ),
        ))),
    }
}

async fn look(
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
    protocol: Protocol,
) -> Result<Seen, Missed> {
    let (http, _expires) = client(spec, shared, protocol).await?;
    let report = match super::flux_report::read(&http).await {
        Ok(Some(report)) => Some(report.counting(&shared.kinds)),
        Ok(None) => None,
        // Allowed to read Flux objects but not the operator's report: list them instead.
        Err(trouble) if trouble.reason() == Some(Reason::Forbidden) => None,
        Err(trouble) => return Err(trouble.into()),
    };
    if let Some(report) = &report
        && failures::not_ready_kinds(report, &shared.kinds).is_empty()
    {
        // Nothing to name: the cluster holds nothing.
        let held = Some(Held {
            objects: Vec::new(),
            forbidden: Vec::new(),
            counted: Vec::new(),
        });
        return Ok(Seen::Report(Box::new(report.clone()), held));
    }
    let found = discover(&http, &shared.kinds).await?;
    let http = Arc::new(http);
    if let Some(report) = report {
        // The report counts what is wrong; the cluster names it, or it is counted unnamed.
        let held = match failures::held(&http, shared, &found.served, &report).await {
            Ok(held) => Some(held),
            Err(failure) => {
                tracing::debug!(cluster = %spec.name, error = %failure.message,
                    "listing what the report counts not ready");
                None
            }
        };
        // The kinds listed are counted from their lists: exact.
        let report = match &held {
            Some(h) => report.recounted(&shared.kinds, &h.counted),
            None => report,
        };
        return Ok(Seen::Report(Box::new(report), held));
    }
    if found.served.is_empty() {
        return Err(Missed::Failed(Failure::new(
            Phase::FluxNotInstalled,
            "the server serves none of the watched Flux kinds",
        )));
    }
    let mut lists = Vec::with_capacity(found.served.len());
    let mut forbidden = Vec::new();
    let mut refusal = None;
    for (i, served) in found.served.iter().enumerate() {
        match failures::list_once(&http, shared, served, i as u64).await? {
            Listed::Objects(objects) => lists.push((served.kind, objects)),
            Listed::Forbidden(failure) => {
                forbidden.push(served.kind);
                refusal.get_or_insert(failure);
            }
        }
    }
    // Forbidden to list every kind: the cluster is forbidden, as a watched one would be.
    if lists.is_empty()
        && let Some(mut failure) = refusal
    {
        failure.phase = Phase::Forbidden;
        return Err(Missed::Failed(failure));
    }
    Ok(Seen::Listed { lists, forbidden })
}
