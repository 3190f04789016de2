//! A verdict per workload: why it does not run, with the facts that show it — the container's
//! waiting reason and what explains it (the image and the pull error; the exit code, the last
//! termination reason and the log line that tells), the scheduler's reason, a failing readiness
//! probe, a Job over its backoff limit, a rollout past its deadline — or that it is healthy.

use serde::Serialize;

use super::{Container, Log, Pod, Replicas, Workload};

/// What the scheduler found, without what it tried after: `0/3 nodes are available: 3
/// Insufficient cpu.` out of kube-scheduler's `… preemption: 0/3 nodes are available: …`, and
/// without the dynamic resource allocation's `no new claims to deallocate` it adds since
/// Kubernetes 1.34 (`…/selector. no new claims to deallocate, preemption: …`).
pub fn scheduler_words(message: &str) -> &str {
    let found = message.split("preemption:").next().unwrap_or(message);
    let found = found.trim_end();
    let found = found.trim_end_matches(',').trim_end();
    let found = found
        .strip_suffix("no new claims to deallocate")
        .unwrap_or(found);
    found.trim_end()
}

/// Why a workload does not run, from its worst pod up to its own conditions.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "camelCase")]
pub enum WorkloadCause {
    /// Every pod it wants is ready.
    Healthy,
    /// Its Flux object names it and the cluster does not have it.
    Missing,
    /// ImagePullBackOff / ErrImagePull / InvalidImageName.
    #[serde(rename_all = "camelCase")]
    ImagePull {
        reason: String,
        container: String,
        image: String,
        message: String,
    },
    /// CrashLoopBackOff, or a container that ended badly: how the last instance ended.
    #[serde(rename_all = "camelCase")]
    Crash {
        reason: String,
        container: String,
        exit_code: Option<i32>,
        terminated: Option<String>,
        restarts: u32,
    },
    /// Any other waiting reason (CreateContainerConfigError …).
    #[serde(rename_all = "camelCase")]
    Waiting {
        reason: String,
        container: String,
        message: String,
    },
    /// Pending: the scheduler's reason.
    #[serde(rename_all = "camelCase")]
    Unschedulable { reason: String, message: String },
    /// A Job that failed (BackoffLimitExceeded, DeadlineExceeded …).
    #[serde(rename_all = "camelCase")]
    JobFailed {
        reason: String,
        message: String,
        exit_code: Option<i32>,
    },
    /// Running but never ready: its readiness probe fails (from the events).
    #[serde(rename_all = "camelCase")]
    ReadinessProbe { container: String, message: String },
    /// Running, not ready, nothing said why.
    #[serde(rename_all = "camelCase")]
    NotReady { pod: String },
    /// Its controller cannot create its pods (`FailedCreate`: a quota, an admission webhook).
    #[serde(rename_all = "camelCase")]
    CreateFailed { message: String },
    /// Its rollout passed its deadline with no pod to blame.
    #[serde(rename_all = "camelCase")]
    RolloutStuck { message: String },
    /// Fewer ready than wanted, still within its deadline.
    Progressing,
}

/// A workload's verdict: the cause, its rollout, and the log tail that explains it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    #[serde(flatten)]
    pub cause: WorkloadCause,
    /// `Progressing=False` with reason ProgressDeadlineExceeded.
    pub rollout_stuck: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Replicas>,
    /// The log of the container the cause is about, when it was read (or why not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<Log>,
}

fn first_container(pods: &[Pod], test: impl Fn(&Container) -> bool) -> Option<(&Pod, &Container)> {
    pods.iter()
        .find_map(|p| p.containers.iter().find(|c| test(c)).map(|c| (p, c)))
}

fn waiting_is(c: &Container, reasons: &[&str]) -> bool {
    c.waiting
        .as_ref()
        .is_some_and(|(r, _)| reasons.contains(&r.as_str()))
}

const PULL: &[&str] = &["ImagePullBackOff", "ErrImagePull", "InvalidImageName"];

impl Verdict {
    pub fn of(w: &Workload) -> Verdict {
        let rollout_stuck = w.conditions.iter().any(|c| {
            c.kind == "Progressing" && c.status == "False" && c.reason == "ProgressDeadlineExceeded"
        });
        let (cause, log) = cause(w, rollout_stuck);
        Verdict {
            cause,
            rollout_stuck,
            replicas: w.replicas,
            log,
        }
    }

