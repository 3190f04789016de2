//! Exec credential plugins (`aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin` …), run by
//! fluxfleet itself instead of by kube: never interactive (no stdin, stderr captured, so nothing
//! reaches the screen), a few at a time, with a deadline, and once per distinct command — 300
//! clusters behind the same `aws eks get-token` invocation share one run.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use jiff::Timestamp;
use kube::config::{AuthInfo, ExecConfig};
use secrecy::SecretString;
use serde::Deserialize;
use tokio::sync::{OnceCell, Semaphore};

/// What a plugin gave: a token or a client certificate, maybe with an expiry.
#[derive(Clone)]
pub struct Credential {
    token: Option<SecretString>,
    certificate: Option<String>,
    key: Option<SecretString>,
    pub expires: Option<Timestamp>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token or key themselves.
        f.debug_struct("Credential")
            .field("token", &self.token.is_some())
            .field("certificate", &self.certificate.is_some())
            .field("expires", &self.expires)
            .finish()
    }
}

impl Credential {
    /// Puts the credential into `auth` in place of the exec section.
    pub fn apply(&self, auth: &mut AuthInfo) {
        auth.exec = None;
        if let Some(token) = &self.token {
            auth.token = Some(token.clone());
            auth.token_file = None;
        }
        if let (Some(cert), Some(key)) = (&self.certificate, &self.key) {
            use secrecy::ExposeSecret;
            let b64 = base64::engine::general_purpose::STANDARD;
            auth.client_certificate_data = Some(b64.encode(cert));
            auth.client_key_data = Some(b64.encode(key.expose_secret()).into());
            auth.client_certificate = None;
            auth.client_key = None;
        }
    }
}

#[derive(Deserialize)]
struct ExecCredential {
    status: Option<Status>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
    expiration_timestamp: Option<String>,
}

/// Why an exec plugin gave no credential: the kubeconfig or the plugin to fix, or (timed out)
/// to try again. The words name the command, never what it printed that could be a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("exec credential cache is unavailable")]
    CacheUnavailable,
    #[error("the exec section names no command")]
    NoCommand,
    #[error("exec plugins are shutting down")]
    ShuttingDown,
    /// Not installed, or not executable: the hint is the kubeconfig's `installHint`.
    #[error("exec plugin {command:?} cannot start: {why}{hint}")]
    CannotStart {
        command: String,
        why: String,
        hint: String,
    },
    #[error("exec plugin {0:?}: no output pipes")]
    NoPipes(String),
    /// It ran too long and was killed: try again.
    #[error("exec plugin {command:?} gave no credential within {} (killed)", crate::units::format_duration(*.within))]
    TimedOut { command: String, within: Duration },
    #[error("exec plugin {command:?} failed: {why}")]
    Wait { command: String, why: String },
    /// It exited non-zero; `said` is its last line of stderr, credentials left out.
    #[error("exec plugin {command:?} failed ({status}){}", .said.as_deref().map(|l| format!(": {l}")).unwrap_or_default())]
    Failed {
        command: String,
        status: String,
        said: Option<String>,
    },
    /// It exited zero with output that is no credential.
    #[error("exec plugin {command:?}: {why}")]
    Output { command: String, why: OutputError },
}

/// What is wrong with an exec plugin's output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error("reading its output: {0}")]
    Read(String),
    #[error("its output is larger than {} KiB", OUTPUT_LIMIT / 1024)]
    TooLarge,
    #[error("output is not an ExecCredential: {0}")]
    NotCredential(String),
    #[error("output has no status")]
    NoStatus,
    #[error("invalid expirationTimestamp {at:?}: {why}")]
    BadExpiry { at: String, why: String },
    #[error("output has neither a token nor a client certificate and key")]
    Empty,
}

type Outcome = Result<Credential, ExecError>;

/// One cached run: shared while in flight, reused while valid.
struct Slot {
    cell: Arc<OnceCell<(Outcome, std::time::Instant)>>,
}

