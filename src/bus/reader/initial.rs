//! A following reader's first read: every object the bucket holds streamed into the session,
//! then what changed while they were read taken in before the clusters answer.

use std::time::Duration;

use futures::StreamExt;

use super::super::keys::{self, Key};
use super::super::{Reading, put_key};
use super::follow::{Follow, Watches};
use super::{cluster_key, read};
use crate::source::Closed;

/// Times the objects are read again when a read fails half-way (a node of the bus lost).
const READS: usize = 3;

/// How long catching up waits for a next change before it takes what came as all there is.
const CAUGHT_UP: Duration = Duration::from_secs(2);

impl Follow {
    /// What changed while the objects were read, taken in before the clusters answer: a value
    /// replaced during the read is skipped by it (its old message is gone, the new one comes
    /// after where the read stops), and a session that settles must have it.
    pub(super) async fn catch_up(&mut self, watches: &mut Watches) -> Result<(), Closed> {
        let state = &self.stores.state.stream;
        let Ok(until) = super::super::last_sequence(state, "the state bucket").await else {
            return Ok(());
        };
        if until <= self.last {
            return Ok(());
        }
        loop {
            match tokio::time::timeout(CAUGHT_UP, watches.next()).await {
                Ok(Some(Ok(entry))) => {
                    let done = entry.revision >= until || entry.delta == 0;
                    self.last = self.last.max(entry.revision);
                    self.entry(entry, None).await?;
                    if done {
                        return Ok(());
                    }
                }
                Ok(Some(Err(_))) => {}
                Ok(None) | Err(_) => return Ok(()),
            }
        }
    }

    /// Every object the bucket holds, into the session as it comes, holding none of them.
    /// Some(why) when they could not all be read.
    pub(super) async fn stream_objects(&mut self) -> Result<Option<crate::bus::BusError>, Closed> {
        let prefix = format!("$KV.{}.", self.stores.state.name);
        let mut why = None;
        for _ in 0..READS {
            let config = async_nats::jetstream::consumer::pull::OrderedConfig {
                filter_subject: format!("{prefix}o.>"),
                deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::LastPerSubject,
                ..Default::default()
            };
            let mut reading =
                match Reading::start(&self.stores.state.stream, config, "the objects").await {
                    Ok(reading) => reading,
                    Err(e) => {
                        why = Some(e);
                        continue;
                    }
                };
            loop {
                match reading.next().await {
                    Ok(Some(message)) => {
                        if let Some(key) = put_key(&message, &prefix) {
                            self.object(key, &message.payload).await?;
                        }
                    }
                    Ok(None) => return Ok(None),
                    Err(e) => {
                        tracing::warn!(error = %e, "reading the objects from the bus; again");
                        why = Some(e);
                        break;
                    }
                }
            }
        }
        Ok(why)
    }

    /// One object's value, into the session; a value that cannot be read is said in the log.
    async fn object(&self, key: &str, value: &[u8]) -> Result<(), Closed> {
        let Some(Key::Object(cluster, _)) = keys::parse(key) else {
            return Ok(());
        };
        // Unknown, or shown by its collector's summary (what it holds came with it).
        if !self.known.contains_key(&cluster) || self.by_report(&cluster) {
            return Ok(());
        }
        match read(key, value) {
            Ok(Some(change)) => self.sink.send(&cluster_key(&cluster), change).await,
            Ok(None) => Ok(()),
            Err(e) => {
                tracing::warn!(key, error = %e, "a value on the bus that cannot be read");
                Ok(())
            }
        }
    }
}
