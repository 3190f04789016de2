//! Reading what the bus holds: a stream's messages as they are now, whole or one by one, the
//! last value of every key of a bucket, and making the consumers that read it — again, when a
//! NATS cluster does not answer.

use std::time::Duration;

use async_nats::jetstream;

use super::{BusError, Stores, placed};

/// The stream's last sequence now: where a read of it ends, where following it begins.
pub(crate) async fn last_sequence(
    stream: &jetstream::stream::Stream,
    what: &str,
) -> Result<u64, BusError> {
    Ok(stream
        .get_info()
        .await
        .map_err(|e| BusError::jetstream(format!("reading {what}: the stream's state"), e))?
        .state
        .last_sequence)
}

/// The key a message of bucket stream `prefix` (`$KV.<bucket>.`) puts a value under; None for
/// a deletion marker, or a subject of another bucket.
pub(crate) fn put_key<'m>(message: &'m jetstream::Message, prefix: &str) -> Option<&'m str> {
    let deleted = message
        .headers
        .as_ref()
        .is_some_and(|h| h.get("KV-Operation").is_some());
    if deleted {
        return None;
    }
    message.subject.strip_prefix(prefix)
}

/// How long a read waits for a next message before it asks the bus whether any is left.
const QUIET: Duration = Duration::from_secs(2);

/// Times a read is taken up again by a new consumer, from where it stopped, before it fails: it
/// went quiet with messages left (a node of the bus lost, its consumer placed again), or its
/// consumer said none was left while the stream's leader holds more (the consumer's node behind).
const RESUMES: u8 = 8;

/// Reads what an ordered consumer of `stream` with `config` delivers now, up to the stream's last
/// message when the read began, handing each to `each`. It ends at the first message at or past
/// that one, or when none is left pending and the stream's leader holds none of its subjects
/// after the last one read up to there: a stream written to all the time (collectors
/// publishing, announcements renewed) always has more pending. The consumer is one copy on one
/// node, so neither its silence nor its count is taken on trust: when nothing comes for
/// [`QUIET`] although messages were left (a NATS node lost under it: it waits for heartbeats it
/// will never get), or it says nothing is left while the leader holds more (its node back from
/// a restart, its copy of the stream still catching up), the read is taken up again by a new
/// consumer from where it stopped; the new consumer's count says what is really left (a value
/// replaced meanwhile is not counted). Never a hang, and never less than the stream held
/// without saying so.
pub(crate) async fn read_all(
    stream: &jetstream::stream::Stream,
    config: jetstream::consumer::pull::OrderedConfig,
    what: &str,
    mut each: impl FnMut(&jetstream::Message),
) -> Result<(), BusError> {
    let mut reading = StreamRead::start(stream, config, what).await?;
    while let Some(message) = reading.next().await? {
        each(&message);
    }
    Ok(())
}

/// A read of what a stream holds now, message by message (see [`read_all`]): the caller
/// handles each as it comes, holding none of the others.
pub(crate) struct StreamRead {
    stream: jetstream::stream::Stream,
    config: jetstream::consumer::pull::OrderedConfig,
    messages: Option<jetstream::consumer::pull::Ordered>,
    /// The stream's last sequence when the read began.
    last: u64,
    /// The stream sequence of the last message read, if one was.
    at: Option<u64>,
    /// How many the consumer said were left after it.
    left: u64,
    /// Times the read was taken up again.
    resumed: u8,
    what: String,
    done: bool,
}

impl StreamRead {
    pub(crate) async fn start(
        stream: &jetstream::stream::Stream,
        config: jetstream::consumer::pull::OrderedConfig,
        what: &str,
    ) -> Result<StreamRead, BusError> {
        let last = last_sequence(stream, what).await?;
        let (messages, left) = consume(stream, &config, what).await?;
        Ok(StreamRead {
            stream: stream.clone(),
            config,
            done: false,
            messages,
            last,
            at: None,
            left,
            resumed: 0,
            what: what.to_string(),
        })
    }