/// Runs plugins for every cluster of the fleet.
pub struct Runner {
    permits: Semaphore,
    timeout: Duration,
    slots: Mutex<HashMap<String, Slot>>,
}

/// A failed run is reused this long, so a broken plugin is not started once per cluster.
const FAILURE_TTL: Duration = Duration::from_secs(10);
/// Renew a credential this long before it expires.
const EXPIRY_MARGIN: jiff::SignedDuration = jiff::SignedDuration::from_secs(60);

impl Runner {
    pub fn new(concurrency: usize, timeout: Duration) -> Runner {
        Runner {
            permits: Semaphore::new(concurrency.max(1)),
            timeout,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The credential for `exec`, from a run in flight or still valid, or from a new run.
    pub async fn credential(&self, exec: &ExecConfig) -> Outcome {
        let key = key_of(exec);
        let cell = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let reusable = slots.get(&key).is_some_and(|slot| match slot.cell.get() {
                None => true,
                Some((Ok(c), _)) => c
                    .expires
                    .is_none_or(|t| t > Timestamp::now() + EXPIRY_MARGIN),
                Some((Err(_), at)) => at.elapsed() < FAILURE_TTL,
            });
            if !reusable {
                slots.insert(
                    key.clone(),
                    Slot {
                        cell: Arc::new(OnceCell::new()),
                    },
                );
            }
            slots.get(&key).map(|s| s.cell.clone())
        };
        let Some(cell) = cell else {
            return Err(ExecError::CacheUnavailable);
        };
        let (outcome, _) = cell
            .get_or_init(|| async { (self.run(exec).await, std::time::Instant::now()) })
            .await;
        outcome.clone()
    }

    /// Forgets the cached credential (after a 401: it was revoked or rotated).
    pub fn invalidate(&self, exec: &ExecConfig) {
        let key = key_of(exec);
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if slots.get(&key).is_some_and(|s| s.cell.initialized()) {
            slots.remove(&key);
        }
    }

    async fn run(&self, exec: &ExecConfig) -> Outcome {
        let command = exec.command.as_deref().ok_or(ExecError::NoCommand)?;
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| ExecError::ShuttingDown)?;
        let api_version = exec
            .api_version
            .clone()
            .unwrap_or_else(|| "client.authentication.k8s.io/v1".into());
        let mut spec = serde_json::json!({"interactive": false});
        if exec.provide_cluster_info
            && let Some(cluster) = &exec.cluster
        {
            spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
        }
        let info =
            serde_json::json!({"apiVersion": api_version, "kind": "ExecCredential", "spec": spec});
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(exec.args.iter().flatten())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            // Its own process group: on a timeout everything it started is killed with it.
            .process_group(0)
            .env("KUBERNETES_EXEC_INFO", info.to_string());
        for name in exec.drop_env.iter().flatten() {
            cmd.env_remove(name);
        }
        for pair in exec.env.iter().flatten() {
            if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
                cmd.env(name, value);
            }
        }
        let mut child = cmd.spawn().map_err(|e| ExecError::CannotStart {
            command: command.to_string(),
            why: e.to_string(),
            hint: exec
                .install_hint
                .as_deref()
                .map(|h| format!(" ({})", h.trim()))
                .unwrap_or_default(),
        })?;
        let group = Group(child.id());
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(ExecError::NoPipes(command.to_string()));
        };
        let run = async {
            let (out, err) = tokio::join!(capped(stdout), capped(stderr));
            let status = child.wait().await;
            (out, err, status)
        };
        let Ok((stdout, stderr, status)) = tokio::time::timeout(self.timeout, run).await else {
            drop(group);
            return Err(ExecError::TimedOut {
                command: command.to_string(),
                within: self.timeout,
            });
        };
        // It has exited: its process group is left to whatever it started on purpose.
        group.disarm();
        let status = status.map_err(|e| ExecError::Wait {
            command: command.to_string(),
            why: e.to_string(),
        })?;
        let output = |why| ExecError::Output {
            command: command.to_string(),
            why,
        };
        let stdout = stdout.map_err(output)?;
        if !status.success() {
            // Its last words, without anything that looks like a credential: plugins print
            // refresh tokens and device codes to stderr.
            let stderr = stderr.unwrap_or_default();
            let stderr = String::from_utf8_lossy(&stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            return Err(ExecError::Failed {
                command: command.to_string(),
                status: status.to_string(),
                said: last.map(without_secrets),
            });
        }
        parse(&stdout).map_err(output)
    }
}

