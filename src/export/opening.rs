//! Opening the fleet for a headless command, and saying on stderr what it could not see.

use std::io;

use jiff::Timestamp;

use super::Filter;
use super::output;
use super::table::Table;
use crate::fleet::{ClusterEntry, Index, Phase};
use crate::session::open::Opened;
use crate::session::resolve::Sources;
use crate::units::age;

/// The fleet the options name, every warning reported on stderr; None (said why) when the bus
/// cannot be read.
pub async fn open(sources: &Sources) -> Option<Opened> {
    match crate::session::open::open(sources).await {
        Ok(opened) => {
            for w in &opened.warnings {
                eprintln!("warning: {}", super::table::safe(w));
            }
            Some(opened)
        }
        Err(e) => {
            eprintln!("error: {}", super::table::safe(&e.to_string()));
            None
        }
    }
}

/// The fleet of the bus once a collector has published one, for a command that follows it
/// (`get --watch --nats`): while the bus cannot be reached or nothing is published yet, it says
/// what it waits for (once per reason) and asks again, with a growing pause, until interrupted.
/// Options to fix (a bad URL, a credentials file) end it with the exit code, as [`fleet`].
pub(super) async fn fleet_once_published(sources: &Sources) -> Result<Opened, u8> {
    let mut pause = std::time::Duration::from_millis(500);
    let mut said = String::new();
    loop {
        let waiting = match crate::session::open::open(sources).await {
            Ok(opened) if !opened.fleet.is_empty() => {
                for w in &opened.warnings {
                    eprintln!("warning: {}", super::table::safe(w));
                }
                return Ok(opened);
            }
            Ok(opened) => opened.fleet.empty_why(),
            Err(e) if e.retryable() || matches!(e, crate::bus::BusError::NotPublished { .. }) => {
                e.to_string()
            }
            Err(e) => {
                eprintln!("error: {}", super::table::safe(&e.to_string()));
                return Err(super::request::exit::ERROR);
            }
        };
        if waiting != said {
            eprintln!("waiting: {}", super::table::safe(&waiting));
            said = waiting;
        }
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Err(super::request::exit::OK),
            _ = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(std::time::Duration::from_secs(5));
    }
}

/// The fleet the options name with at least one cluster in it; else the exit code, said why.
pub(super) async fn fleet(sources: &Sources) -> Result<Opened, u8> {
    let opened = open(sources).await.ok_or(super::request::exit::ERROR)?;
    if opened.fleet.is_empty() {
        eprintln!("error: {}", opened.fleet.empty_why());
        return Err(super::request::exit::INVENTORY);
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

/// Clusters in the scope that are not live, on stderr: never silently missing from the output.
pub(super) fn not_live(index: &Index, filter: &Filter, settled: bool, now: Timestamp) {
    let mut t = Table::new(vec!["WORKSPACE", "CLUSTER", "STATE", "RETRY", "ERROR"]);
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
        t.row(vec![
            c.info.workspace.clone(),
            c.info.name.clone(),
            conn.phase.to_string(),
            retry,
            conn.error.as_deref().unwrap_or("").to_string(),
        ]);
    }
    if !t.is_empty() {
        if !settled {
            eprintln!("\nsome clusters had not answered when the timeout passed:");
        } else {
            eprintln!("\nclusters not completely visible:");
        }
        let _ = t.write(&mut io::stderr().lock());
    }
}
