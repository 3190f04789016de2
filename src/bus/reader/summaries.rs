//! The reader's summaries: read once it starts (each cluster shown by its summary said as it
//! comes), what they hold said and let go, reports said once and then only recounted, and the
//! collectors asked to watch the opened clusters they summarize.

use std::collections::BTreeSet;

use super::super::keys::{self, StateKey};
use super::super::wire::{self, ClusterState};
use super::super::{StreamRead, put_key};
use super::follow::{ASK_AGAIN, Follow};
use super::opened::Opening;
use super::{Summed, cluster_key, read, shown, summarized_report};
use crate::fleet::Counted;
use crate::fleet::index::Change;
use crate::source::Closed;

impl Follow {
    /// Every cluster's summary, read as it arrives; a cluster shown by its summary (the reader
    /// summarizes, or its collector does) is said to the session at once, what it holds parsed
    /// then and not kept — never every cluster's at once. A summary replaced while they are
    /// read is skipped by the read, so the keys are listed first and the missed ones read by
    /// themselves. The clusters said.
    pub(super) async fn stream_summaries(&mut self) -> Result<BTreeSet<String>, Closed> {
        let mut said = BTreeSet::new();
        let listed = match super::super::listed_keys(&self.stores, "s.*").await {
            Ok(listed) => listed,
            Err(e) => {
                tracing::warn!(error = %e, "listing the summaries");
                Vec::new()
            }
        };
        let prefix = format!("$KV.{}.", self.stores.state.name);
        let config = async_nats::jetstream::consumer::pull::OrderedConfig {
            filter_subject: format!("{prefix}s.*"),
            deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::LastPerSubject,
            ..Default::default()
        };
        let mut read = std::collections::HashSet::new();
        match StreamRead::start(&self.stores.state.stream, config, "the summaries").await {
            Ok(mut reading) => loop {
                match reading.next().await {
                    Ok(Some(message)) => {
                        if let Some(key) = put_key(&message, &prefix) {
                            read.insert(key.to_string());
                            self.summary_read(key, &message.payload, &mut said).await?;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "reading the summaries; the rest one by one");
                        break;
                    }
                }
            },
            Err(e) => tracing::warn!(error = %e, "reading the summaries; one by one"),
        }
        for key in listed.into_iter().filter(|k| !read.contains(k)) {
            if let Ok(Some(value)) = self.stores.state.get(&key).await {
                self.summary_read(&key, &value, &mut said).await?;
            }
        }
        Ok(said)
    }

    /// One summary read at the start: kept, and said where the cluster is shown by it.
    pub(super) async fn summary_read(
        &mut self,
        key: &str,
        value: &[u8],
        said: &mut BTreeSet<String>,
    ) -> Result<(), Closed> {
        let Some(StateKey::Summary(name)) = keys::parse(key) else {
            return Ok(());
        };
        let summary = match Summed::read(&name, value) {
            Ok(summary) => summary,
            Err(e) => {
                tracing::warn!(key, error = %e, "a summary on the bus that cannot be read");
                return Ok(());
            }
        };
        self.summaries.insert(name.clone(), summary);
        if !self.known.contains_key(&name) {
            return Ok(());
        }
        // Nothing is open yet: shown by its summary where the reader or its collector
        // summarizes.
        if self.opening.is_some() || self.by_report(&name) {
            self.summarized_again(&name, false).await?;
            said.insert(name);
        } else if let Some(summary) = self.summaries.get_mut(&name) {
            summary.held = None;
        }
        Ok(())
    }

    /// Whether the collector of `name` summarizes it: counted by its report, none of its
    /// objects on the bus.
    pub(super) fn by_report(&self, name: &str) -> bool {
        self.summaries
            .get(name)
            .is_some_and(|s| s.counted == Counted::Report)
    }

    /// Whether the reader shows `name` by its summary: it summarizes and the cluster is not
    /// open, or its collector summarizes it.
    pub(super) fn summarized(&self, opening: Option<&Opening>, name: &str) -> bool {
        match opening {
            Some(o) => !o.is_open(name),
            None => self.by_report(name),
        }
    }

