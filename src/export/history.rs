//! `fluxfleet get --nats URL --since 2h`: what changed in the scope, from the collectors'
//! history, oldest first — connection changes, health transitions, new revisions, deletions.

use std::io::{self, Write};
use std::time::Duration;

use super::outcome::{Ended, Misuse, ReadFailed};
use super::query::Query;
use crate::bus::wire::RecordedChange;
use crate::glob::glob_match;
use crate::headless::Output;
use crate::headless::table::Table;
use crate::headless::writing;

/// Whether `change` is in the scope of filter `f` (a cluster's own changes have no object, and
/// pass every object filter but a kind's or a name's).
fn selected(f: &super::Filter, change: &RecordedChange) -> bool {
    f.workspace.as_ref().is_none_or(|w| *w == change.workspace)
        && (f.clusters.is_empty() || f.clusters.iter().any(|g| glob_match(g, &change.cluster)))
        && f.kind.is_none_or(|k| change.kind == Some(k))
        && f.name
            .as_deref()
            .is_none_or(|n| change.name.as_deref() == Some(n))
        && f.namespace
            .as_deref()
            .is_none_or(|n| change.namespace.as_deref().is_none_or(|ns| ns == n))
}

/// Why the history of the last `since` cannot be read.
pub(crate) enum HistoryUnread {
    /// `since` reaches before any time.
    Since(String),
    /// The bus could not be read.
    Bus(crate::bus::BusError),
}

/// From when the last `since` is, and the one cluster `filter` names (its subject is read
/// alone).
pub(crate) fn reading(
    since: Duration,
    filter: &super::Filter,
) -> Result<(jiff::Timestamp, Option<&str>), HistoryUnread> {
    let from = jiff::SignedDuration::try_from(since)
        .ok()
        .and_then(|d| jiff::Timestamp::now().checked_sub(d).ok())
        .ok_or_else(|| HistoryUnread::Since(format!("since {since:?} reaches before any time")))?;
    let one = match filter.clusters.as_slice() {
        [glob] if !glob.contains(['*', '?']) => Some(glob.as_str()),
        _ => None,
    };
    Ok((from, one))
}

/// The changes in `filter`'s scope during the last `since`, oldest first.
pub(crate) async fn changes(
    options: &crate::bus::Options,
    since: Duration,
    filter: &super::Filter,
) -> Result<Vec<RecordedChange>, HistoryUnread> {
    let mut out = Vec::new();
    each_change(options, since, filter, |c| out.push(c)).await?;
    Ok(out)
}

/// [`changes`], each handed to `each` as it is read, none kept.
pub(crate) async fn each_change(
    options: &crate::bus::Options,
    since: Duration,
    filter: &super::Filter,
    mut each: impl FnMut(RecordedChange),
) -> Result<(), HistoryUnread> {
    let (from, one) = reading(since, filter)?;
    let selected = |c: RecordedChange| {
        if selected(filter, &c) {
            each(c);
        }
    };
    crate::bus::history::each_since(options, from, one, selected)
        .await
        .map_err(HistoryUnread::Bus)
}

/// Prints the changes of the last `since`; exit code as `get`'s.
pub async fn write(
    options: &crate::bus::Options,
    since: Duration,
    request: &Query,
) -> Result<Ended, ReadFailed> {
    let changes = changes(options, since, &request.filter).await?;
    let changes: Vec<&RecordedChange> = changes.iter().collect();
    let mut out = io::BufWriter::new(io::stdout());
    let written = match request.output {
        Output::Table => {
            let mut t = Table::new(vec![
                "TIME",
                "WORKSPACE",
                "CLUSTER",
                "OBJECT",
                "CHANGE",
                "FROM",
                "TO",
                "MESSAGE",
            ]);
            for c in &changes {
                let object = c.object();
                let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
                t.row(vec![
                    c.at.to_string(),
                    c.workspace.clone(),
                    c.cluster.clone(),
                    object,
                    c.what.clone(),
                    dash(&c.from),
                    dash(&c.to),
                    dash(&c.message),
                ]);
            }
            t.write(&mut out)
        }
        Output::Json => writing::write_json(&mut out, &changes),
        Output::Ndjson => changes
            .iter()
            .try_for_each(|c| writing::write_line(&mut out, c)),
    };
    written.and_then(|()| out.flush())?;
    Ok(Ended::Done)
}

impl From<HistoryUnread> for ReadFailed {
    fn from(unread: HistoryUnread) -> ReadFailed {
        match unread {
            HistoryUnread::Since(e) => ReadFailed::Misuse(Misuse::Since(e)),
            HistoryUnread::Bus(e) => e.into(),
        }
    }
}
