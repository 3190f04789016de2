//! The clusters a summarizing reader holds the objects of: the ones the user opened last, at
//! most `capacity` of them. Opening one reads its objects from the bus by key prefix
//! (`o.<cluster>.>`) and follows that prefix; opening one more than the capacity lets the least
//! recently opened go back to its summary (its task stopped, its objects let go).

use std::collections::{HashMap, VecDeque};

use async_nats::jetstream::kv::Entry;
use futures::StreamExt;
use tokio::sync::mpsc;

use super::super::{Stores, StreamRead, keys, put_key};
use super::read;
use crate::fleet::index::Change;
use crate::fleet::{ClusterKey, FluxSummary};

/// What an opened cluster's task found.
pub(super) enum Found {
    /// Every object the bus holds for it, when it was opened.
    Objects(Vec<FluxSummary>),
    /// A change after.
    Entry(Entry),
    /// Its objects could not be read.
    Failed(crate::bus::BusError),
}

/// What comes next: a cluster to open, or what an opened one's task found.
pub(super) enum Next {
    Open(ClusterKey),
    Found(String, u64, Found),
}

pub(super) struct Opening {
    capacity: usize,
    opens: mpsc::Receiver<ClusterKey>,
    found_tx: mpsc::Sender<(String, u64, Found)>,
    found: mpsc::Receiver<(String, u64, Found)>,
    /// Open clusters, the most recently opened first.
    order: VecDeque<String>,
    /// Each open cluster's task, with the number of its opening.
    tasks: HashMap<String, (u64, tokio::task::JoinHandle<()>)>,
    openings: u64,
}

impl Drop for Opening {
    fn drop(&mut self) {
        for (_, task) in self.tasks.values() {
            task.abort();
        }
    }
}

impl Opening {
    pub(super) fn new(capacity: usize, opens: mpsc::Receiver<ClusterKey>) -> Opening {
        let (found_tx, found) = mpsc::channel(256);
        Opening {
            capacity: capacity.max(1),
            opens,
            found_tx,
            found,
            order: VecDeque::new(),
            tasks: HashMap::new(),
            openings: 0,
        }
    }

    pub(super) fn is_open(&self, name: &str) -> bool {
        self.tasks.contains_key(name)
    }

    /// The next thing to do; pending while there is nothing.
    pub(super) async fn next(&mut self) -> Next {
        tokio::select! {
            Some(key) = self.opens.recv() => Next::Open(key),
            Some((name, n, found)) = self.found.recv() => Next::Found(name, n, found),
        }
    }

    /// Opens `name` (again): its objects read and followed. The least recently opened beyond
    /// the capacity are let go: returned, for the caller to say so to the session.
    pub(super) fn open(&mut self, name: &str, stores: &Stores) -> Vec<String> {
        self.order.retain(|n| n != name);
        self.order.push_front(name.to_string());
        if !self.tasks.contains_key(name) {
            self.openings += 1;
            let n = self.openings;
            let found = self.found_tx.clone();
            let task = tokio::spawn(held(stores.clone(), name.to_string(), n, found));
            self.tasks.insert(name.to_string(), (n, task));
        }
        let mut cold = Vec::new();
        while self.order.len() > self.capacity {
            let Some(name) = self.order.pop_back() else {
                break;
            };
            if let Some((_, task)) = self.tasks.remove(&name) {
                task.abort();
                cold.push(name);
            }
        }
        cold
    }

    /// Lets `name` go (its task stopped); the caller says so to the session.
    pub(super) fn close(&mut self, name: &str) {
        self.order.retain(|n| n != name);
        if let Some((_, task)) = self.tasks.remove(name) {
            task.abort();
        }
    }

    /// Whether what a task found is of the opening still open (not of one let go since).
    pub(super) fn current(&self, name: &str, n: u64) -> bool {
        self.tasks.get(name).is_some_and(|(m, _)| *m == n)
    }
}

/// An opened cluster's objects: read whole from where the bucket was, then followed from
/// there, each sent back to the reader's task.
async fn held(stores: Stores, name: String, n: u64, found: mpsc::Sender<(String, u64, Found)>) {
    let send = |what: Found| found.send((name.clone(), n, what));
    let prefix = format!("$KV.{}.", stores.state.name);
    let filter = keys::objects_of(&name);
    let read = async {
        let last = super::super::last_sequence(&stores.state.stream, &filter).await?;
        let config = async_nats::jetstream::consumer::pull::OrderedConfig {
            filter_subject: format!("{prefix}{filter}"),
            deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::LastPerSubject,
            ..Default::default()
        };
        let mut objects = Vec::new();
        let mut reading = StreamRead::start(&stores.state.stream, config, &filter).await?;
        while let Some(message) = reading.next().await? {
            let Some(key) = put_key(&message, &prefix) else {
                continue;
            };
            if let Ok(Some(Change::Applied(summary))) = read(key, &message.payload) {
                objects.push(summary);
            }
        }
        Ok::<_, crate::bus::BusError>((last, objects))
    };
    let last = match read.await {
        Ok((last, objects)) => {
            if send(Found::Objects(objects)).await.is_err() {
                return;
            }
            last
        }
        Err(e) => {
            let _ = send(Found::Failed(e)).await;
            return;
        }
    };
    let watch = super::super::placed("watching an opened cluster", || {
        stores.state.watch_from_revision(&filter, last + 1)
    })
    .await;
    let mut watch = match watch {
        Ok(watch) => watch,
        Err(e) => {
            let _ = send(Found::Failed(e)).await;
            return;
        }
    };
    while let Some(entry) = watch.next().await {
        match entry {
            Ok(entry) => {
                if send(Found::Entry(entry)).await.is_err() {
                    return;
                }
            }
            // The watch recovers by itself; wait rather than spin on an error.
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
        }
    }
}
