//! A following reader's first read: every object the bucket holds streamed into the session,
//! then what changed while they were read taken in before the clusters answer.

use std::time::Duration;

use futures::StreamExt;

use super::super::keys::{self, StateKey};
use super::super::{StreamRead, put_key};
use super::follow::{Follow, Watches};
use super::{cluster_key, read};
use crate::source::Closed;

/// Times the objects are read again when a read fails half-way (a node of the bus lost).
const READS: usize = 3;

/// How long catching up waits for a next change before it makes its watches again.
const CAUGHT_UP: Duration = Duration::from_secs(2);

/// Times catching up makes its watches again (a NATS node lost under them) before it says the
/// objects could not all be read.
const CATCH_UPS: u8 = 8;

/// Errors in a row from the watches before they are made again.
const ERRORS: u8 = 3;

impl Follow {
    /// What changed while the objects were read, taken in before the clusters answer: a value
    /// replaced during the read is skipped by it (its old message is gone, the new one comes
    /// after where the read stops), and a session that settles must have it. Watches that go
    /// quiet, fail or end before the bucket's end as it was (a node lost under them) are made
    /// again from the last revision taken; Some(why) when it could not catch up.
    pub(super) async fn catch_up(
        &mut self,
        watches: &mut Watches,
    ) -> Result<Option<crate::bus::BusError>, Closed> {
        let state = &self.stores.state.stream;
        let until = super::super::placed("catching up: where the state bucket ends", || {
            super::super::last_sequence(state, "the state bucket")
        })
        .await;
        let until = match until {
            Ok(until) => until,
            Err(e) => return Ok(Some(e)),
        };
        let (mut remade, mut errors) = (0, 0);
        while self.last < until {
            match tokio::time::timeout(CAUGHT_UP, watches.next()).await {
                Ok(Some(Ok(entry))) => {
                    errors = 0;
                    // Only the revision says where the watch is: an entry's count of what
                    // was pending is from when the server sent it, and entries buffered while
                    // the objects were read said 0 long before the end.
                    let done = entry.revision >= until;
                    self.last = self.last.max(entry.revision);
                    self.entry(entry, None).await?;
                    if done {
                        return Ok(None);
                    }
                    continue;
                }
                Ok(Some(Err(_))) if errors + 1 < ERRORS => {
                    errors += 1;
                    continue;
                }
                Ok(Some(Err(_)) | None) | Err(_) => {}
            }
            if remade >= CATCH_UPS {
                return Ok(Some(crate::bus::BusError::Unanswered {
                    what: "catching up with the state bucket".into(),
                    why: format!(
                        "no change after revision {} came (the bucket ends at {until})",
                        self.last
                    ),
                    tries: usize::from(remade),
                }));
            }
            remade += 1;
            errors = 0;
            tracing::debug!(
                from = self.last + 1,
                until,
                "catching up: the watches made again"
            );
            let (made, _) = self.watches().await;
            *watches = futures::stream::select_all(made);
        }
        Ok(None)
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
                match StreamRead::start(&self.stores.state.stream, config, "the objects").await {
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
        let Some(StateKey::Object(cluster, _)) = keys::parse(key) else {
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