    /// The next message; None once the read has reached where the stream ended when it began.
    pub(crate) async fn next(&mut self) -> Result<Option<jetstream::Message>, BusError> {
        use futures::StreamExt;
        loop {
            if self.done {
                return Ok(None);
            }
            let messages = match self.messages.as_mut() {
                Some(messages) if self.left > 0 => messages,
                _ => {
                    // The consumer says nothing is left. It is one copy on one node, and that
                    // node's copy of the stream may lag the leader's (a node just back, still
                    // catching up): the leader says whether the read is really over.
                    match self.behind().await? {
                        None => {
                            self.done = true;
                            return Ok(None);
                        }
                        Some(next) => {
                            // A pause, the longer the more often: the node catches up meanwhile.
                            let pause = Duration::from_millis(250) * u32::from(self.resumed);
                            tokio::time::sleep(pause).await;
                            let why = "the consumer's node lagged the stream's leader";
                            self.again(Some(next), why).await?;
                            continue;
                        }
                    }
                }
            };
            let message = match tokio::time::timeout(QUIET, messages.next()).await {
                Ok(Some(message)) => {
                    message.map_err(|e| BusError::jetstream(format!("reading {}", self.what), e))?
                }
                Ok(None) | Err(_) => {
                    // Nothing came although messages were left: a node of the bus lost under
                    // the consumer. Taken up again from where the read stopped.
                    let from = self.at.map(|at| at + 1);
                    self.again(from, "the read went quiet").await?;
                    continue;
                }
            };
            let (left, at) = message
                .info()
                .map(|i| (i.pending, i.stream_sequence))
                .unwrap_or((0, u64::MAX));
            self.at = Some(at);
            self.left = left;
            if at >= self.last {
                self.done = true;
            }
            return Ok(Some(message));
        }
    }

