//! What the commands need of their process: logs (to stderr, or to a file under the TUI) and
//! the signals that stop the long-running ones.

use std::path::PathBuf;

/// `FLUXFLEET_LOG`, default warnings only.
fn log_level() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("FLUXFLEET_LOG").unwrap_or_else(|_| "warn".into())
}

/// Logs go to stderr, at `FLUXFLEET_LOG` (default: warnings only).
pub fn logs() {
    // A second call (a test running two commands in one process) keeps the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(log_level())
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

    pub async fn wait(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}
