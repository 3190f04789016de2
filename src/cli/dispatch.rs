//! Runs the command asked for: the headless commands report with their exit code, the
//! long-running ones (the TUI, `demo`, `sim`, `collect`) until they end.

use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::Arc;

use super::edge::{self, Terminal, ended};
use super::process::{logs, until_stopped};
use super::{Cli, CliCommand};
use crate::acting::{act, approve};
use crate::export::alert::AlertFailed;
use crate::export::outcome::{Ended, ReadFailed};
use crate::export::query::Query;
use crate::export::{
    alert, drift, gate, get, inventory, proposals, rollout, trace, tree, workloads,
};
use crate::fleet::verbs::Verb;
use crate::headless::Edge;
use tokio_util::sync::CancellationToken;

/// How much lower than the TUI's own thread its workers run.
const WORKER_NICENESS: i32 = 5;

/// The runtime a command runs on. With a `screen` (the TUI, the demo), the screen is drawn on
/// the calling thread and the fleet's connections run on the workers: a worker a step below it
/// lets a frame be drawn when it is due while ten thousand clusters connect
/// (docs/performance.md, "The TUI while ten thousand clusters connect"), and the connections
/// take what the screen leaves, as before.
fn runtime(screen: bool) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    // Linux keeps a niceness for each thread; elsewhere it is the whole process's, screen and
    // all, and each worker would lower it again.
    if screen && cfg!(target_os = "linux") {
        builder.on_thread_start(|| {
            let _ = rustix::process::nice(WORKER_NICENESS);
        });
    }
    builder.build()
}

/// Runs `cli`'s command on a runtime of its own; the exit code says how it went.
pub fn run(cli: Cli) -> ExitCode {
    let screen = matches!(cli.command, None | Some(CliCommand::Demo(_)));
    let runtime = match runtime(screen) {
        Ok(rt) => rt,
        Err(e) => return ExitCode::from(edge::unstarted(&e)),
    };
    let edge = || -> Arc<dyn Edge> { Arc::new(Terminal) };
    match cli.command {
        Some(CliCommand::Get(args)) => {
            let deadline = args.stop.shutdown_timeout;
            let request = args.request();
            let getting = move |query: Query| async move {
                match query.watch {
                    true => {
                        let watching = |stop| get::get(query, edge(), stop);
                        stoppable("fluxfleet get", deadline, watching, ReadFailed::Signals).await
                    }
                    false => get::get(query, edge(), CancellationToken::new()).await,
                }
            };
            report(&runtime, request, getting, ended)
        }
        Some(CliCommand::Rollout(args)) => {
            let request = args.request();
            report(&runtime, request, |r| rollout::rollout(r, edge()), ended)
        }
        Some(CliCommand::Gate(args)) => {
            let request = args.request();
            report(&runtime, request, |r| gate::gate(r, edge()), ended)
        }
        Some(CliCommand::Drift(args)) => {
            let request = args.request();
            report(&runtime, request, |r| drift::drift_of(r, edge()), ended)
        }
        Some(CliCommand::Workloads(args)) => {
            let request = args.request();
            report(
                &runtime,
                request,
                |r| workloads::workloads(r, edge()),
                ended,
            )
        }
        Some(CliCommand::Trace(args)) => {
            let request = args.request();
            report(&runtime, request, |r| trace::trace(r, edge()), ended)
        }
        Some(CliCommand::Tree(args)) => {
            let request = args.request();
            report(&runtime, request, |r| tree::tree(r, edge()), ended)
        }
        Some(CliCommand::Alert(args)) => {
            let deadline = args.stop.shutdown_timeout;
            let request = args.request();
            let alerting = move |request| async move {
                let alerting = |stop| alert::alert(request, edge(), stop);
                stoppable("fluxfleet alert", deadline, alerting, AlertFailed::Signals).await
            };
            report(&runtime, request, alerting, edge::alerted)
        }
        Some(CliCommand::Suspend(args)) => {
            let request = args.act.request(Verb::Suspend, args.reason.clone());
            report(&runtime, request, |r| act::act(r, edge()), edge::acted)
        }
        Some(CliCommand::Resume(args)) => {
            let request = args.request(Verb::Resume, None);
            report(&runtime, request, |r| act::act(r, edge()), edge::acted)
        }
        Some(CliCommand::Reconcile(args)) => {
            let request = args.act.request(args.verb(), None);
            report(&runtime, request, |r| act::act(r, edge()), edge::acted)
        }
        Some(CliCommand::Mcp(args)) => {
            report(&runtime, args.checked(), super::mcp::run, edge::served)
        }
        Some(CliCommand::Proposals(args)) => {
            let request: Result<_, Infallible> = Ok(args);
            let listed = |args: super::ProposalsArgs| {
                proposals::list(args.id, args.output, args.bus.options(), edge())
            };
            report(&runtime, request, listed, ended)
        }
        Some(CliCommand::Approve(args)) => {
            let request: Result<_, Infallible> = Ok(args.request());
            let approving = |r| approve::approve(r, edge());
            report(&runtime, request, approving, edge::approved)
        }
        Some(CliCommand::Reject(args)) => {
            let request: Result<_, Infallible> = Ok(args);
            let rejecting =
                |args: super::RejectArgs| approve::reject(args.id, args.reason, args.bus.options());
            report(&runtime, request, rejecting, edge::rejected)
        }
        Some(CliCommand::Inventory(args)) => {
            let request: Result<_, Infallible> = Ok(args);
            let listing = |args: super::InventoryArgs| {
                inventory::inventory(args.fleet.sources(Default::default()), args.output, edge())
            };
            report(&runtime, request, listing, ended)
        }
        Some(CliCommand::Sim(args)) => {
            let request: Result<_, Infallible> = Ok(args);
            report(&runtime, request, super::sim::run, edge::simulated)
        }
        Some(CliCommand::Collect(args)) => {
            let request: Result<_, Infallible> = Ok(args);
            report(&runtime, request, super::collect::run, edge::collected)
        }
        Some(CliCommand::Demo(args)) => {
            ExitCode::from(edge::looked(runtime.block_on(super::tui::demo(args))))
        }
        Some(CliCommand::Completions { shell }) => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "fluxfleet", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        None => ExitCode::from(edge::looked(runtime.block_on(super::tui::run(cli.tui)))),
    }
}

