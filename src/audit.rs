//! The audit journal: every action attempt as two JSON lines in `audit.jsonl` in the platform
//! data directory (`FLUXFLEET_DATA_DIR` overrides), owner-only: the intent, written before
//! anything is sent (nothing is sent when it cannot be written), and the outcomes once every
//! target has ended. Who, what, why, where, and how each target ended — never a token or any
//! other credential (the kube user is the kubeconfig's name for it, not its contents). An intent
//! without outcomes is an attempt that was interrupted (or is still running).

use std::io::Write;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Serialize;

use crate::fleet::verbs::{Outcome, Verb};

/// One attempt on one object.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub workspace: String,
    pub cluster: String,
    pub context: String,
    /// The kubeconfig's name for the user (`users[].name`), never its credentials.
    pub kube_user: String,
    /// Who the cluster authenticated the request as (its `SelfSubjectReview`, as `kubectl auth
    /// whoami` shows it), where the cluster says; otherwise `kubeUser` is all that is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_as: Option<String>,
    /// When the controller was seen to have handled the reconcile (its watch showed
    /// `status.lastHandledReconcileAt` equal to the token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handled_at: Option<Timestamp>,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub message: String,
    /// The Event the action left on the object: `recorded`, or why not (`not recorded:
    /// forbidden: …`); absent when none was to be recorded (not done, or `[actions] events =
    /// false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// What the controller's reconcile came to, read from the status that says it handled the
    /// request (controllers write both in one patch, at the end of the reconcile): as `flux
    /// reconcile` reads it after waiting. Absent where the request was not seen handled, or was
    /// seen by another (the TUI's rows show it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<HandledState>,
}

/// An object's state when its controller handled a reconcile request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HandledState {
    /// Its health then: `ready`, `failed`, `stalled`, `progressing`, …
    pub status: crate::fleet::Health,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl HandledState {
    /// What `object` says now.
    pub fn of(object: &crate::fleet::FluxSummary) -> HandledState {
        HandledState {
            status: object.health,
            reason: object.reason.as_deref().map(str::to_string),
            message: object.message.as_deref().map(str::to_string),
        }
    }

    /// Handled, and not ready: `flux reconcile` fails such a reconcile.
    pub fn not_ready(&self) -> bool {
        self.status.is_not_ready()
    }
}

impl Record {
    /// `key` on `cluster`; the outcome is not known yet.
    pub fn new(cluster: &crate::fleet::ClusterInfo, key: &crate::fleet::ObjectKey) -> Record {
        Record {
            kind: key.kind.to_string(),
            namespace: key.namespace.to_string(),
            name: key.name.to_string(),
            ..Record::cluster(cluster)
        }
    }

    /// A whole cluster, for a program handed the cluster (a plugin): no object named.
    pub fn cluster(cluster: &crate::fleet::ClusterInfo) -> Record {
        Record {
            workspace: cluster.workspace.clone(),
            cluster: cluster.name.clone(),
            context: cluster.context.clone(),
            kube_user: cluster.user.clone(),
            seen_as: None,
            handled_at: None,
            kind: String::new(),
            namespace: String::new(),
            name: String::new(),
            outcome: "",
            message: String::new(),
            event: None,
            result: None,
        }
    }

    /// When the controller handled it, when that was seen.
    pub fn handled(mut self, at: Option<Timestamp>) -> Record {
        self.handled_at = at;
        self
    }

    /// What the reconcile came to, where it was seen.
    pub fn result(mut self, verdict: Option<HandledState>) -> Record {
        self.result = verdict;
        self
    }

    /// What became of the action's Event on the object, when one was to be recorded.
    pub fn event(
        mut self,
        recorded: Option<&Result<(), crate::fleet::notice::NotRecorded>>,
    ) -> Record {
        self.event = recorded.map(|r| match r {
            Ok(()) => "recorded".to_string(),
            Err(why) => format!("not recorded: {why}"),
        });
        self
    }

    /// The identity the cluster saw, when it said.
    pub fn seen_as(mut self, identity: Option<&str>) -> Record {
        self.seen_as = identity.map(str::to_string);
        self
    }

    pub fn with(mut self, outcome: &Outcome) -> Record {
        self.outcome = outcome.name();
        self.message = outcome.message().to_string();
        self
    }
}

/// Which of an attempt's two lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttemptStage {
    /// Before anything is sent: the targets and what they will get.
    Intent,
    /// Once every target has ended.
    Outcome,
}

/// One line of the journal.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalLine<'a> {
    pub time: Timestamp,
    pub stage: AttemptStage,
    pub user: &'a str,
    /// The machine fluxfleet ran on.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub host: &'a str,
    /// What the user acted through, when not fluxfleet's own commands: `mcp:<client>` for an
    /// assistant's client through `fluxfleet mcp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// Acted through a tool without a person approving (`fluxfleet mcp --write`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub automation: bool,
    pub action: Verb,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
    /// The token written as `reconcile.fluxcd.io/requestedAt`.
    pub token: &'a str,
    /// When the attempt carries out a proposal: who proposed it and who approved it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<&'a Proposed>,
    pub targets: &'a [Record],
}

