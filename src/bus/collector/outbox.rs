//! What a collector sends to the bus, and sends again. A publish the bus does not acknowledge —
//! a node lost before its streams have a new leader, the whole NATS cluster stopped — is kept
//! and sent again at the next tick, so that readers catch up once the bus is back: of the state
//! bucket, the last value (or deletion) of each key, unless a later one is already on its way;
//! of the history, the records in order, at most [`BACKLOG`] of them (the oldest go first).
//! A history record carries a message id, so that one sent again whose first sending was stored
//! after all (its acknowledgement lost) is stored once.

use std::collections::{HashMap, VecDeque};

use async_nats::jetstream::{self, message::PublishMessage};
use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;

use super::status::Lag;

/// Publishes in flight before the collector waits for their acknowledgements.
const IN_FLIGHT: usize = 1024;

/// History records kept while the bus does not take them: a few minutes of a busy fleet's
/// changes; older ones are dropped first (and counted).
pub(super) const BACKLOG: usize = 20_000;

/// What is published.
#[derive(Clone)]
pub(super) enum Body {
    /// A key's value in the state bucket.
    Put(Bytes),
    /// A key deleted from the state bucket (a deletion marker, as the KV API writes it).
    Delete,
    /// A record appended to the history.
    Record(Bytes),
}

/// One message for the bus: its subject, what it says, and when the engine saw the change.
#[derive(Clone)]
pub(super) struct Outgoing {
    pub(super) subject: String,
    pub(super) body: Body,
    pub(super) seen: jiff::Timestamp,
}

/// What an outbox has done, for the metrics.
#[derive(Clone, Debug, Default)]
pub(super) struct Figures {
    pub(super) published: u64,
    pub(super) failures: u64,
    pub(super) in_flight: usize,
    pub(super) kept: usize,
    /// History records dropped past the backlog, ever.
    pub(super) dropped: u64,
    pub(super) lag: Lag,
}

impl Outgoing {
    fn of_state(&self) -> bool {
        !matches!(self.body, Body::Record(_))
    }
}

/// A publish answered: its number, what it was, and whether the bus took it.
pub(super) struct Acked {
    n: u64,
    outgoing: Outgoing,
    result: Result<(), crate::bus::BusError>,
}

/// The collector's publishing: in flight, and not taken.
pub(super) struct Outbox {
    js: jetstream::Context,
    acks: FuturesUnordered<BoxFuture<'static, Acked>>,
    /// Keys of the state bucket with a publish in flight, by subject: the number of the latest.
    in_flight: HashMap<String, u64>,
    sent: u64,
    /// The message ids' prefix: the collector and when it started, so that ids never repeat
    /// across its lives within the history's duplicate window.
    ids: String,
    /// State not taken, by subject: the last value or deletion of each key.
    state: HashMap<String, Outgoing>,
    /// History records not taken, oldest first.
    history: VecDeque<(u64, Outgoing)>,
    /// History records dropped since the last word about it.
    dropped: u64,
    figures: Figures,
}

impl Outbox {
    pub(super) fn new(js: jetstream::Context, collector: &str) -> Outbox {
        let started = jiff::Timestamp::now().as_nanosecond();
        Outbox {
            js,
            acks: FuturesUnordered::new(),
            in_flight: HashMap::new(),
            sent: 0,
            ids: format!("{collector}.{started}"),
            state: HashMap::new(),
            history: VecDeque::new(),
            dropped: 0,
            figures: Figures::default(),
        }
    }

    /// Publishes without waiting for the acknowledgement, up to [`IN_FLIGHT`] at once.
    pub(super) async fn send(&mut self, outgoing: Outgoing) {
        self.sent += 1;
        let n = self.sent;
        self.send_numbered(n, outgoing).await;
    }

    async fn send_numbered(&mut self, n: u64, outgoing: Outgoing) {
        while self.acks.len() >= IN_FLIGHT {
            match self.acks.next().await {
                Some(acked) => self.acked(acked),
                None => break,
            }
        }
        if outgoing.of_state() {
            // This value replaces whatever of the key was not taken.
            self.state.remove(&outgoing.subject);
            self.in_flight.insert(outgoing.subject.clone(), n);
        }
        let publish = match &outgoing.body {
            Body::Put(value) => PublishMessage::build().payload(value.clone()),
            Body::Delete => PublishMessage::build().header("KV-Operation", "DEL"),
            Body::Record(value) => PublishMessage::build()
                .payload(value.clone())
                .message_id(format!("{}.{n}", self.ids)),
        };
        match self
            .js
            .send_publish(outgoing.subject.clone(), publish)
            .await
        {
            Ok(ack) => self.acks.push(Box::pin(async move {
                let result = ack
                    .await
                    .map(|_| ())
                    .map_err(|e| crate::bus::BusError::jetstream("publishing", e));
                Acked {
                    n,
                    outgoing,
                    result,
                }
            })),
            Err(e) => self.acked(Acked {
                n,
                outgoing,
                result: Err(crate::bus::BusError::jetstream("publishing", e)),
            }),
        }
    }

    /// The next acknowledgement, for the collector's loop; pending forever when none is due.
    pub(super) async fn next(&mut self) -> Acked {
        match self.acks.next().await {
            Some(acked) => acked,
            None => std::future::pending().await,
        }
    }

