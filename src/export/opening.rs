//! Opening the fleet for a headless command, and telling what it could not see.

use jiff::Timestamp;

use super::Filter;
use super::outcome::{Edge, Failed, NotLive, Said};
use super::output;
use crate::fleet::{ClusterEntry, Index, Phase};
use crate::session::open::Opened;
use crate::session::resolve::Sources;
use crate::units::age;

/// The fleet the options name, every warning told to `edge`.
pub async fn open(sources: &Sources, edge: &dyn Edge) -> Result<Opened, Failed> {
    let opened = crate::session::open::open(sources).await?;
    warn(&opened, edge);
    Ok(opened)
}

fn warn(opened: &Opened, edge: &dyn Edge) {
    for w in &opened.warnings {
        edge.said(Said::Warning(w.clone()));
    }
}

/// The fleet of the bus once a collector has published one, for a command that follows it
/// (`get --watch --nats`): while the bus cannot be reached or nothing is published yet, it says
/// what it waits for (once per reason) and asks again, with a growing pause, until interrupted
/// (None, once `stop` is cancelled). Options to fix (a bad URL, a credentials file) end it, as
/// [`fleet`].
pub(super) async fn fleet_once_published(
    sources: &Sources,
    edge: &dyn Edge,
    stop: &tokio_util::sync::CancellationToken,
) -> Result<Option<Opened>, Failed> {
    let mut pause = std::time::Duration::from_millis(500);
    let mut said = String::new();
    loop {
        let opening = tokio::select! {
            opened = crate::session::open::open(sources) => opened,
            _ = stop.cancelled() => return Ok(None),
        };
        let waiting = match opening {
            Ok(opened) if !opened.fleet.is_empty() => {
                warn(&opened, edge);
                return Ok(Some(opened));
            }
            Ok(opened) => opened.fleet.empty_why(),
            Err(e) if e.retryable() || matches!(e, crate::bus::BusError::NotPublished { .. }) => {
                e.to_string()
            }
            Err(e) => return Err(e.into()),
        };
        if waiting != said {
            edge.said(Said::Waiting(waiting.clone()));
            said = waiting;
        }
        tokio::select! {
            _ = stop.cancelled() => return Ok(None),
            _ = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(std::time::Duration::from_secs(5));
    }
}

/// The fleet the options name with at least one cluster in it.
pub(crate) async fn fleet(sources: &Sources, edge: &dyn Edge) -> Result<Opened, Failed> {
    let opened = open(sources, edge).await?;
    if opened.fleet.is_empty() {
        return Err(Failed::NoClusters(opened.fleet.empty_why()));
    }
    Ok(opened)
}

/// Some cluster in the scope is not seen completely (one without Flux is: it has nothing to
/// show).
pub(super) fn incomplete(index: &Index, filter: &Filter) -> bool {
    index
        .clusters()
        .iter()
        .any(|c| filter.cluster(c) && not_seen_whole(c))
}

/// A cluster not seen as completely as it can be: not retired, not live with every kind read,
/// not summarized as asked, and neither without Flux nor in a lifecycle phase (provisioning …).
pub(crate) fn not_seen_whole(c: &ClusterEntry) -> bool {
    let phase = c.connection.phase;
    !c.retired
        && !c.connection.is_complete()
        && phase != Phase::FluxNotInstalled
        && !summarized_whole(&c.connection)
        && !phase.is_lifecycle()
}

/// Summarized as the engine was asked to, with nothing forbidden: seen, as far as a summary
/// goes.
fn summarized_whole(conn: &crate::fleet::Connection) -> bool {
    conn.phase == Phase::Summary && conn.forbidden.is_empty()
}

/// Clusters in the scope that are not live, told to `edge`: never silently missing from the
/// output.
pub(crate) fn not_live(
    index: &Index,
    filter: &Filter,
    settled: bool,
    now: Timestamp,
    edge: &dyn Edge,
) {
    let mut clusters = Vec::new();
    for c in output::sorted(index).filter(|c| filter.cluster(c)) {
        let conn = &c.connection;
        if conn.is_complete() || summarized_whole(conn) {
            continue;
        }
        let retry = conn
            .retry_at
            // Rounded up: a retry 0.4 s away is "in 1s", not "in 0s".
            .map(|t| {
                let t = t
                    .checked_add(jiff::SignedDuration::from_millis(999))
                    .unwrap_or(t);
                format!("in {}", age(Some(now), t))
            })
            .unwrap_or_else(|| "-".into());
        clusters.push(NotLive {
            workspace: c.info.workspace.clone(),
            cluster: c.info.name.clone(),
            state: conn.phase.to_string(),
            retry,
            error: conn.error.as_deref().unwrap_or("").to_string(),
        });
    }
    if !clusters.is_empty() {
        edge.said(Said::NotLive { settled, clusters });
    }
}