    pub fn healthy(&self) -> bool {
        self.cause == WorkloadCause::Healthy
    }

    /// The cause in one line, without counts (what folds across clusters), with the log's
    /// telling line where the cause is a crash.
    pub fn headline(&self) -> String {
        self.headline_with(self.log.as_ref())
    }

    /// The cause in one line without anything from a log: what a cluster whose log could not
    /// be read says.
    pub fn cause_line(&self) -> String {
        self.headline_with(None)
    }

    /// Whether its log was read (lines, or an empty log).
    pub fn has_log(&self) -> bool {
        self.log.as_ref().is_some_and(|l| l.unread.is_none())
    }

    fn headline_with(&self, log: Option<&Log>) -> String {
        match &self.cause {
            WorkloadCause::Healthy => "healthy".into(),
            WorkloadCause::Missing => "not on the cluster".into(),
            WorkloadCause::ImagePull {
                reason,
                image,
                message,
                ..
            } => format!("{reason}: {image}: {}", pull_trouble(message)),
            WorkloadCause::Crash {
                reason,
                exit_code,
                terminated,
                ..
            } => {
                let ended = match (terminated.as_deref(), exit_code) {
                    (Some(t), Some(code)) => format!("{t}, exit {code}"),
                    (Some(t), None) => t.to_string(),
                    (None, Some(code)) => format!("exit {code}"),
                    (None, None) => "ended".into(),
                };
                match log.and_then(telling) {
                    Some(line) => format!("{reason} ({ended}): {line}"),
                    None => format!("{reason} ({ended})"),
                }
            }
            WorkloadCause::Waiting {
                reason, message, ..
            } => format!("{reason}: {message}"),
            WorkloadCause::Unschedulable { message, .. } => {
                format!("Pending, unschedulable: {}", scheduler_words(message))
            }
            WorkloadCause::JobFailed {
                reason, message, ..
            } => match log.and_then(telling) {
                Some(line) => format!("Job failed, {reason}: {message}: {line}"),
                None => format!("Job failed, {reason}: {message}"),
            },
            WorkloadCause::ReadinessProbe { message, .. } => {
                format!("readiness probe failing: {message}")
            }
            WorkloadCause::NotReady { .. } => "running, not ready (no event says why)".into(),
            WorkloadCause::CreateFailed { message } => {
                format!("pods not created, FailedCreate: {message}")
            }
            WorkloadCause::RolloutStuck { message } if message.is_empty() => {
                "rollout stuck, ProgressDeadlineExceeded".into()
            }
            WorkloadCause::RolloutStuck { message } => {
                format!("rollout stuck, ProgressDeadlineExceeded: {message}")
            }
            WorkloadCause::Progressing => "rolling out".into(),
        }
    }

    /// Its replicas, `2/3 ready, 1 updated` (and `rollout stuck` past its deadline).
    pub fn rollout(&self) -> Option<String> {
        let r = self.replicas?;
        let mut out = format!("{}/{} ready, {} updated", r.ready, r.desired, r.updated);
        if self.rollout_stuck && !matches!(self.cause, WorkloadCause::RolloutStuck { .. }) {
            out.push_str("; rollout stuck (ProgressDeadlineExceeded)");
        }
        Some(out)
    }
}