    /// Takes an answer in: a publish the bus did not take is kept, unless a later value of the
    /// same key is on its way.
    pub(super) fn acked(&mut self, acked: Acked) {
        let Acked {
            n,
            outgoing,
            result,
        } = acked;
        let latest = outgoing.of_state() && self.in_flight.get(&outgoing.subject) == Some(&n);
        if latest {
            self.in_flight.remove(&outgoing.subject);
        }
        let Err(e) = result else {
            self.figures.published += 1;
            let late = jiff::Timestamp::now().duration_since(outgoing.seen);
            self.figures.lag.observe(late.as_secs_f64());
            return;
        };
        self.figures.failures += 1;
        tracing::debug!(error = %e, subject = %outgoing.subject, "not taken by the bus; kept");
        if outgoing.of_state() {
            if latest {
                self.state.insert(outgoing.subject.clone(), outgoing);
            }
            return;
        }
        // Kept in the order sent: a record sent again goes back where it was.
        let at = self.history.partition_point(|(m, _)| *m < n);
        self.history.insert(at, (n, outgoing));
        if self.history.len() > BACKLOG {
            self.history.pop_front();
            self.dropped += 1;
            self.figures.dropped += 1;
        }
    }

    /// How many messages the bus has not taken yet (kept to send again).
    pub(super) fn kept(&self) -> usize {
        self.state.len() + self.history.len()
    }

    /// What it has done so far.
    pub(super) fn figures(&self) -> Figures {
        Figures {
            in_flight: self.acks.len(),
            kept: self.kept(),
            ..self.figures.clone()
        }
    }

    /// Sends again what the bus did not take, when the connection is up: the state first, then
    /// the history in the order it happened (each record with its first number, so its id);
    /// at most [`IN_FLIGHT`] messages a tick.
    pub(super) async fn resend(&mut self) {
        if self.kept() == 0 && self.dropped == 0 {
            return;
        }
        let connected = matches!(
            self.js.client().connection_state(),
            async_nats::connection::State::Connected
        );
        if !connected {
            return;
        }
        tracing::info!(
            state = self.state.len(),
            history = self.history.len(),
            dropped = self.dropped,
            "sending again what the bus did not take"
        );
        self.dropped = 0;
        // At most one window of publishes a tick: a bus connected but not taking anything (a
        // stream without a leader) answers each only when its acknowledgement times out, and
        // the collector's loop must go on turning meanwhile. Each as first seen: the lag counts
        // the wait.
        let mut budget = IN_FLIGHT;
        let keys: Vec<String> = self.state.keys().take(budget).cloned().collect();
        for key in keys {
            if let Some(outgoing) = self.state.remove(&key) {
                budget -= 1;
                self.send(outgoing).await;
            }
        }
        while budget > 0 {
            let Some((n, outgoing)) = self.history.pop_front() else {
                break;
            };
            budget -= 1;
            self.send_numbered(n, outgoing).await;
        }
    }

    /// Waits for every publish in flight to be answered.
    pub(super) async fn flush(&mut self) {
        while let Some(acked) = self.acks.next().await {
            self.acked(acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An outbox on a client that never connects: only its bookkeeping is tried here.
    async fn outbox() -> Outbox {
        let client = async_nats::ConnectOptions::new()
            .retry_on_initial_connect()
            .connect("nats://127.0.0.1:1")
            .await
            .unwrap_or_else(|e| panic!("a client that retries is made at once: {e}"));
        Outbox::new(jetstream::new(client), "c1")
    }

    fn put(subject: &str, value: &'static str) -> Outgoing {
        Outgoing {
            subject: subject.into(),
            body: Body::Put(Bytes::from_static(value.as_bytes())),
            seen: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    fn record(value: &'static str) -> Outgoing {
        Outgoing {
            subject: "fleet-history.a".into(),
            body: Body::Record(Bytes::from_static(value.as_bytes())),
            seen: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    fn failed(n: u64, outgoing: Outgoing) -> Acked {
        Acked {
            n,
            outgoing,
            result: Err(crate::bus::BusError::jetstream("publishing", "timed out")),
        }
    }

    fn value(body: Option<&Body>) -> Option<&[u8]> {
        match body {
            Some(Body::Put(v) | Body::Record(v)) => Some(v),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_value_not_taken_is_kept_unless_a_later_one_is_on_its_way() {
        let mut o = outbox().await;
        o.in_flight.insert("$KV.f.k".into(), 2);
        // The first of two values fails: the second decides.
        o.acked(failed(1, put("$KV.f.k", "old")));
        assert_eq!(o.kept(), 0);
        // The second fails too: it is kept, and taken at the next try.
        o.acked(failed(2, put("$KV.f.k", "new")));
        assert_eq!(
            value(o.state.get("$KV.f.k").map(|o| &o.body)),
            Some(&b"new"[..])
        );
        assert!(o.in_flight.is_empty());
    }

    #[tokio::test]
    async fn history_not_taken_is_kept_in_order_and_bounded() {
        let mut o = outbox().await;
        o.acked(failed(3, record("c")));
        o.acked(failed(1, record("a")));
        o.acked(failed(2, record("b")));
        let order: Vec<u64> = o.history.iter().map(|(n, _)| *n).collect();
        assert_eq!(order, [1, 2, 3]);
        for n in 4..=(BACKLOG as u64 + 2) {
            o.acked(failed(n, record("x")));
        }
        assert_eq!(o.history.len(), BACKLOG);
        assert_eq!(o.dropped, 2);
        assert_eq!(o.history.front().map(|(n, _)| *n), Some(3));
    }
}
