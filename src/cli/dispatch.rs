//! Runs the command asked for: the headless commands report with their exit code, the
//! long-running ones (the TUI, `demo`, `sim`, `collect`) until they end.

use std::process::ExitCode;

use super::process::logs;
use super::{Cli, Command};
use crate::export::request::exit;
use crate::fleet::verbs::Verb;

/// Runs `cli`'s command on a runtime of its own; the exit code says how it went.
pub fn run(cli: Cli) -> ExitCode {
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
            return report(&runtime, args.request(), crate::export::get::get);
        }
        Some(Command::Rollout(args)) => {
            return report(&runtime, args.request(), crate::export::rollout::rollout);
        }
        Some(Command::Gate(args)) => {
            return report(&runtime, args.request(), crate::export::gate::gate);
        }
        Some(Command::Workloads(args)) => {
            return report(
                &runtime,
                args.request(),
                crate::export::workloads::workloads,
            );
        }
        Some(Command::Alert(args)) => {
            return report(&runtime, args.request(), crate::export::alert::alert);
        }
        Some(Command::Suspend(args)) => {
            let request = args.act.request(Verb::Suspend, args.reason.clone());
            return report(&runtime, request, crate::export::act::act);
        }
        Some(Command::Resume(args)) => {
            return report(
                &runtime,
                args.request(Verb::Resume, None),
                crate::export::act::act,
            );
        }
        Some(Command::Reconcile(args)) => {
            let request = args.act.request(args.verb(), None);
            return report(&runtime, request, crate::export::act::act);
        }
        Some(Command::Mcp(args)) => {
            logs();
            return ExitCode::from(runtime.block_on(super::mcp::run(args)));
        }
        Some(Command::Proposals(args)) => {
            let listed = crate::export::proposals::list(args.id, args.output, args.bus.options());
            return ExitCode::from(runtime.block_on(listed));
        }
        Some(Command::Approve(args)) => {
            let request: Result<_, std::convert::Infallible> = Ok(args.request());
            return report(&runtime, request, crate::export::proposals::approve);
        }
        Some(Command::Reject(args)) => {
            let rejected =
                crate::export::proposals::reject(args.id, args.reason, args.bus.options());
            return ExitCode::from(runtime.block_on(rejected));
        }
        Some(Command::Inventory(args)) => {
            let sources = args.fleet.sources(Default::default());
            let code = runtime.block_on(crate::export::inventory::inventory(&sources, args.output));
            return ExitCode::from(code);
        }
        Some(Command::Sim(args)) => runtime.block_on(super::sim::run(args)),
        Some(Command::Collect(args)) => {
            on_workers(&runtime, super::collect::run(args)).unwrap_or_else(|e| Err(e.into()))
        }
        Some(Command::Demo(args)) => runtime.block_on(super::tui::demo(args)),
        Some(Command::Completions { shell }) => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "fluxfleet", &mut std::io::stdout());
            Ok(())
        }
        None => runtime.block_on(super::tui::run(cli.tui)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fluxfleet: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `command` as a task on the runtime's workers, not on this thread: the fleet's cluster
/// tasks hand it every change, and waking a thread parked outside the runtime costs a system
/// call and a context switch each time (a 20th of the CPU of reading 2,000 clusters).
fn on_workers<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    command: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, Ended> {
    runtime.block_on(runtime.spawn(command)).map_err(Ended)
}

/// A command's task ended without an answer (it panicked).
#[derive(Debug, thiserror::Error)]
#[error("the command ended without an answer: {0}")]
struct Ended(tokio::task::JoinError);

/// A command that reads the fleet and reports: its request, or the usage error that stops it.
fn report<R, E, F>(
    runtime: &tokio::runtime::Runtime,
    request: Result<R, E>,
    run: impl FnOnce(R) -> F,
) -> ExitCode
where
    E: std::fmt::Display,
    F: std::future::Future<Output = u8> + Send + 'static,
{
    match request {
        Ok(request) => {
            logs();
            match on_workers(runtime, run(request)) {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    eprintln!("fluxfleet: {e}");
                    ExitCode::from(exit::ERROR)
                }
            }
        }
        Err(e) => {
            eprintln!("fluxfleet: {e}");
            ExitCode::from(exit::USAGE)
        }
    }
}
