//! The `fluxfleet` binary: parse the command line, run the command, exit non-zero on failure.

use std::process::ExitCode;

use clap::Parser;
use fluxfleet::cli::{Cli, Command, SimArgs};
use fluxfleet::export::get::{exit, get, inventory};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // One socket per cluster (and per watch over HTTP/1.1): a fleet needs more descriptors than
    // the usual soft limit of 1024. Failing to raise it is not fatal.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fluxfleet: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Some(Command::Get(args)) => {
            let request = match args.request() {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("fluxfleet: {e}");
                    return ExitCode::from(exit::USAGE);
                }
            };
            logs();
            return ExitCode::from(runtime.block_on(get(request)));
        }
        Some(Command::Inventory(args)) => {
            return ExitCode::from(inventory(&args.fleet.sources(), args.output));
        }
        Some(Command::Sim(args)) => runtime.block_on(sim(args)),
        None => Err(anyhow::anyhow!(
            "the fleet TUI is not built yet; run `fluxfleet sim --help` for the simulated fleet"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fluxfleet: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr, at `FLUXFLEET_LOG` (default: warnings only).
fn logs() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLUXFLEET_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
}

async fn sim(args: SimArgs) -> anyhow::Result<()> {
    logs();
    // Listen for signals before saying we are up: a supervisor may stop us right after the line.
    let mut stop = Signals::install()?;
    let config = args.config();
    let handle = fluxfleet::sim::start(config.clone()).await?;
    println!(
        "fluxfleet sim: {} clusters in {} workspaces ({} objects each) serving on {} — kubeconfigs in {} (fleet.kubeconfig, viewer.kubeconfig, management.kubeconfig), ready in {:.2?}",
        config.clusters,
        config.workspaces,
        config.objects,
        handle.base_url,
        handle.files.dir.display(),
        handle.startup,
    );
    stop.wait().await;
    handle.shutdown().await;
    Ok(())
}

/// SIGINT and SIGTERM, registered up front.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> anyhow::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    async fn wait(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}
