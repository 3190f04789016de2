//! Carrying out a planned plugin run ([`crate::app::plugins::Launch`]): a kubeconfig holding
//! exactly its cluster, written to an owner-only temporary file (removed when the run ends,
//! however it ends), the arguments expanded, the journal's intent written first for a plugin that
//! writes, then the program — in the background with its output's last lines kept, or in the
//! terminal, which the event loop hands over and takes back ([`super::run::Console`]).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use crate::app::handoff::{Exit, PluginEnded};
use crate::app::plugins::{Launch, PluginError, expand};
use crate::audit;
use crate::fleet::verbs::Outcome;
use crate::session::{Reader, Writer};

/// Lines of a background plugin's output kept for the status line.
const TAIL: usize = 3;
/// Characters of one line kept.
const LINE: usize = 300;

/// A run ready to start: the program, its arguments expanded, and its kubeconfig on disk.
pub struct Prepared {
    pub launch: Launch,
    pub args: Vec<String>,
    /// Removed when this is dropped.
    kubeconfig: Option<tempfile::NamedTempFile>,
    /// Where the outcome goes, and the token pairing it with the intent already written.
    journal: Option<(PathBuf, String, audit::Record)>,
}

/// Everything before the program starts. A writing plugin gets its kubeconfig only through the
/// [`Writer`] (which a read-only session does not have) and runs only once its intent is in the
/// journal.
pub fn prepare(
    launch: Launch,
    reader: &Reader,
    writer: Option<&Writer>,
    journal: Option<&Path>,
) -> Result<Prepared, PluginError> {
    let mut vars = launch.vars.clone();
    let mut kubeconfig = None;
    if let Some(cluster) = &launch.cluster {
        let config = if launch.writes {
            let writer = writer.ok_or_else(|| PluginError::NoWriter(launch.plugin.clone()))?;
            writer.kubeconfig(cluster, reader)?
        } else {
            reader.kubeconfig(cluster)?
        };
        let file = write_kubeconfig(&config).map_err(PluginError::KubeconfigFile)?;
        vars.set("KUBECONFIG", file.path().display().to_string());
        kubeconfig = Some(file);
    }
    let args = launch
        .args
        .iter()
        .map(|a| expand(a, &vars))
        .collect::<Result<Vec<_>, _>>()?;
    let mut prepared = Prepared {
        launch,
        args,
        kubeconfig,
        journal: None,
    };
    if prepared.launch.writes {
        let path = journal.ok_or(PluginError::NoJournal)?;
        let token = jiff::Timestamp::now().to_string();
        let target = match (&prepared.launch.cluster, &prepared.launch.object) {
            (Some(c), Some(key)) => audit::Record::new(c, key),
            (Some(c), None) => audit::Record::cluster(c),
            (None, _) => audit::Record::cluster(&crate::fleet::ClusterInfo::new("", "")),
        };
        prepared
            .journal_line(path, audit::AttemptStage::Intent, &token, &target)
            .map_err(|why| PluginError::Journal {
                path: path.to_path_buf(),
                why,
            })?;
        prepared.journal = Some((path.to_path_buf(), token, target));
    }
    Ok(prepared)
}

impl Prepared {
    /// The program with its arguments and `KUBECONFIG` set to the run's own file; output as
    /// the caller sets it.
    pub fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.launch.command);
        command.args(&self.args).kill_on_drop(true);
        if let Some(file) = &self.kubeconfig {
            command.env("KUBECONFIG", file.path());
        }
        command
    }

    /// Journals the outcome (for a writing plugin) and removes the kubeconfig.
    pub fn finish(mut self, exit: Exit, tail: Vec<String>) -> PluginEnded {
        if let Some((path, token, target)) = self.journal.take() {
            let outcome = match &exit {
                Exit::Code(0) => Outcome::Done,
                other => Outcome::Failed(other.to_string()),
            };
            let target = target.with(&outcome);
            let target = audit::Record {
                message: exit.to_string(),
                ..target
            };
            if let Err(e) = self.journal_line(&path, audit::AttemptStage::Outcome, &token, &target)
            {
                tracing::warn!(error = %e, "audit journal");
            }
        }
        self.kubeconfig = None;
        PluginEnded {
            what: self.launch.describe(),
            exit,
            tail,
        }
    }

    fn journal_line(
        &self,
        path: &Path,
        stage: audit::AttemptStage,
        token: &str,
        target: &audit::Record,
    ) -> std::io::Result<()> {
        let command: Vec<String> = std::iter::once(self.launch.command.clone())
            .chain(self.args.iter().cloned())
            .collect();
        audit::append_line(
            path,
            &audit::Handoff {
                time: jiff::Timestamp::now(),
                stage,
                user: &self.launch.user,
                host: &audit::local_host(),
                action: "plugin",
                plugin: &self.launch.plugin,
                command: &command,
                token,
                targets: std::slice::from_ref(target),
            },
        )
    }
}

/// The kubeconfig in a new owner-only file in the user's runtime directory (else the temporary
/// one), named so that nobody can guess it in advance.
fn write_kubeconfig(config: &kube::config::Kubeconfig) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let dir = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let mut config = config.clone();
    config.api_version = Some("v1".into());
    config.kind = Some("Config".into());
    // tempfile creates it with O_EXCL and mode 0600.
    let mut file = tempfile::Builder::new()
        .prefix("fluxfleet-")
        .suffix(".kubeconfig")
        .tempfile_in(dir)?;
    let text = serde_json::to_vec_pretty(&config).map_err(std::io::Error::other)?;
    file.write_all(&text)?;
    file.flush()?;
    Ok(file)
}

/// Runs a prepared plugin without the terminal: no input, its output read and its last lines
/// kept, until it exits.
pub async fn background(prepared: Prepared) -> PluginEnded {
    let mut command = prepared.command();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return prepared.finish(Exit::NotRun(format!("cannot start it: {e}")), Vec::new());
        }
    };
    let mut tail = VecDeque::with_capacity(TAIL + 1);
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let mut out = out.map(|o| BufReader::new(o).lines());
    let mut err = err.map(|e| BufReader::new(e).lines());
    loop {
        tokio::select! {
            line = next_line(&mut out) => match line {
                Some(l) => keep(&mut tail, &l),
                None => out = None,
            },
            line = next_line(&mut err) => match line {
                Some(l) => keep(&mut tail, &l),
                None => err = None,
            },
        }
        if out.is_none() && err.is_none() {
            break;
        }
    }
    let exit = Exit::of(child.wait().await);
    prepared.finish(exit, tail.into_iter().collect())
}

type Lines<R> = Option<tokio::io::Lines<BufReader<R>>>;

/// The next line of `lines`; None at its end (or an error); pending forever once it has ended.
async fn next_line<R: AsyncRead + Unpin>(lines: &mut Lines<R>) -> Option<String> {
    match lines {
        Some(l) => l.next_line().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

/// Keeps `line`, made safe to show (no control characters) and cut short, among the last
/// [`TAIL`] non-empty lines.
fn keep(tail: &mut VecDeque<String>, line: &str) {
    let line: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(LINE)
        .collect();
    let line = line.trim();
    if line.is_empty() {
        return;
    }
    if tail.len() == TAIL {
        tail.pop_front();
    }
    tail.push_back(line.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_without_control_characters() {
        let mut tail = VecDeque::new();
        for line in ["one", "", "two\x1b[31m red", "three", "four"] {
            keep(&mut tail, line);
        }
        assert_eq!(tail, ["two [31m red", "three", "four"]);
        keep(&mut tail, &"x".repeat(1000));
        assert_eq!(tail.back().map(String::len), Some(LINE));
    }
}
