//! What is wrong with a command line beyond what clap checks itself: an enum whose variants say
//! what to change (the kind, the output format); the words are made where it is shown.

use std::time::Duration;

use crate::headless::Output;

/// A duration flag's value: `30s`, `2m`, `1h30m`.
pub fn duration(s: &str) -> Result<Duration, crate::units::DurationError> {
    crate::units::parse_duration(s)
}

/// A command line to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Usage {
    /// The one guardrail refuses the action as asked, before any cluster is asked anything (a
    /// selection naming no place without `--all`).
    #[error("{0}; nothing was sent")]
    Refused(crate::actions::Refused),
    /// The kind named is not a Flux kind.
    #[error("{:?} is not a Flux kind (try ks, hr, gitrepo, ocirepo, helmrepo, hc, bucket)", .0.0)]
    NotAKind(#[from] crate::fleet::scope::NotAKind),
    /// `trace`: a kind that cannot be traced.
    #[error("{0}")]
    Untraceable(#[from] crate::fleet::trace::resource::Untraceable),
    /// The command does not print this output format; `prints` says what it does print.
    #[error("{given:?}: {prints}")]
    Output { given: String, prints: &'static str },
    /// `get --root-causes -o ndjson`: root causes are one answer, not a stream.
    #[error("--root-causes prints a table or JSON (-o table, -o json)")]
    RootCausesStream,
    /// `--label` is not `KEY=VALUE`.
    #[error("{0:?}: give KEY=VALUE")]
    NotALabel(String),
    /// `--label`'s key is not a Prometheus label name.
    #[error("{0:?} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*, not __…)")]
    LabelName(String),
    /// `--replicas` out of what JetStream keeps.
    #[error("{0:?}: 1 to 5 (NATS keeps at most five copies of a stream)")]
    Replicas(String),
    /// `--metrics-addr` / `--health-addr` is not an address to listen on.
    #[error("{0:?}: give a port (:8080) or an address and port (127.0.0.1:8080)")]
    Address(String),
    /// `--watch-mode` names no mode.
    #[error("one of all, summary, auto")]
    WatchMode,
    /// A size flag does not read as a size.
    #[error("{0}")]
    Size(crate::units::SizeError),
    /// A size flag below what it can work with.
    #[error("{0:?}: at least 1MiB")]
    TooSmall(String),
    /// `--faults` does not read as the simulator's fault list.
    #[error("{0}")]
    Faults(String),
}

/// `given` as one of `allowed`, or what the command prints instead.
fn output(given: &str, allowed: &[Output], prints: &'static str) -> Result<Output, Usage> {
    let parsed = match given {
        "table" => Some(Output::Table),
        "json" => Some(Output::Json),
        "ndjson" => Some(Output::Ndjson),
        _ => None,
    };
    parsed
        .filter(|o| allowed.contains(o))
        .ok_or_else(|| Usage::Output {
            given: given.to_string(),
            prints,
        })
}

pub(super) fn rollout_output(s: &str) -> Result<Output, Usage> {
    output(
        s,
        &[Output::Table, Output::Json],
        "rollout prints table or json",
    )
}

pub(super) fn proposals_output(s: &str) -> Result<Output, Usage> {
    output(
        s,
        &[Output::Table, Output::Json, Output::Ndjson],
        "proposals prints table, json or ndjson",
    )
}

pub(super) fn workloads_output(s: &str) -> Result<Output, Usage> {
    output(
        s,
        &[Output::Table, Output::Json],
        "workloads prints table or json",
    )
}

pub(super) fn trace_output(s: &str) -> Result<Output, Usage> {
    output(
        s,
        &[Output::Table, Output::Json],
        "trace and tree print table or json",
    )
}

pub(super) fn act_output(s: &str) -> Result<Output, Usage> {
    output(
        s,
        &[Output::Table, Output::Ndjson],
        "the actions print table or ndjson",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_takes_its_own_formats_and_says_which() {
        assert_eq!(rollout_output("json"), Ok(Output::Json));
        assert_eq!(act_output("ndjson"), Ok(Output::Ndjson));
        assert_eq!(
            workloads_output("ndjson").map_err(|e| e.to_string()),
            Err("\"ndjson\": workloads prints table or json".to_string())
        );
        assert!(matches!(act_output("json"), Err(Usage::Output { .. })));
    }
}
