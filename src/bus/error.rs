//! What can go wrong on the bus, by what the caller can do: fix the command line or a file
//! (`--nats`, `--bucket`, credentials), start a collector, or try again later (the server, a
//! stream, a consumer that did not answer). A value on the bus that fluxfleet did not write is
//! [`Malformed`] and skipped by whoever reads it.

use std::path::PathBuf;

/// A value read from the bus that is not what fluxfleet writes: skipped, and said.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("a value of {size} bytes, more than {max}")]
    TooLarge { size: usize, max: usize },
    #[error("not a fluxfleet value: {0}")]
    NotOurs(String),
    #[error("names another cluster")]
    OtherCluster,
    #[error("holds {0}")]
    OtherObject(String),
    #[error("not a key fluxfleet writes")]
    NotOurKey,
}

/// Why the bus could not be read or written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BusError {
    /// `--nats` names no server: fix the command line.
    #[error("--nats names no server")]
    NoServer,
    /// A server's URL does not parse: fix the command line (the URL is shown without its
    /// password).
    #[error("NATS server {url}: {why}")]
    BadUrl { url: String, why: String },
    /// `--bucket` is not a name NATS takes: fix the command line.
    #[error("bucket {0:?}: use letters, digits, - and _ only")]
    BadBucket(String),
    /// The credentials file cannot be read: fix the file.
    #[error("NATS credentials {}: {why}", .path.display())]
    Credentials { path: PathBuf, why: String },
    /// The nkey seed file cannot be read: fix the file.
    #[error("NATS nkey seed {}: {why}", .path.display())]
    Nkey { path: PathBuf, why: String },
    /// No server could be reached: try again later.
    #[error("NATS at {url}: {why}")]
    Connect { url: String, why: String },
    /// A server refused the login: fix the credentials (`--nats` user and password,
    /// `--nats-creds`, `--nats-nkey`).
    #[error("NATS at {url} refused the login: {why}")]
    Refused { url: String, why: String },
    /// The stores are not there: no collector has published to this bucket.
    #[error(
        "{what} on NATS at {url}: {why} (has a collector published to bucket {bucket:?}? \
         `fluxfleet collect --nats URL --bucket {bucket}`)"
    )]
    NotPublished {
        what: &'static str,
        url: String,
        why: String,
        bucket: String,
    },
    /// JetStream did not do what was asked (a stream or bucket made or read): try again.
    #[error("{what}: {why}")]
    JetStream { what: String, why: String },
    /// Asked a bounded number of times, never answered: try again later.
    #[error("{what}: {why} ({tries} tries)")]
    Unanswered {
        what: String,
        why: String,
        tries: usize,
    },
    /// Told to stop, it could not finish `what` within its shutdown time: abandoned.
    #[error("{what}: not done within {} (--shutdown-timeout); abandoned", crate::units::format_duration(*.within))]
    Stopping {
        what: &'static str,
        within: std::time::Duration,
    },
}

impl BusError {
    /// `why` of doing `what` on JetStream.
    pub fn jetstream(what: impl Into<String>, why: impl std::fmt::Display) -> BusError {
        BusError::JetStream {
            what: what.into(),
            why: why.to_string(),
        }
    }

    /// Worth trying again later, as opposed to fixing the command line, a file, or starting a
    /// collector.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            BusError::Connect { .. } | BusError::JetStream { .. } | BusError::Unanswered { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_to_do_is_in_the_variant_and_the_words_stay() {
        assert!(!BusError::NoServer.retryable());
        let refused = BusError::Refused {
            url: "nats://n:4222".into(),
            why: "authorization violation".into(),
        };
        assert!(!refused.retryable());
        assert_eq!(
            refused.to_string(),
            "NATS at nats://n:4222 refused the login: authorization violation"
        );
        assert!(!BusError::BadBucket("a.b".into()).retryable());
        assert!(BusError::jetstream("reading the history", "timed out").retryable());
        let missing = BusError::NotPublished {
            what: "the state bucket",
            url: "nats://n:4222".into(),
            why: "stream not found".into(),
            bucket: "fleet".into(),
        };
        assert!(!missing.retryable());
        assert_eq!(
            missing.to_string(),
            "the state bucket on NATS at nats://n:4222: stream not found (has a collector \
             published to bucket \"fleet\"? `fluxfleet collect --nats URL --bucket fleet`)"
        );
        assert_eq!(
            Malformed::TooLarge {
                size: 2 << 20,
                max: 256 << 10
            }
            .to_string(),
            format!("a value of {} bytes, more than {}", 2 << 20, 256 << 10)
        );
    }
}