/// The most of a plugin's stdout or stderr read: an ExecCredential is a few KiB.
const OUTPUT_LIMIT: usize = 1024 * 1024;

/// Reads a pipe to its end, at most [`OUTPUT_LIMIT`] bytes; more is an error.
async fn capped(pipe: impl tokio::io::AsyncRead + Unpin) -> Result<Vec<u8>, OutputError> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut limited = pipe.take(OUTPUT_LIMIT as u64 + 1);
    limited
        .read_to_end(&mut buf)
        .await
        .map_err(|e| OutputError::Read(e.to_string()))?;
    if buf.len() > OUTPUT_LIMIT {
        return Err(OutputError::TooLarge);
    }
    Ok(buf)
}

/// A running plugin's process group, killed when dropped.
struct Group(Option<u32>);

impl Group {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let pid = self
            .0
            .and_then(|p| i32::try_from(p).ok())
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid {
            // The group may already be gone; nothing else to do then.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// A line of a plugin's stderr fit to show: at most 200 characters, and every word that could
/// be a credential (a run of 16 or more token characters, quoted text) replaced by `…`.
fn without_secrets(line: &str) -> String {
    let line = crate::errors::redacted(line);
    let token = |c: char| c.is_ascii_alphanumeric() || "+/=_-.~%".contains(c);
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.chars().count() >= 16 {
            out.push('…');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in line.chars() {
        if token(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    let mut shown: String = out.trim().chars().take(200).collect();
    if out.trim().chars().count() > 200 {
        shown.push('…');
    }
    shown
}

fn parse(stdout: &[u8]) -> Result<Credential, OutputError> {
    let cred: ExecCredential =
        serde_json::from_slice(stdout).map_err(|e| OutputError::NotCredential(e.to_string()))?;
    let status = cred.status.ok_or(OutputError::NoStatus)?;
    let expires = match status.expiration_timestamp {
        Some(t) => Some(t.parse::<Timestamp>().map_err(|e| OutputError::BadExpiry {
            why: e.to_string(),
            at: t.clone(),
        })?),
        None => None,
    };
    let credential = Credential {
        token: status
            .token
            .filter(|t| !t.is_empty())
            .map(SecretString::from),
        certificate: status.client_certificate_data,
        key: status.client_key_data.map(SecretString::from),
        expires,
    };
    if credential.token.is_none() && (credential.certificate.is_none() || credential.key.is_none())
    {
        return Err(OutputError::Empty);
    }
    Ok(credential)
}

/// Two clusters share a run exactly when they would run the identical command.
fn key_of(exec: &ExecConfig) -> String {
    let cluster = if exec.provide_cluster_info {
        exec.cluster
            .as_ref()
            .and_then(|c| serde_json::to_string(c).ok())
    } else {
        None
    };
    let mut env: Vec<(String, String)> = exec
        .env
        .iter()
        .flatten()
        .filter_map(|p| Some((p.get("name")?.clone(), p.get("value")?.clone())))
        .collect();
    env.sort();
    serde_json::json!([
        exec.api_version,
        exec.command,
        exec.args,
        env,
        exec.drop_env,
        cluster
    ])
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tokens_and_refuses_empty_credentials() {
        let ok = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
            "status":{"token":"abc","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let c = parse(ok).unwrap();
        assert!(c.expires.is_some());
        assert!(!format!("{c:?}").contains("abc"));
        assert_eq!(parse(br#"{"status":{}}"#).unwrap_err(), OutputError::Empty);
        assert!(matches!(
            parse(b"please log in").unwrap_err(),
            OutputError::NotCredential(_)
        ));
    }
}