    /// Asks the collector of `name` to watch its objects, at most every [`ASK_AGAIN`]; its
    /// answer is awaited off the reader's task.
    pub(super) fn ask_to_watch(&mut self, name: &str) {
        let now = tokio::time::Instant::now();
        if self
            .asked
            .get(name)
            .is_some_and(|at| now.duration_since(*at) < ASK_AGAIN)
        {
            return;
        }
        self.asked.insert(name.to_string(), now);
        let client = self.stores.js.client();
        let subject = self.stores.names.warm_subject(name);
        let cluster = name.to_string();
        tokio::spawn(async move {
            let asked = client.request(subject, cluster.clone().into());
            match tokio::time::timeout(ASK_AGAIN, asked).await {
                Ok(Ok(_)) => tracing::debug!(%cluster, "its collector watches its objects"),
                Ok(Err(e)) => {
                    tracing::warn!(%cluster, error = %e, "asking its collector for its objects");
                }
                Err(_) => tracing::warn!(%cluster, "no collector answered for its objects"),
            }
        });
    }

    /// Reads the objects of `name` from the bus, now that its collector watches it, and counts
    /// it by them.
    pub(super) async fn read_opened(&self, name: &str) -> Result<(), Closed> {
        let values = match super::super::last_values(&self.stores, &keys::objects_of(name)).await {
            Ok(values) => values,
            Err(e) => {
                tracing::warn!(cluster = %name, error = %e, "reading a cluster's objects");
                return Ok(());
            }
        };
        let objects = values
            .iter()
            .filter_map(|(key, value)| match read(key, value) {
                Ok(Some(Change::Applied(summary))) => Some(summary),
                _ => None,
            })
            .collect();
        self.opened_with(name, objects).await
    }

    /// The summary of `name` read from the bus again: what it holds is not kept after it was
    /// said, and a cluster summarized again (an opened one let go) must say it again.
    pub(super) async fn summary_again(&mut self, name: &str) {
        match self.stores.state.get(keys::summary(name)).await {
            Ok(Some(value)) => {
                if let Ok(summary) = Summed::read(name, &value) {
                    self.summaries.insert(name.to_string(), summary);
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(cluster = %name, error = %e, "reading a summary again"),
        }
    }

    /// The state of `name` read from the bus again, with its report (which the reader does not
    /// keep once said).
    pub(super) async fn state_again(&mut self, name: &str) {
        match self.stores.state.get(keys::cluster(name)).await {
            Ok(Some(value)) => match wire::read::<ClusterState>(&value) {
                Ok(state) if state.name == name => {
                    self.known.insert(name.to_string(), super::Kept::of(state));
                }
                _ => {}
            },
            Ok(None) => {}
            Err(e) => tracing::warn!(cluster = %name, error = %e, "reading a cluster again"),
        }
    }

    /// The report of `name`'s state, taken out to be said: the session keeps it, the reader
    /// only what tells a new one from it.
    pub(super) fn take_report(&mut self, name: &str) -> Option<crate::fleet::report::Report> {
        let Some(report) = self.known.get_mut(name)?.take_report() else {
            self.reports.remove(name);
            return None;
        };
        let said = serde_json::to_vec(&report).map_or(0, |bytes| wire::hash(&bytes));
        self.reports.insert(name.to_string(), said);
        Some(report)
    }

    /// What a summarized cluster holds, as its collector last published it, taken from its
    /// summary: the reader keeps no second copy of what the session holds.
    pub(super) async fn held(&mut self, name: &str) -> Result<(), Closed> {
        match self.summaries.get_mut(name).and_then(Summed::take_held) {
            Some(held) => self.sink.send(&cluster_key(name), Change::Held(held)).await,
            None => Ok(()),
        }
    }

    /// Tells the session that `name` counts by its summary (again): its objects are let go, and
    /// what it holds said (read from the bus `again`).
    pub(super) async fn summarized_again(&mut self, name: &str, again: bool) -> Result<(), Closed> {
        if again {
            self.summary_again(name).await;
            self.state_again(name).await;
        }
        let key = cluster_key(name);
        if !self.known.contains_key(name) {
            return Ok(());
        }
        let unsaid = self.known.get(name).is_some_and(super::Kept::unsaid_report);
        let report = if unsaid { self.take_report(name) } else { None };
        let summary = self.summaries.get(name);
        // Its report said whole where the reader still has it (not yet said, or read again),
        // else only counted again.
        let change = match report {
            Some(report) => {
                Change::Report(Some(Box::new(summarized_report(Some(report), summary))))
            }
            None => {
                let counts = summary.map(|s| s.counts.clone()).unwrap_or_default();
                Change::Recounted(counts, summary.and_then(|s| s.at))
            }
        };
        self.sink.send(&key, change).await?;
        self.sink
            .send(&key, Change::Counted(Counted::Report))
            .await?;
        let Some(state) = self.known.get(name) else {
            return Ok(());
        };
        let shown = shown(state, &self.live, true, self.gone_since(state));
        self.held(name).await?;
        self.sink.send(&key, Change::Connection(shown)).await
    }
}
