//! What a cluster's task says about it: its changes, and its connection state only when that
//! changed, through the session's [`Sink`].

use std::time::Duration;

use futures::future::BoxFuture;
use jiff::Timestamp;

use crate::fleet::index::Change;
use crate::fleet::{ClusterKey, Connection, Counted};
use crate::inventory::ClusterSpec;
use crate::k8s::wire::errors::Failure;
use crate::source::{Closed, Sink};

/// Sends this cluster's events; reports the connection only when it changed.
pub(in crate::k8s) struct Reporter {
    key: ClusterKey,
    events: Sink,
    connection: Connection,
    seed: u64,
    /// Cluster API cannot reach it either: said with every connection failure.
    probe_failed: bool,
    /// Where the index counts it from, as last said.
    counted: Counted,
}

impl Reporter {
    pub(in crate::k8s) fn new(spec: &ClusterSpec, events: Sink) -> Reporter {
        Reporter {
            key: spec.key(),
            events,
            connection: Connection::default(),
            seed: seed(&spec.name),
            probe_failed: spec.discovered.as_ref().is_some_and(|d| d.probe_failed),
            counted: Counted::Objects,
        }
    }

    /// The connection state as last said.
    pub(in crate::k8s) fn state(&self) -> &Connection {
        &self.connection
    }

    pub(in crate::k8s) fn key(&self) -> &ClusterKey {
        &self.key
    }

    /// A jitter seed for this cluster's backoffs.
    pub(in crate::k8s) fn seed(&self) -> u64 {
        self.seed
    }

    /// Sends one change. Each of these returns a boxed future: a cluster's task waits in them
    /// between events, and ten thousand tasks should not each carry room for a change in flight.
    pub(in crate::k8s) fn send(&self, change: Change) -> BoxFuture<'_, Result<(), Closed>> {
        Box::pin(async move { self.events.send(&self.key, change).await })
    }

    pub(in crate::k8s) fn connection(
        &mut self,
        mut next: Connection,
    ) -> BoxFuture<'_, Result<(), Closed>> {
        next.since = if next.phase == self.connection.phase {
            self.connection.since
        } else {
            Some(Timestamp::now())
        };
        if next == self.connection {
            return Box::pin(std::future::ready(Ok(())));
        }
        self.connection = next.clone();
        self.send(Change::Connection(next))
    }

    /// Says where the cluster is counted from, when that changes.
    pub(in crate::k8s) fn counted(
        &mut self,
        counted: Counted,
    ) -> BoxFuture<'_, Result<(), Closed>> {
        if self.counted == counted {
            return Box::pin(std::future::ready(Ok(())));
        }
        self.counted = counted;
        self.send(Change::Counted(counted))
    }

    /// Counted by its report again, and whatever objects it holds let go: said even when it
    /// was counted so already, as an opening may have listed some before it ended.
    pub(in crate::k8s) fn let_go(&mut self) -> BoxFuture<'_, Result<(), Closed>> {
        self.counted = Counted::Report;
        self.send(Change::Counted(Counted::Report))
    }

    pub(in crate::k8s) fn failed(
        &mut self,
        failure: &Failure,
        retry_in: Duration,
    ) -> BoxFuture<'_, Result<(), Closed>> {
        let mut next = Connection::new(failure.phase);
        next.error = Some(if self.probe_failed {
            format!(
                "{} (Cluster API cannot reach it either: RemoteConnectionProbe is False)",
                failure.message
            )
            .into()
        } else {
            failure.message.clone().into()
        });
        next.retry_at = Some(Timestamp::now() + retry_in);
        next.protocol = self.connection.protocol;
        self.connection(next)
    }
}

/// A per-cluster jitter seed, so that 2,000 clusters failing together do not retry together.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
