//! A collector's announcement: its id in the collectors' bucket, renewed every `ttl / 3` by a
//! task of its own, apart from the collector's loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_nats::jetstream;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// A collector's announcement.
#[derive(Serialize, Deserialize)]
struct Announcement {
    id: String,
    host: String,
    at: Timestamp,
    clusters: usize,
}

/// A task aborted when this is dropped.
pub(super) struct Aborting(pub(super) Option<tokio::task::JoinHandle<()>>);

impl Aborting {
    /// Aborts the task and waits until it has ended: nothing it was sending goes out after.
    pub(super) async fn stop(mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Aborting {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}

/// Renews the collector's announcement every `ttl / 3` until aborted, apart from its loop: a
/// loop busy publishing a handover or a relist must not let the announcement lapse, or the
/// others take its clusters while it still watches them.
pub(super) async fn announce(
    collectors: jetstream::kv::Store,
    id: String,
    owned: Arc<AtomicUsize>,
    ttl: std::time::Duration,
) {
    let mut tick = tokio::time::interval(ttl / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let me = Announcement {
            id: id.clone(),
            host: crate::audit::local_host(),
            at: Timestamp::now(),
            clusters: owned.load(Ordering::Relaxed),
        };
        let Ok(value) = serde_json::to_vec(&me) else {
            continue;
        };
        if let Err(e) = collectors.put(&id, value.into()).await {
            tracing::warn!(error = %e, "announcing this collector");
        }
    }
}
