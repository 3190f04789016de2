//! What broke inside: the workloads behind a Kustomization or HelmRelease — Deployments,
//! StatefulSets, DaemonSets, Jobs, CronJobs — their pods, Warning events and log tails, read on
//! demand from one cluster ([`Evidence`]); a [`Verdict`] per workload; and the same verdict on
//! many clusters folded into one line ([`fold`]). Pure: the reading is `k8s`'s, the gathering
//! across clusters the session's.
//!
//! Everything here came from a cluster: untrusted text, kept bounded ([`limits`]) and shown with
//! its controls made visible ([`visible`]).

pub mod fold;
pub mod parse;
pub mod verdict;

use serde::Serialize;

pub use crate::fleet::read::ReadError;

/// How much is read and kept of one Flux object's workloads on one cluster.
pub mod limits {
    /// Workloads read per Flux object (those its health check names first).
    pub const WORKLOADS: usize = 10;
    /// Pods listed per workload (one page); the worst 20 are kept.
    pub const PODS_LISTED: usize = 200;
    pub const PODS_KEPT: usize = 20;
    /// Warning events kept per workload (its own and its pods'), newest first.
    pub const EVENTS: usize = 20;
    /// Warning events listed per namespace (one page).
    pub const EVENTS_LISTED: usize = 500;
    /// A log tail: lines asked for (`tailLines`) and bytes read at most (`limitBytes`; a
    /// server that sends more is cut there).
    pub const LOG_LINES: usize = 50;
    pub const LOG_BYTES: usize = 16 * 1024;
    /// Logs read per workload: one per distinct way its containers fail.
    pub const LOGS: usize = 2;
    /// Bytes read from one cluster for one Flux object, all requests together.
    pub const CLUSTER_BYTES: usize = 8 * 1024 * 1024;
    /// The longest message kept of an event or a status.
    pub const MESSAGE: usize = 2048;
}

/// A workload's kind, as the API names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Kind {
    Deployment,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Deployment,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::Job,
        Kind::CronJob,
    ];

    pub fn from_kind(kind: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == kind)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Deployment => "Deployment",
            Kind::StatefulSet => "StatefulSet",
            Kind::DaemonSet => "DaemonSet",
            Kind::Job => "Job",
            Kind::CronJob => "CronJob",
        }
    }

    /// `/apis/<group>/v1`.
    pub fn group(self) -> &'static str {
        match self {
            Kind::Job | Kind::CronJob => "batch",
            _ => "apps",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Kind::Deployment => "deployments",
            Kind::StatefulSet => "statefulsets",
            Kind::DaemonSet => "daemonsets",
            Kind::Job => "jobs",
            Kind::CronJob => "cronjobs",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A workload by kind, namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct WorkloadRef {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for WorkloadRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
    }
}

/// A condition as the workload's controller wrote it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkloadCondition {
    #[serde(rename = "type")]
    pub kind: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// Replica counts: desired, updated (on the newest template), ready, available.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Replicas {
    pub desired: u32,
    pub updated: u32,
    pub ready: u32,
    pub available: u32,
}

/// A container's state, as its pod's status says.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub name: String,
    pub image: String,
    pub ready: bool,
    pub restarts: u32,
    /// `state.waiting`: reason and message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<(String, String)>,
    /// `state.terminated`: reason and exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminated: Option<(String, i32)>,
    /// `lastState.terminated`: reason and exit code of the instance before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_terminated: Option<(String, i32)>,
    /// The tail of its log, when it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<Log>,
}

/// A log tail, or why it is not there.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Log {
    /// The instance before the last restart (a crash loop's).
    pub previous: bool,
    pub lines: Vec<String>,
    /// More came than [`limits::LOG_BYTES`]: the rest was not read.
    pub cut: bool,
    /// Why it could not be read (then `lines` is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unread: Option<ResourceUnread>,
    /// Read, and empty: why, as the server said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty: Option<EmptyLog>,
}

/// Why a log read holds no line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmptyLog {
    /// The server has no log to give (204 No Content: the pod is on no node yet, or its
    /// container never started).
    NoLog,
    /// The container wrote nothing (yet).
    NothingWritten,
}

impl std::fmt::Display for EmptyLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmptyLog::NoLog => {
                "empty: the server has no log for it (the pod is on no node yet, or it never started)"
            }
            EmptyLog::NothingWritten => "empty: it wrote nothing",
        })
    }
}

/// A pod, as its status says.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    pub name: String,
    pub phase: String,
    pub ready: bool,
    /// `PodScheduled=False`: its reason and the scheduler's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unschedulable: Option<(String, String)>,
    pub containers: Vec<Container>,
}

/// A Warning event about the workload or one of its pods.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WarningEvent {
    /// `Pod/<name>`, `Deployment/<name>` …
    pub object: String,
    pub reason: String,
    pub message: String,
    pub count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<jiff::Timestamp>,
}

/// What was read of one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    #[serde(flatten)]
    pub id: WorkloadRef,
    /// Not on the cluster (its inventory or message names what is gone).
    pub missing: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Replicas>,
    pub conditions: Vec<WorkloadCondition>,
    /// The worst first, at most [`limits::PODS_KEPT`].
    pub pods: Vec<Pod>,
    /// How many pods its selector matched (more than were listed when `pods_cut`).
    pub pods_total: usize,
    pub pods_cut: bool,
    /// Newest first, at most [`limits::EVENTS`].
    pub events: Vec<WarningEvent>,
    /// What could not be read about it (pods, events, a log), by resource.
    pub unread: Vec<ResourceUnread>,
}

/// Everything read of one Flux object's workloads on one cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Evidence {
    pub workloads: Vec<Workload>,
    /// More workloads than [`limits::WORKLOADS`] were found.
    pub cut: bool,
    /// The byte budget ran out: some reads were not made.
    pub over_budget: bool,
    /// Requests made.
    pub requests: u32,
    /// What could not be read at all (listing a kind, the Flux object itself).
    pub unread: Vec<ResourceUnread>,
}

/// A resource that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ResourceUnread {
    /// `pods/log`, `pods`, `deployments.apps`, `events` …
    pub resource: String,
    pub why: ReadError,
}

/// `text` with every character that changes what a terminal shows rather than being shown —
/// C0 and C1 controls but newline and tab, DEL, the bidirectional overrides — written as a
/// visible escape (`\u{1b}`). Every text of the evidence is shown through this.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests;
