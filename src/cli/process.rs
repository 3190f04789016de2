//! What the commands need of their process: logs (to stderr, or to a file under the TUI) and
//! the signals that stop the long-running ones.

use std::path::PathBuf;

/// `FLUXFLEET_LOG`, default warnings only — but not kube's "Server cert bypassed" on every
/// connection to a cluster whose kubeconfig says `insecure-skip-tls-verify` (the user's own
/// choice, which `inventory` names; kubectl says nothing either).
fn log_level() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("FLUXFLEET_LOG")
        .unwrap_or_else(|_| DEFAULT_LOG.into())
}

const DEFAULT_LOG: &str = "warn,kube_client::client::tls=error";

/// Logs go to stderr, at `FLUXFLEET_LOG` (default: warnings only).
pub fn logs() {
    // A second call (a test running two commands in one process) keeps the first.
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(log_level())
        // Colours for a person at a terminal; plain text for a log collector (a pod's logs).
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

/// The TUI's logs go to a file (the screen is the TUI's): `fluxfleet.log` in the platform state
/// directory, at `FLUXFLEET_LOG` (default: warnings only), owner-only.
pub fn file_logs() -> Option<PathBuf> {
    let path = crate::places::log_file()?;
    let file = crate::private::append(&path).ok()?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(log_level())
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
    Some(path)
}

/// A signal that asks the process to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    /// The exit code of a process ended by it, as shells report one (128 + its number).
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        }
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        })
    }
}

/// SIGINT and SIGTERM, registered up front.
pub struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    pub fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// The next SIGINT or SIGTERM.
    pub async fn wait(&mut self) -> Signal {
        tokio::select! {
            _ = self.interrupt.recv() => Signal::Interrupt,
            _ = self.terminate.recv() => Signal::Terminate,
        }
    }
}

/// The time a long-running command has to stop once told to: inside the 30 s a Kubernetes pod
/// is given (`terminationGracePeriodSeconds` in config/deploy/).
pub const SHUTDOWN_TIMEOUT: &str = "20s";

/// `--shutdown-timeout`, for every command that runs until it is told to stop.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct StopArgs {
    /// Told to stop (SIGINT, SIGTERM), it finishes what it can within this long — withdraws
    /// what it announced, flushes what it holds — and abandons the rest; a second signal stops
    /// it at once.
    #[arg(long, default_value = SHUTDOWN_TIMEOUT, value_parser = super::usage::duration)]
    pub shutdown_timeout: std::time::Duration,
}

/// Runs `command` until it ends by itself or a signal tells it to stop. Told to stop, `stop` is
/// cancelled, a line says so (naming `who`), and the command has `deadline` to end: a second
/// signal, or the deadline passing, ends the process at once with the signal's exit code, in one
/// line saying what was abandoned. The signals are listened for before `command` starts.
pub async fn until_stopped<T>(
    who: &str,
    deadline: std::time::Duration,
    command: impl FnOnce(tokio_util::sync::CancellationToken) -> T,
) -> std::io::Result<T::Output>
where
    T: std::future::Future,
{
    let mut signals = Signals::install()?;
    let stop = tokio_util::sync::CancellationToken::new();
    let run = command(stop.clone());
    tokio::pin!(run);
    let signal = tokio::select! {
        ended = &mut run => return Ok(ended),
        signal = signals.wait() => signal,
    };
    let within = crate::units::format_duration(deadline);
    super::edge::stopping(who, &signal, &within);
    stop.cancel();
    tokio::select! {
        ended = &mut run => Ok(ended),
        again = signals.wait() => {
            let why = format!("{again} again: stopped at once");
            super::edge::abandoned(who, &why, again.exit_code())
        }
        _ = tokio::time::sleep(deadline) => {
            let why = format!("not stopped within {within} (--shutdown-timeout)");
            super::edge::abandoned(who, &why, signal.exit_code())
        }
    }
}
