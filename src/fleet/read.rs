//! Why something of a cluster could not be read — an object's events, its YAML, its workloads,
//! a kubeconfig that reaches it, the fleet's history: the variants say what the caller can do
//! (ask again later, grant RBAC, use a kubeconfig that reaches the cluster); the words are
//! made where they are shown.

use std::time::Duration;

use serde::Serialize;

/// What a cluster whose mode does not allow writes answers a program that may write.
pub const READ_ONLY_CLUSTER: &str =
    "read-only: this cluster's mode does not allow writes ([[modes]] in the config)";

/// Percent-encodes everything but the unreserved characters of RFC 3986.
pub fn query_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 2);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why something of a cluster could not be read: what the caller can do about it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, thiserror::Error)]
#[serde(tag = "reason", content = "message", rename_all = "camelCase")]
pub enum ReadError {
    /// RBAC: a role that may read it is needed.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// It is not there (deleted since, or never created).
    #[error("not found")]
    NotFound,
    /// The server said the request cannot be answered (a log of a container that never ran).
    #[error("{0}")]
    Rejected(String),
    /// No answer in time: try again. In JSON, the message is the time waited ("10s").
    #[error("no answer within {}", crate::units::format_duration(*.0))]
    #[serde(serialize_with = "waited")]
    TimedOut(Duration),
    /// The cluster is not connected now, or cannot be reached: try again later.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// Where the fleet's state comes from, no kubeconfig of the user's reaches the cluster.
    #[error("{0}")]
    NoKubeconfig(String),
    /// The server answered with something else than the API: its error.
    #[error("{0}")]
    Server(String),
    /// The cluster's share of the byte budget was spent.
    #[error("not read: the byte budget of {} KiB per cluster was spent", .0 / 1024)]
    OverBudget(usize),
    /// The cluster does not serve this Flux kind (its Flux is older, or lacks the controller).
    #[error("the cluster does not serve {0}")]
    NotServed(String),
    /// The cluster has left the fleet since it was shown.
    #[error("the cluster has left the fleet")]
    Left,
    /// No source of this session keeps the fleet's history: read it from collectors.
    #[error("the fleet's history is kept by collectors: start fluxfleet with --nats URL")]
    NoHistory,
    /// This cluster's mode does not allow writes, and what was asked is for a program that
    /// may write.
    #[error("{READ_ONLY_CLUSTER}")]
    ReadOnly,
}

/// A wait as people read it ("10s", "1m30s"), not as a struct of seconds and nanoseconds.
fn waited<S: serde::Serializer>(waited: &Duration, to: S) -> Result<S::Ok, S::Error> {
    to.serialize_str(&crate::units::format_duration(*waited))
}

impl ReadError {
    /// Worth asking again later (as opposed to fixing RBAC, a kubeconfig or the config).
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            ReadError::TimedOut(_) | ReadError::Unreachable(_) | ReadError::Server(_)
        )
    }

    /// A short word for the kind of trouble, for folded counts ("forbidden pods/log").
    pub fn word(&self) -> &'static str {
        match self {
            ReadError::Forbidden(_) => "forbidden",
            ReadError::NotFound => "not found",
            ReadError::Rejected(_) => "refused",
            ReadError::TimedOut(_) => "timed out",
            ReadError::Unreachable(_) => "unreachable",
            ReadError::NoKubeconfig(_) => "no kubeconfig reaches it",
            ReadError::Server(_) => "server error",
            ReadError::OverBudget(_) => "over the byte budget",
            ReadError::NotServed(_) => "not served",
            ReadError::Left => "left the fleet",
            ReadError::NoHistory => "no history",
            ReadError::ReadOnly => "read-only",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_in_json_says_how_long_was_waited() {
        let json = serde_json::to_value(ReadError::TimedOut(Duration::from_secs(10))).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"reason": "timedOut", "message": "10s"})
        );
        let json = serde_json::to_value(ReadError::Forbidden("pods".into())).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"reason": "forbidden", "message": "pods"})
        );
    }
}
