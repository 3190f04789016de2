//! The history: what changed in the fleet since a time, read from the stream collectors write
//! (`fluxfleet get --nats URL --since 2h`).

use async_nats::jetstream;
use jiff::Timestamp;

use super::wire::{self, RecordedChange};
use super::{Options, keys};

/// Every change since `since`, oldest first; `cluster` limits it to one cluster's subject.
pub async fn since(
    options: &Options,
    since: Timestamp,
    cluster: Option<&str>,
) -> Result<Vec<RecordedChange>, super::BusError> {
    let mut out = Vec::new();
    each_since(options, since, cluster, |change| out.push(change)).await?;
    Ok(out)
}

/// [`since`], each change handed to `each` as it is read (oldest first), none kept: what
/// works a figure out over days of a fleet's history holds the figure, not the history.
pub async fn each_since(
    options: &Options,
    since: Timestamp,
    cluster: Option<&str>,
    mut each: impl FnMut(RecordedChange),
) -> Result<(), super::BusError> {
    let client = super::connect(options, "fluxfleet history").await?;
    let stores = super::open(client, options, None).await?;
    let filter = match cluster {
        Some(c) => stores.names.history_subject(c),
        None => format!("{}.>", stores.names.history),
    };
    let start_time = time::OffsetDateTime::from_unix_timestamp_nanos(since.as_nanosecond())
        .map_err(|e| super::BusError::jetstream("reading the history since --since", e))?;
    let config = jetstream::consumer::pull::OrderedConfig {
        filter_subject: filter,
        deliver_policy: jetstream::consumer::DeliverPolicy::ByStartTime { start_time },
        ..Default::default()
    };
    super::read_all(&stores.history, config, "the history", |message| {
        // A change another process wrote: kept only when it reads as one, and about the
        // cluster its subject names.
        if let Ok(change) = wire::read::<RecordedChange>(&message.payload)
            && message.subject.rsplit('.').next() == Some(keys::token(&change.cluster).as_str())
        {
            each(change);
        }
    })
    .await
}
