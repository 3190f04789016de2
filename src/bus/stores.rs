//! The names of one fleet's stores on the bus, and the stores opened: what the bus's parent
//! module and its readers and writers all hold.

use async_nats::jetstream;

use super::error::BusError;
use super::keys;

/// The state bucket, the collectors' bucket and the history stream of one fleet.
#[derive(Clone, Debug, PartialEq)]
pub struct Names {
    pub state: String,
    pub collectors: String,
    pub history: String,
    /// Where readers ask a summarized cluster's collector to watch its objects (core NATS,
    /// request-reply: `<warm>.<cluster>`, the cluster's name as the payload).
    pub warm: String,
}

impl Names {
    pub fn of(bucket: &str) -> Result<Names, BusError> {
        let fine = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if bucket.is_empty() || !bucket.chars().all(fine) {
            return Err(BusError::BadBucket(bucket.to_string()));
        }
        Ok(Names {
            state: bucket.to_string(),
            collectors: format!("{bucket}-collectors"),
            history: format!("{bucket}-history"),
            warm: format!("{bucket}-warm"),
        })
    }

    /// The subject of a cluster's changes in the history.
    pub fn history_subject(&self, cluster: &str) -> String {
        format!("{}.{}", self.history, keys::token(cluster))
    }

    /// The subject a reader asks a cluster's collector to warm it on.
    pub fn warm_subject(&self, cluster: &str) -> String {
        format!("{}.{}", self.warm, keys::token(cluster))
    }
}

/// The state bucket, the collectors' bucket and the history stream, opened.
#[derive(Clone)]
pub struct Stores {
    pub js: jetstream::Context,
    pub names: Names,
    pub state: jetstream::kv::Store,
    pub collectors: jetstream::kv::Store,
    pub history: jetstream::stream::Stream,
}