fn cause(w: &Workload, stuck: bool) -> (WorkloadCause, Option<Log>) {
    if w.missing {
        return (WorkloadCause::Missing, None);
    }
    let pods = &w.pods;
    if let Some((_, c)) = first_container(pods, |c| waiting_is(c, &["CrashLoopBackOff"])) {
        return (crash(c, "CrashLoopBackOff"), c.log.clone());
    }
    if let Some((_, c)) = first_container(pods, |c| waiting_is(c, PULL)) {
        let (reason, message) = c.waiting.clone().unwrap_or_default();
        let message = if message.is_empty() {
            event(w, "Failed").unwrap_or_default()
        } else {
            message
        };
        return (
            WorkloadCause::ImagePull {
                reason,
                container: c.name.clone(),
                image: c.image.clone(),
                message,
            },
            None,
        );
    }
    if let Some((_, c)) = first_container(pods, |c| {
        c.waiting
            .as_ref()
            .is_some_and(|(r, _)| r != "ContainerCreating" && r != "PodInitializing")
    }) {
        let (reason, message) = c.waiting.clone().unwrap_or_default();
        return (
            WorkloadCause::Waiting {
                reason,
                container: c.name.clone(),
                message,
            },
            c.log.clone(),
        );
    }
    if let Some(pod) = pods.iter().find(|p| p.unschedulable.is_some()) {
        let (reason, message) = pod.unschedulable.clone().unwrap_or_default();
        let message = if message.is_empty() {
            event(w, "FailedScheduling").unwrap_or_default()
        } else {
            message
        };
        return (WorkloadCause::Unschedulable { reason, message }, None);
    }
    let failed_job = w
        .conditions
        .iter()
        .find(|c| c.kind == "Failed" && c.status == "True");
    let ended_badly = first_container(pods, |c| c.terminated.as_ref().is_some_and(|t| t.1 != 0));
    if let Some(condition) = failed_job {
        return (
            WorkloadCause::JobFailed {
                reason: condition.reason.clone(),
                message: condition.message.clone(),
                exit_code: ended_badly.and_then(|(_, c)| c.terminated.as_ref().map(|t| t.1)),
            },
            ended_badly.and_then(|(_, c)| c.log.clone()),
        );
    }
    if let Some((_, c)) = ended_badly {
        return (crash(c, "Terminated"), c.log.clone());
    }
    if let Some(pod) = pods.iter().find(|p| !p.ready && p.phase == "Running") {
        let container = pod
            .containers
            .iter()
            .find(|c| !c.ready)
            .map(|c| c.name.clone())
            .unwrap_or_default();
        let log = pod.containers.iter().find_map(|c| c.log.clone());
        return match event(w, "Unhealthy") {
            Some(message) => (WorkloadCause::ReadinessProbe { container, message }, log),
            None => (
                WorkloadCause::NotReady {
                    pod: pod.name.clone(),
                },
                log,
            ),
        };
    }
    if let Some(message) = event(w, "FailedCreate") {
        return (WorkloadCause::CreateFailed { message }, None);
    }
    if stuck {
        let message = w
            .conditions
            .iter()
            .find(|c| c.kind == "Progressing")
            .map(|c| c.message.clone())
            .unwrap_or_default();
        return (WorkloadCause::RolloutStuck { message }, None);
    }
    match w.replicas {
        Some(r) if r.ready < r.desired || r.updated < r.desired => {
            (WorkloadCause::Progressing, None)
        }
        _ => (WorkloadCause::Healthy, None),
    }
}

fn crash(c: &Container, reason: &str) -> WorkloadCause {
    let ended = c.last_terminated.as_ref().or(c.terminated.as_ref());
    WorkloadCause::Crash {
        reason: reason.into(),
        container: c.name.clone(),
        exit_code: ended.map(|t| t.1),
        terminated: ended.map(|t| t.0.clone()).filter(|r| !r.is_empty()),
        restarts: c.restarts,
    }
}

/// The newest Warning event's message with `reason`.
fn event(w: &Workload, reason: &str) -> Option<String> {
    w.events
        .iter()
        .find(|e| e.reason == reason)
        .map(|e| e.message.clone())
}

/// What a pull error comes to: not found, denied, the registry unreachable — else its last part.
pub fn pull_trouble(message: &str) -> String {
    let lower = message.to_ascii_lowercase();
    let said = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if said(&["manifest unknown", ": not found", "notfound"]) {
        "not found (no such tag or digest)".into()
    } else if said(&[
        "pull access denied",
        "unauthorized",
        "authorization failed",
        "403 forbidden",
        "401",
    ]) {
        "pull access denied".into()
    } else if said(&[
        "no such host",
        "i/o timeout",
        "connection refused",
        "tls handshake",
    ]) {
        "registry unreachable".into()
    } else if said(&["toomanyrequests", "rate limit"]) {
        "rate limited by the registry".into()
    } else {
        message.rsplit(": ").next().unwrap_or(message).to_string()
    }
}

/// The line of a log that tells why it ended: the last panic, fatal or error line, else the
/// last line with something on it.
pub fn telling(log: &Log) -> Option<&str> {
    let lines = || log.lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty());
    let marks = ["panic", "fatal", "error", "exception", "killed", "warn"];
    lines()
        .rev()
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            // A stack frame of a panic is not the panic.
            !lower.starts_with("goroutine")
                && !lower.starts_with('/')
                && marks.iter().any(|m| lower.contains(m))
        })
        .or_else(|| lines().next_back())
}