/// Runs `command` as a task on the runtime's workers, not on this thread: the fleet's cluster
/// tasks hand it every change, and waking a thread parked outside the runtime costs a system
/// call and a context switch each time (a 20th of the CPU of reading 2,000 clusters).
fn on_workers<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    command: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, Unanswered> {
    runtime.block_on(runtime.spawn(command)).map_err(Unanswered)
}

/// A command's task ended without an answer (it panicked).
#[derive(Debug, thiserror::Error)]
#[error("the command ended without an answer: {0}")]
struct Unanswered(tokio::task::JoinError);

/// A headless command that runs until it is told to stop ([`until_stopped`]); `unheard` when
/// SIGINT and SIGTERM cannot be listened for.
async fn stoppable<F, E>(
    who: &str,
    deadline: std::time::Duration,
    command: impl FnOnce(CancellationToken) -> F,
    unheard: E,
) -> Result<Ended, E>
where
    F: std::future::Future<Output = Result<Ended, E>>,
{
    until_stopped(who, deadline, command)
        .await
        .unwrap_or(Err(unheard))
}

/// A headless command: its request, or the usage error that stops it; run, its end told by
/// `told` (the exit code, the last words).
fn report<R, E, F, T>(
    runtime: &tokio::runtime::Runtime,
    request: Result<R, E>,
    run: impl FnOnce(R) -> F,
    told: impl FnOnce(T) -> u8,
) -> ExitCode
where
    E: std::fmt::Display,
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    match request {
        Ok(request) => {
            logs();
            match on_workers(runtime, run(request)) {
                Ok(result) => ExitCode::from(told(result)),
                Err(unanswered) => ExitCode::from(edge::unanswered(&unanswered)),
            }
        }
        Err(usage) => ExitCode::from(edge::misused(&usage)),
    }
}

#[cfg(test)]
mod tests {
    /// The niceness of a task's thread on `runtime`'s workers, and of this thread.
    fn niceness(runtime: &tokio::runtime::Runtime) -> (i32, i32) {
        let here = rustix::process::getpriority_process(None).unwrap_or(i32::MIN);
        let worker = runtime
            .block_on(runtime.spawn(async { rustix::process::getpriority_process(None) }))
            .ok()
            .and_then(Result::ok)
            .unwrap_or(i32::MIN);
        (here, worker)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_screens_workers_run_a_step_below_it_and_a_commands_do_not() {
        let Ok(screen) = super::runtime(true) else {
            panic!("no runtime");
        };
        let (here, worker) = niceness(&screen);
        // A thread already at the lowest priority cannot go lower.
        assert_eq!(
            worker,
            (here + super::WORKER_NICENESS).min(19),
            "the TUI's workers"
        );
        let Ok(command) = super::runtime(false) else {
            panic!("no runtime");
        };
        let (here, worker) = niceness(&command);
        assert_eq!(worker, here, "a command's workers");
    }
}
