//! What a collector publishes for the clusters it owns: each cluster's state and objects into
//! the bucket (only what changed), and each change worth telling into the history stream.

use std::collections::BTreeSet;

use jiff::Timestamp;

use super::super::keys;
use super::super::wire::{self, ClusterState};
use super::outbox::{Body, Outgoing};
use super::{Collector, Published};
use crate::fleet::index::{Change, Event};
use crate::fleet::{Counted, FluxSummary, Phase};

/// How often a cluster's summary is published at most.
pub(super) const SUMMARIES_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl Collector {
    /// Publishes what one engine event changed, for a cluster this collector owns.
    pub(super) async fn publish(&mut self, event: Event) {
        let Some(name) = self.names.get(&event.cluster).cloned() else {
            return;
        };
        if !self.owned.contains_key(&name) {
            // A last word from a cluster handed over: the next owner says it.
            return;
        }
        let by_report = self
            .owned
            .get(&name)
            .is_some_and(|o| o.counted == Counted::Report);
        // A report read again changes the counts of a cluster counted by it, and only then.
        if by_report || !matches!(event.change, Change::Report(_)) {
            self.unsummed.insert(name.clone());
        }
        match event.change {
            Change::Connection(connection) => {
                let Some(spec) = self.specs.get(&name) else {
                    return;
                };
                let mut state = ClusterState::new(&spec.info(), &connection, &self.id);
                let owned = self.owned.get_mut(&name);
                let before = owned.as_ref().and_then(|o| o.state.as_ref());
                state.report = owned.as_ref().and_then(|o| o.report.clone());
                let was = before.map(|b| b.phase);
                // Restarts counted by the engine in its window: each new one counts once.
                let restarted = state
                    .restarts
                    .saturating_sub(before.map_or(0, |b| b.restarts));
                self.watch_restarts += u64::from(restarted);
                if was != Some(state.phase) {
                    if state.phase.is_failure() {
                        *self.connection_errors.entry(state.phase).or_insert(0) += 1;
                    } else if state.phase == Phase::Live && was.is_some_and(Phase::is_failure) {
                        self.watch_restarts += 1;
                    }
                }
                if before.is_none_or(|b| b.phase != state.phase) {
                    let change = wire::RecordedChange::of_connection(
                        event.at,
                        &name,
                        &state.workspace,
                        before.map(|b| b.phase),
                        state.phase,
                        state.error.clone(),
                    );
                    self.history(&name, &change).await;
                }
                self.put_cluster(&name, state, event.at).await;
            }
            Change::Report(report) => {
                let Some(owned) = self.owned.get_mut(&name) else {
                    return;
                };
                owned.report = report.map(|r| *r);
                // Said with its state; a cluster not yet said says it with its first state.
                let Some(mut state) = owned.state.clone() else {
                    return;
                };
                state.report = owned.report.clone();
                self.put_cluster(&name, state, event.at).await;
            }
            Change::Applied(summary) => self.put_object(&name, summary, event.at).await,
            Change::Deleted(key) => {
                let key = keys::object(&name, &key);
                self.delete_object(&name, &key, event.at).await;
            }
            Change::Replaced(kind, objects) => {
                let listed: BTreeSet<String> = objects
                    .iter()
                    .map(|o| keys::object(&name, &o.key))
                    .collect();
                let prefix = format!("o.{}.{}.", keys::token(&name), kind.as_str());
                let gone: Vec<String> = self
                    .owned
                    .get(&name)
                    .map(|o| {
                        o.objects
                            .keys()
                            .filter(|k| k.starts_with(&prefix) && !listed.contains(*k))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                for key in gone {
                    self.delete_object(&name, &key, event.at).await;
                }
                for summary in objects {
                    self.put_object(&name, summary, event.at).await;
                }
            }
            // Summarized: counted by its report, its objects let go (also from the bus; they
            // did not go from the cluster, so the history is not told).
            Change::Counted(Counted::Report) => {
                let Some(owned) = self.owned.get_mut(&name) else {
                    return;
                };
                owned.counted = Counted::Report;
                owned.held = None;
                owned.not_ready.clear();
                let keys: Vec<String> = owned.objects.drain().map(|(k, _)| k).collect();
                for key in keys {
                    let subject = format!("$KV.{}.{key}", self.stores.names.state);
                    self.send(subject, Body::Delete, event.at).await;
                }
            }
            Change::Counted(Counted::Objects) => {
                if let Some(owned) = self.owned.get_mut(&name) {
                    owned.counted = Counted::Objects;
                    owned.held = None;
                }
            }
            Change::Held(objects) => {
                if let Some(owned) = self.owned.get_mut(&name)
                    && owned.counted == Counted::Report
                {
                    owned.held = Some(objects);
                }
            }
            // A reader's own change: an engine never sends it.
            Change::Added(_) | Change::Retired | Change::Recounted(..) => {}
        }
    }

    async fn put_cluster(&mut self, name: &str, state: ClusterState, at: Timestamp) {
        let Ok(value) = serde_json::to_vec(&state) else {
            return;
        };
        if let Some(owned) = self.owned.get_mut(name) {
            owned.state = Some(state);
        }
        let subject = format!("$KV.{}.{}", self.stores.names.state, keys::cluster(name));
        self.send(subject, Body::Put(value.into()), at).await;
    }

    async fn put_object(&mut self, cluster: &str, summary: FluxSummary, at: Timestamp) {
        let key = keys::object(cluster, &summary.key);
        let Ok(value) = serde_json::to_vec(&summary) else {
            return;
        };
        let hash = wire::hash(&value);
        let Some(owned) = self.owned.get_mut(cluster) else {
            return;
        };
        let workspace = owned.workspace();
        if summary.health.is_not_ready() {
            owned.not_ready.insert(key.clone(), summary.clone());
        } else {
            owned.not_ready.remove(&key);
        }
        let before = owned.objects.insert(
            key.clone(),
            Published {
                hash,
                health: summary.health,
                revision: summary.revision.clone(),
            },
        );
        if before.as_ref().is_some_and(|b| b.hash == hash) {
            return;
        }
        if let Some(b) = before {
            let was = (b.health, b.revision.as_deref());
            for change in wire::RecordedChange::of_summary(at, cluster, &workspace, was, &summary) {
                self.history(cluster, &change).await;
            }
        }
        let subject = format!("$KV.{}.{key}", self.stores.names.state);
        self.send(subject, Body::Put(value.into()), at).await;
    }

    async fn delete_object(&mut self, cluster: &str, key: &str, at: Timestamp) {
        let Some(owned) = self.owned.get_mut(cluster) else {
            return;
        };
        owned.not_ready.remove(key);
        if owned.objects.remove(key).is_none() {
            return;
        }
        let workspace = owned.workspace();
        let subject = format!("$KV.{}.{key}", self.stores.names.state);
        self.send(subject, Body::Delete, at).await;
        if let Some(keys::StateKey::Object(_, object)) = keys::parse(key) {
            let change =
                wire::RecordedChange::of_object(at, cluster, workspace, "deleted", &object);
            self.history(cluster, &change).await;
        }
    }

    /// Publishes the summary of every owned cluster whose objects changed since its last, when
    /// it says something new.
    pub(super) async fn publish_summaries(&mut self) {
        let now = Timestamp::now();
        for name in std::mem::take(&mut self.unsummed) {
            let Some(owned) = self.owned.get_mut(&name) else {
                continue;
            };
            let objects = owned
                .counts()
                .iter()
                .map(|(health, n)| (health.key().to_string(), n))
                .collect();
            let mut summary = wire::Summary {
                name: name.clone(),
                collector: self.id.clone(),
                objects,
                at: None,
                counted: owned.counted,
                held: match owned.counted {
                    Counted::Report => owned.held.clone(),
                    Counted::Objects => Some(owned.not_ready.values().cloned().collect()),
                },
            };
            let Ok(mut unstamped) = serde_json::to_vec(&summary) else {
                continue;
            };
            if unstamped.len() > wire::MAX_VALUE * 3 / 4 {
                // Too many to name in one value: counted, and said unnamed.
                tracing::warn!(cluster = %name, bytes = unstamped.len(),
                    "too many not-ready objects to publish with the summary: counted only");
                summary.held = None;
                let Ok(smaller) = serde_json::to_vec(&summary) else {
                    continue;
                };
                unstamped = smaller;
            }
            let hash = wire::hash(&unstamped);
            if owned.summary == Some(hash) {
                continue;
            }
            owned.summary = Some(hash);
            summary.at = Some(now);
            let Ok(value) = serde_json::to_vec(&summary) else {
                continue;
            };
            let subject = format!("$KV.{}.{}", self.stores.names.state, keys::summary(&name));
            self.send(subject, Body::Put(value.into()), now).await;
        }
    }

    async fn history(&mut self, cluster: &str, change: &wire::RecordedChange) {
        let Ok(value) = serde_json::to_vec(change) else {
            return;
        };
        let subject = self.stores.names.history_subject(cluster);
        self.send(subject, Body::Record(value.into()), change.at)
            .await;
    }

    async fn send(&mut self, subject: String, body: Body, seen: Timestamp) {
        let outgoing = Outgoing {
            subject,
            body,
            seen,
        };
        self.outbox.send(outgoing).await;
    }
}
