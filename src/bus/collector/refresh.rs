//! The fleet read again while a collector runs, and the credentials of the clusters it takes:
//! a fleet given by name has each cluster's kubeconfig read from its file when the collector
//! takes it, and dropped when it hands it over.

use std::collections::BTreeMap;

use tokio::sync::mpsc;

use super::{Collector, Refresh};
use crate::bus::BusError;
use crate::inventory::{ClusterSpec, Problem};

/// Reads the fleet again every `every`, off the collector's loop, so that a slow management
/// cluster delays nothing; ends when the loop stops listening.
pub(super) async fn reread(
    refresh: Refresh,
    every: std::time::Duration,
    refreshed: mpsc::Sender<Result<Vec<ClusterSpec>, Problem>>,
) {
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tick.tick().await;
        let read = match refresh().await {
            Ok(None) => continue,
            Ok(Some(specs)) => Ok(specs),
            Err(problem) => Err(problem),
        };
        if refreshed.send(read).await.is_err() {
            return;
        }
    }
}

impl Collector {
    /// The fleet as read again: new clusters are shared out, clusters gone are let go (and
    /// deleted from the bus by whoever would own them), an owned cluster whose kubeconfig
    /// changed (a rotated Secret) is watched anew with it.
    pub(super) async fn refreshed(&mut self, specs: Vec<ClusterSpec>) -> Result<(), BusError> {
        let mut specs: BTreeMap<String, ClusterSpec> =
            specs.into_iter().map(|s| (s.name.clone(), s)).collect();
        // The owned clusters' credentials as their files say now, to compare with those watched.
        let owned: Vec<ClusterSpec> = specs
            .values()
            .filter(|s| self.owned.contains_key(&s.name) || self.waiting.contains_key(&s.name))
            .cloned()
            .collect();
        for spec in self.read_credentials(owned).await {
            specs.insert(spec.name.clone(), spec);
        }
        let same =
            |a: &ClusterSpec, b: &ClusterSpec| a.key() == b.key() && a.kubeconfig == b.kubeconfig;
        let mut restart = Vec::new();
        for (name, old) in &self.specs {
            let changed = specs.get(name).is_none_or(|new| !same(old, new));
            if changed && self.owned.contains_key(name) {
                self.engine.remove(&old.key());
                restart.push(name.clone());
            }
        }
        if restart.is_empty() && specs.keys().eq(self.specs.keys()) {
            return Ok(());
        }
        self.names = specs.values().map(|s| (s.key(), s.name.clone())).collect();
        self.specs = specs;
        let now = tokio::time::Instant::now();
        for name in restart {
            match self.specs.get(&name) {
                Some(spec) if spec.credentials_read() => self.engine.add(spec.clone()),
                // Its credentials cannot be read now: taken again once they can.
                Some(_) => {
                    self.owned.remove(&name);
                    self.waiting.insert(name, now);
                }
                None => {
                    self.owned.remove(&name);
                }
            }
        }
        self.rebalance().await
    }

    /// `wanted` with their credentials read (off the loop: files are read), each cluster whose
    /// credentials cannot be read left out and said once.
    pub(super) async fn read_credentials(&mut self, wanted: Vec<ClusterSpec>) -> Vec<ClusterSpec> {
        if wanted.iter().all(ClusterSpec::credentials_read) {
            return wanted;
        }
        let reread = self.reread.clone();
        let (read, problems) =
            match tokio::task::spawn_blocking(move || reread.credentials(wanted)).await {
                Ok(answer) => answer,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the clusters' credentials");
                    return Vec::new();
                }
            };
        for problem in problems {
            let at = (problem.source.clone(), problem.context.clone());
            if self.unreadable.insert(at) {
                tracing::warn!(problem = %problem, "a cluster's credentials cannot be read");
            }
        }
        for spec in &read {
            let file = spec.source.display().to_string();
            self.unreadable
                .remove(&(file.clone(), Some(spec.context.clone())));
            self.unreadable.remove(&(file, None));
        }
        read
    }

    /// Drops the credentials of a cluster handed over, where they can be read again from its
    /// file (a discovered cluster's come from its management cluster: kept).
    pub(super) fn forget_credentials(&mut self, name: &str) {
        if let Some(spec) = self.specs.get_mut(name)
            && spec.discovered.is_none()
            && spec.credentials_read()
        {
            *spec = spec.clone().without_credentials();
        }
    }
}