/// The proposal an attempt carries out, as the journal names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposed {
    pub id: String,
    /// What proposed it: `mcp:<client>`.
    pub proposed_by: String,
    /// Whom that assistant works for.
    pub proposer: String,
    /// The person who approved it.
    pub approved_by: String,
}

/// One line of the journal about a plugin that may write, run on a cluster: its intent before
/// the program starts (it does not start when this cannot be written), its outcome once it
/// exits. `action` is always `plugin`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff<'a> {
    pub time: Timestamp,
    pub stage: AttemptStage,
    pub user: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub host: &'a str,
    pub action: &'static str,
    pub plugin: &'a str,
    /// The program and its arguments as run (the kubeconfig is a path; no credentials).
    pub command: &'a [String],
    /// Pairs the two lines of one run.
    pub token: &'a str,
    pub targets: &'a [Record],
}

/// Appends any serializable journal line (see [`append`]).
pub fn append_line(path: &Path, entry: &impl Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(entry)?;
    line.push(b'\n');
    let mut file = crate::private::append(path)?;
    // One write: concurrent fluxfleet processes never interleave inside a line.
    file.write_all(&line)
}

/// Where the journal is.
pub fn default_path() -> Option<PathBuf> {
    crate::places::journal()
}

/// Appends `entry` as one line; creates the file (mode 0600) and its directory (0700).
pub fn append(path: &Path, entry: &JournalLine<'_>) -> std::io::Result<()> {
    append_line(path, entry)
}

/// The journal's lines as attempts, newest first: each attempt's outcomes line, and its intent
/// line only when no outcomes line came for it (an attempt interrupted, or still running).
/// Lines that are not JSON are kept as they are.
pub fn attempts(newest_first: Vec<String>) -> Vec<String> {
    let parsed: Vec<Option<serde_json::Value>> = newest_first
        .iter()
        .map(|l| serde_json::from_str(l).ok())
        .collect();
    let token = |v: &serde_json::Value| v.get("token").and_then(|t| t.as_str()).map(str::to_owned);
    let is_intent =
        |v: &serde_json::Value| v.get("stage").and_then(|s| s.as_str()) == Some("intent");
    let ended: std::collections::HashSet<String> = parsed
        .iter()
        .flatten()
        .filter(|v| !is_intent(v))
        .filter_map(token)
        .collect();
    newest_first
        .into_iter()
        .zip(parsed)
        .filter(|(_, v)| {
            v.as_ref()
                .is_none_or(|v| !is_intent(v) || token(v).is_none_or(|t| !ended.contains(&t)))
        })
        .map(|(line, _)| line)
        .collect()
}

/// The local user, as the journal and the suspended-by annotation name them: the operating
/// system's name for the account running fluxfleet (`$USER` is unset under cron, in containers
/// and CI, and says whatever a script sets). Only when the system has no name for it: `$USER`,
/// else the numeric uid — never "unknown".
pub fn local_user() -> String {
    whoami::username()
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            ["USER", "LOGNAME"]
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        })
        .unwrap_or_else(|| format!("uid {}", rustix::process::getuid().as_raw()))
}

/// The machine's name, as the journal records it (empty when the system has none).
pub fn local_host() -> String {
    whoami::hostname().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn lines_are_appended_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/audit.jsonl");
        let target = Record {
            workspace: "w".into(),
            cluster: "c".into(),
            context: "c".into(),
            kube_user: "admin".into(),
            seen_as: None,
            handled_at: None,
            kind: "Kustomization".into(),
            namespace: "flux-system".into(),
            name: "apps".into(),
            outcome: "",
            message: String::new(),
            event: None,
            result: None,
        }
        .with(&Outcome::Forbidden("no".into()));
        for _ in 0..2 {
            let entry = JournalLine {
                time: Timestamp::UNIX_EPOCH,
                stage: AttemptStage::Outcome,
                user: "alice",
                host: "laptop",
                tool: None,
                automation: false,
                action: Verb::Suspend,
                reason: Some("flapping"),
                token: "t",
                proposal: None,
                targets: std::slice::from_ref(&target),
            };
            append(&path, &entry).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["action"], "suspend");
        assert_eq!(lines[0]["targets"][0]["outcome"], "forbidden");
        assert_eq!(lines[0]["targets"][0]["kubeUser"], "admin");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn an_attempt_shows_its_outcomes_and_its_intent_only_when_they_never_came() {
        let line = |stage: &str, token: &str| format!(r#"{{"stage":"{stage}","token":"{token}"}}"#);
        let journal = vec![
            line("intent", "t3"),
            line("outcome", "t2"),
            "not json".to_string(),
            line("intent", "t2"),
            line("outcome", "t1"),
            line("intent", "t1"),
        ];
        assert_eq!(
            attempts(journal),
            [
                line("intent", "t3"),
                line("outcome", "t2"),
                "not json".to_string(),
                line("outcome", "t1"),
            ]
        );
    }
}
