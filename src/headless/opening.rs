//! Opening the fleet for a headless command, and telling what it could not see.

use jiff::Timestamp;

use super::{Edge, NotLive, Said};
use crate::fleet::filter::Filter;
use crate::fleet::{ClusterEntry, Index, Phase};
use crate::session::open::Opened;
use crate::session::resolve::Sources;
use crate::units::age;

/// Why a command could not open the fleet it was asked for.
#[derive(Debug, thiserror::Error)]
pub enum OpenFailed {
    /// The config, the kubeconfigs or the bus could not be read.
    #[error("{0}")]
    Bus(#[from] crate::bus::BusError),
    /// No cluster to read: the kubeconfigs or the bus hold none (where it looked, a line each).
    #[error("{0}")]
    NoClusters(String),
}

/// The fleet the options name, every warning told to `edge`.
pub async fn open(sources: &Sources, edge: &dyn Edge) -> Result<Opened, OpenFailed> {
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
pub async fn fleet_once_published(
    sources: &Sources,
    edge: &dyn Edge,
    stop: &tokio_util::sync::CancellationToken,
) -> Result<Option<Opened>, OpenFailed> {
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
pub async fn fleet(sources: &Sources, edge: &dyn Edge) -> Result<Opened, OpenFailed> {
    let opened = open(sources, edge).await?;
    if opened.fleet.is_empty() {
        return Err(OpenFailed::NoClusters(opened.fleet.empty_why()));
    }
    Ok(opened)
}

/// Some cluster in the scope is not seen completely (one without Flux is: it has nothing to
/// show).
pub fn incomplete(index: &Index, filter: &Filter) -> bool {
    index
        .clusters()
        .iter()
        .any(|c| filter.cluster(c) && not_seen_whole(c))
}

/// A cluster not seen as completely as it can be: not retired, not live with every kind read,
/// not summarized as asked, and neither without Flux nor in a lifecycle phase (provisioning …).
pub fn not_seen_whole(c: &ClusterEntry) -> bool {
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

/// Clusters by workspace, then name; retired ones left out.
pub fn sorted(index: &Index) -> impl Iterator<Item = &ClusterEntry> {
    let mut clusters: Vec<&ClusterEntry> = index.clusters().iter().filter(|c| !c.retired).collect();
    clusters
        .sort_by(|a, b| (&a.info.workspace, &a.info.name).cmp(&(&b.info.workspace, &b.info.name)));
    clusters.into_iter()
}

/// Clusters in the scope that are not live, told to `edge`: never silently missing from the
/// output.
pub fn not_live(index: &Index, filter: &Filter, settled: bool, now: Timestamp, edge: &dyn Edge) {
    let mut clusters = Vec::new();
    for c in sorted(index).filter(|c| filter.cluster(c)) {
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