    /// The sequence of the first message of the read's subjects after where it is that the
    /// stream's leader holds, up to where the stream ended when the read began; None when
    /// there is none. Unknown for a read by time that has read nothing (None: the consumer is
    /// believed).
    async fn behind(&mut self) -> Result<Option<u64>, BusError> {
        use jetstream::consumer::DeliverPolicy;
        let from = match (self.at, &self.config.deliver_policy) {
            (Some(at), _) => at + 1,
            (None, DeliverPolicy::All | DeliverPolicy::LastPerSubject) => 1,
            (None, DeliverPolicy::ByStartSequence { start_sequence }) => *start_sequence,
            (None, _) => return Ok(None),
        };
        if from > self.last {
            return Ok(None);
        }
        let filter = match self.config.filter_subject.as_str() {
            "" => ">",
            filter => filter,
        };
        let what = format!("reading {}: where the stream's leader ends", self.what);
        let (stream, last) = (&self.stream, self.last);
        placed(&what, || async move {
            let asked = stream
                .raw_message_builder()
                .sequence(from)
                .next_by_subject(filter)
                .send()
                .await;
            match asked {
                Ok(message) => Ok(Some(message.sequence).filter(|&s| s <= last)),
                Err(e) if e.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => {
                    Ok(None)
                }
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// The read taken up again by a new consumer, from stream sequence `from` when given (else
    /// as it began), a bounded number of times; the new consumer's count says what is really
    /// left (a value replaced meanwhile is not counted).
    async fn again(&mut self, from: Option<u64>, why: &str) -> Result<(), BusError> {
        if self.resumed >= RESUMES {
            return Err(BusError::Unanswered {
                what: format!("reading {}", self.what),
                why: format!("{why}, {} times", self.resumed),
                tries: usize::from(self.resumed),
            });
        }
        self.resumed += 1;
        self.messages = None;
        let mut config = self.config.clone();
        if let Some(start_sequence) = from {
            config.deliver_policy =
                jetstream::consumer::DeliverPolicy::ByStartSequence { start_sequence };
        }
        tracing::debug!(what = %self.what, left = self.left, at = ?self.at, why, "the read taken up again");
        let (messages, left) = consume(&self.stream, &config, &self.what).await?;
        self.messages = messages;
        self.left = left;
        Ok(())
    }
}

/// A new ordered consumer of `stream` with `config`, and how many messages it has pending;
/// None for the messages when it has none.
async fn consume(
    stream: &jetstream::stream::Stream,
    config: &jetstream::consumer::pull::OrderedConfig,
    what: &str,
) -> Result<(Option<jetstream::consumer::pull::Ordered>, u64), BusError> {
    let mut consumer = placed(&format!("reading {what}: making a consumer"), || {
        stream.create_consumer(config.clone())
    })
    .await?;
    let pending = consumer
        .info()
        .await
        .map_err(|e| BusError::jetstream(format!("reading {what}: the consumer's state"), e))?
        .num_pending;
    if pending == 0 {
        return Ok((None, 0));
    }
    let messages = consumer
        .messages()
        .await
        .map_err(|e| BusError::jetstream(format!("reading {what}"), e))?;
    Ok((Some(messages), pending))
}

/// The last value of every key of the state bucket matching `filter` (deleted ones left out),
/// by key.
pub async fn last_values(
    stores: &Stores,
    filter: &str,
) -> Result<Vec<(String, bytes::Bytes)>, BusError> {
    latest(&stores.state, filter).await
}

/// The last value of every key of the state bucket matching `filter`, none missed, each given
/// to `each` as it arrives (none kept): a key whose value is replaced while the bucket is read
/// is skipped by the read (its old value is gone, its new one comes after where the read stops),
/// so the keys the bucket holds are listed first and each one the read missed is then read by
/// itself. For what a reader must know of every cluster before it starts (`c.*`, `s.*`);
/// deleted keys left out.
pub async fn every_value(
    stores: &Stores,
    filter: &str,
    each: &mut (dyn FnMut(&str, &[u8]) + Send),
) -> Result<(), BusError> {
    let listed = listed_keys(stores, filter).await?;
    let bucket = &stores.state;
    let prefix = format!("$KV.{}.", bucket.name);
    let config = jetstream::consumer::pull::OrderedConfig {
        filter_subject: format!("{prefix}{filter}"),
        deliver_policy: jetstream::consumer::DeliverPolicy::LastPerSubject,
        ..Default::default()
    };
    let mut read = std::collections::HashSet::new();
    read_all(&bucket.stream, config, filter, |message| {
        if let Some(key) = put_key(message, &prefix) {
            read.insert(key.to_string());
            each(key, &message.payload);
        }
    })
    .await?;
    let missed: Vec<String> = listed.into_iter().filter(|k| !read.contains(k)).collect();
    for (key, value) in values_of(stores, missed).await? {
        each(&key, &value);
    }
    Ok(())
}

/// The keys of the state bucket matching `filter`, as the server lists them (no values read;
/// a deleted key's marker is listed too).
pub async fn listed_keys(stores: &Stores, filter: &str) -> Result<Vec<String>, BusError> {
    use futures::TryStreamExt;
    let bucket = &stores.state;
    let prefix = format!("$KV.{}.", bucket.name);
    let mut listed = Vec::new();
    let mut subjects = bucket
        .stream
        .info_with_subjects(format!("{prefix}{filter}"))
        .await
        .map_err(|e| BusError::jetstream(format!("listing {filter}"), e))?;
    while let Some((subject, _)) = subjects
        .try_next()
        .await
        .map_err(|e| BusError::jetstream(format!("listing {filter}"), e))?
    {
        if let Some(key) = subject.strip_prefix(&prefix) {
            listed.push(key.to_string());
        }
    }
    Ok(listed)
}

/// Gets of the state bucket's keys in flight at once.
const GETS: usize = 64;

/// The values of `keys` in the state bucket, each read by itself (many at once); deleted ones
/// left out.
pub async fn values_of(
    stores: &Stores,
    keys: Vec<String>,
) -> Result<Vec<(String, bytes::Bytes)>, BusError> {
    use futures::{StreamExt, TryStreamExt};
    let bucket = &stores.state;
    futures::stream::iter(keys)
        .map(|key| async move {
            match bucket.get(&key).await {
                Ok(value) => Ok(value.map(|v| (key, v))),
                Err(e) => Err(BusError::jetstream(format!("reading {key}"), e)),
            }
        })
        .buffer_unordered(GETS)
        .try_filter_map(|found| async move { Ok(found) })
        .try_collect()
        .await
}

/// The last value of every key of a bucket matching `filter` (deleted ones left out), by key.
async fn latest(
    bucket: &jetstream::kv::Store,
    filter: &str,
) -> Result<Vec<(String, bytes::Bytes)>, BusError> {
    let prefix = format!("$KV.{}.", bucket.name);
    let mut out = Vec::new();
    let config = jetstream::consumer::pull::OrderedConfig {
        filter_subject: format!("{prefix}{filter}"),
        deliver_policy: jetstream::consumer::DeliverPolicy::LastPerSubject,
        ..Default::default()
    };
    read_all(&bucket.stream, config, filter, |message| {
        if let Some(key) = put_key(message, &prefix) {
            out.push((key.to_string(), message.payload.clone()));
        }
    })
    .await?;
    Ok(out)
}
