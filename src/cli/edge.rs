//! The one edge of every command — the headless ones, `mcp`, `collect`, `sim`, the TUI and
//! `demo`: what they tell on the way becomes lines on stderr (a progress line redrawn on a
//! terminal, a confirmation asked there), and how they end becomes the exit code and its last
//! words — a command line refused, a signal, a command that gave no answer included. Nothing
//! else writes to stderr (a test checks); the library prints nothing but a command's output.

use std::io::{self, BufRead, IsTerminal, Write};

use crate::acting::act::Acted;
use crate::acting::approve::Approved;
use crate::acting::{ActFailed, ProposalFailed, Sent};
use crate::export::alert::AlertFailed;
use crate::export::outcome::{Ended, ReadFailed};
use crate::headless::table::{Table, safe};
use crate::headless::{Confirm, Confirmed, Edge, NotLive, OpenFailed, Said};
use crate::mcp::{McpError, McpSaid};
use crate::proposals::Proposal;

/// Exit codes, documented in the README and docs/commands.md.
pub mod exit {
    pub const OK: u8 = 0;
    /// fluxfleet itself failed (cannot write output, cannot start).
    pub const ERROR: u8 = 1;
    /// The command line is wrong (clap uses 2 as well).
    pub const USAGE: u8 = 2;
    /// An inventory source or the config has problems, or no cluster was found.
    pub const INVENTORY: u8 = 3;
    /// Some clusters could not be seen completely (not live when the output was made).
    pub const UNREACHABLE: u8 = 4;
    /// `--fail-on` found matching objects.
    pub const FAIL_ON: u8 = 5;
    /// `gate`: the gate is closed (not yet).
    pub const CLOSED: u8 = 6;
    /// `reconcile`, `resume`: every request done and handled, but some objects were not ready
    /// when their controllers handled them (`flux reconcile` fails these).
    pub const NOT_READY: u8 = 7;
    /// `drift`: some copies on a revision applied something else, or a release drifted live.
    pub const DRIFTED: u8 = 8;
    /// `trace`: the copies found do not share one chain; `tree`: the clusters' trees differ.
    pub const DIVERGED: u8 = 9;
}

/// The terminal a headless command runs in: stderr for what it says, stdin to confirm.
pub struct Terminal;

impl Edge for Terminal {
    fn said(&self, said: Said) {
        match said {
            Said::Warning(w) => eprintln!("warning: {}", safe(&w)),
            Said::Waiting(w) => eprintln!("waiting: {}", safe(&w)),
            Said::NotLive { settled, clusters } => not_live(settled, &clusters),
            Said::NoObjects => eprintln!("no Flux objects found"),
            Said::Progress {
                line,
                elapsed,
                last,
            } => {
                // Drawn over the previous one.
                let drawn = format!("\r\x1b[2K{line} · {:.1}s", elapsed.as_secs_f64());
                match last {
                    true => eprintln!("{drawn}"),
                    false => eprint!("{drawn}"),
                }
            }
            Said::Note(note) => eprintln!("{note}"),
        }
    }

    fn shows_progress(&self) -> bool {
        io::stderr().is_terminal()
    }

    fn confirm(&self, asked: &Confirm) -> Confirmed {
        if !io::stdin().is_terminal() {
            return Confirmed::NoTerminal;
        }
        eprint!("{}? Type {} to confirm: ", asked.what, asked.wanted);
        let _ = io::stderr().flush();
        let mut line = String::new();
        match io::stdin().lock().read_line(&mut line) {
            Ok(_) if line.trim() == asked.wanted => Confirmed::Yes,
            _ => Confirmed::No,
        }
    }
}

fn not_live(settled: bool, clusters: &[NotLive]) {
    let mut t = Table::new(vec!["WORKSPACE", "CLUSTER", "STATE", "RETRY", "ERROR"]);
    for c in clusters {
        t.row(vec![
            c.workspace.clone(),
            c.cluster.clone(),
            c.state.clone(),
            c.retry.clone(),
            c.error.clone(),
        ]);
    }
    match settled {
        false => eprintln!("\nsome clusters had not answered when the timeout passed:"),
        true => eprintln!("\nclusters not completely visible:"),
    }
    let _ = t.write(&mut io::stderr().lock());
}

/// The async runtime could not be started: said, and its exit code.
pub fn unstarted(e: &io::Error) -> u8 {
    eprintln!("fluxfleet: cannot start the async runtime: {e}");
    exit::ERROR
}

/// A command line refused before the command ran (what `usage` says to change): said, and its
/// exit code.
pub fn misused(usage: &dyn std::fmt::Display) -> u8 {
    eprintln!("fluxfleet: {}", safe(&usage.to_string()));
    exit::USAGE
}

/// A command that ended without an answer (its task panicked): said, and its exit code.
pub fn unanswered(e: &dyn std::fmt::Display) -> u8 {
    eprintln!("fluxfleet: {}", safe(&e.to_string()));
    exit::ERROR
}

/// Told to stop by `signal`: said, with how long it has.
pub fn stopping(who: &str, signal: &dyn std::fmt::Display, within: &str) {
    eprintln!("{who}: {signal}: stopping (within {within}; a second signal stops at once)");
}

/// Stopped at once (`why`: a second signal, or the deadline passed): said, and the process ends
/// with the signal's exit `code`.
pub fn abandoned(who: &str, why: &str, code: u8) -> ! {
    eprintln!("{who}: {why}: abandoning what was left to do");
    std::process::exit(i32::from(code))
}

/// A reading command's end: its exit code, the failure said.
pub fn ended(result: Result<Ended, ReadFailed>) -> u8 {
    match result {
        Ok(Ended::Done | Ended::Stopped) => exit::OK,
        Ok(Ended::Unclean) => exit::INVENTORY,
        Ok(Ended::Incomplete) => exit::UNREACHABLE,
        Ok(Ended::FailOn) => exit::FAIL_ON,
        Ok(Ended::GateClosed) => exit::CLOSED,
        Ok(Ended::Drifted) => exit::DRIFTED,
        Ok(Ended::Diverged) => exit::DIVERGED,
        Ok(Ended::Nowhere) => exit::ERROR,
        Ok(Ended::Unreadable) => exit::ERROR,
        Err(failed) => read_failure(&failed),
    }
}

/// Says why a reading command failed; its exit code. A reader that closed the output is no
/// failure.
fn read_failure(failed: &ReadFailed) -> u8 {
    match failed {
        f if f.closed_pipe() => exit::OK,
        ReadFailed::Open(open) => open_failure(open),
        f => said_failure(f, f.is_usage()),
    }
}

/// Says why the fleet could not be opened; its exit code.
fn open_failure(failed: &OpenFailed) -> u8 {
    match failed {
        // Where fluxfleet looked, a line each: our own lines, each made safe.
        OpenFailed::NoClusters(why) => {
            let lines: Vec<_> = why.lines().map(safe).collect();
            eprintln!("error: {}", lines.join("\n"));
            exit::INVENTORY
        }
        OpenFailed::Bus(_) => said_failure(failed, false),
    }
}

/// Says `failed` in one line, made safe for a terminal.
fn say_error(failed: &dyn std::fmt::Display) {
    eprintln!("error: {}", safe(&failed.to_string()));
}

/// Says `failed` in one line; usage's exit code or the error's.
fn said_failure(failed: &dyn std::fmt::Display, usage: bool) -> u8 {
    say_error(failed);
    match usage {
        true => exit::USAGE,
        false => exit::ERROR,
    }
}

/// `alert`'s end, when not told to stop: its exit code, the failure said.
pub fn alerted(result: Result<Ended, AlertFailed>) -> u8 {
    match result {
        Ok(ended) => self::ended(Ok(ended)),
        Err(AlertFailed::Open(open)) => open_failure(&open),
        Err(failed @ AlertFailed::Alertmanager(_)) => said_failure(&failed, true),
        Err(failed @ (AlertFailed::Signals | AlertFailed::SourcesStopped)) => {
            said_failure(&failed, false)
        }
    }
}

/// Says why an action failed; its exit code.
fn act_failure(failed: &ActFailed) -> u8 {
    match failed {
        f if f.closed_pipe() => exit::OK,
        // The person answered; nothing more to say than that.
        ActFailed::NotConfirmed => {
            eprintln!("{failed}");
            exit::USAGE
        }
        ActFailed::Open(open) => open_failure(open),
        f => said_failure(f, f.is_usage()),
    }
}

/// Says why a decision on a proposal failed; its exit code.
fn proposal_failure(failed: &ProposalFailed) -> u8 {
    match failed {
        ProposalFailed::Act(act) => act_failure(act),
        ProposalFailed::Changed {
            changed,
            unrecorded,
            ..
        } => {
            eprintln!("error: {failed}:");
            for line in changed {
                eprintln!("  {}", safe(line));
            }
            if let Some(e) = unrecorded {
                say_error(e);
            }
            exit::ERROR
        }
        f => said_failure(f, f.is_usage()),
    }
}

/// `suspend | resume | reconcile`'s end.
pub fn acted(result: Result<Acted, ActFailed>) -> u8 {
    match result {
        Ok(Acted::Planned { user, verb, tally }) => {
            let what = tally.describe(verb);
            match tally.sent {
                0 => eprintln!("dry run: {what}"),
                _ => eprintln!("dry run: {user} would {what}; nothing was sent"),
            }
            exit::OK
        }
        Ok(Acted::Sent(sent)) => sent_code(&sent),
        Err(failed) => act_failure(&failed),
    }
}

/// `approve`'s end: the job's, and whether its outcomes are recorded on the proposal.
pub fn approved(result: Result<Approved, ProposalFailed>) -> u8 {
    match result {
        Ok(Approved { sent, unrecorded }) => {
            let code = sent_code(&sent);
            match unrecorded {
                Some(e) => {
                    say_error(&e);
                    exit::ERROR
                }
                None => code,
            }
        }
        Err(failed) => proposal_failure(&failed),
    }
}

/// `reject`'s end.
pub fn rejected(result: Result<Proposal, ProposalFailed>) -> u8 {
    match result {
        Ok(p) => {
            eprintln!("rejected {}: nothing will be sent", p.id);
            exit::OK
        }
        Err(failed) => proposal_failure(&failed),
    }
}

/// What a sent job did, in one line after its outcomes; 0 only when every target is done and
/// journaled.
fn sent_code(sent: &Sent) -> u8 {
    if let Some(e) = &sent.unjournaled {
        eprintln!("error: {e}");
    }
    let unwritten = sent
        .unwritten
        .as_ref()
        .filter(|e| e.kind() != io::ErrorKind::BrokenPipe);
    if let Some(e) = unwritten {
        eprintln!("error: cannot write the output: {e}");
    }
    let verb = sent.verb;
    let failed = sent.not_done();
    if sent.tally.sent == 0 {
        eprintln!("{}; nothing was sent", sent.tally.describe(verb));
    } else {
        let not_ready = match sent.not_ready() {
            0 => String::new(),
            n => format!(" ({n} not ready when handled)"),
        };
        eprintln!(
            "{verb}: {} done{not_ready}, {failed} not done, on {} objects ({} refused) in {:.1}s",
            sent.results.len() - failed,
            sent.results.len(),
            sent.refused(),
            sent.elapsed.as_secs_f64()
        );
    }
    match (sent.all_done() && unwritten.is_none(), sent.not_ready()) {
        (true, 0) => exit::OK,
        (true, _) => exit::NOT_READY,
        (false, _) => exit::ERROR,
    }
}

/// How `fluxfleet mcp` ended, when not by its client closing stdio or a signal.
#[derive(Debug, thiserror::Error)]
pub enum McpFailed {
    #[error(transparent)]
    Served(#[from] McpError),
    #[error("cannot watch for SIGINT and SIGTERM: {0}")]
    Signals(io::Error),
}

/// What `mcp` says on the way, on stderr (stdout is the protocol's).
pub fn mcp_said(said: McpSaid) {
    match said {
        McpSaid::Warning(w) => eprintln!("warning: {}", safe(&w)),
        McpSaid::Endpoint(served) => eprintln!("fluxfleet mcp: {served}"),
        McpSaid::Serving {
            scheme,
            addr,
            proposes,
            writes,
        } => eprintln!(
            "fluxfleet mcp: serving MCP on {scheme}://{addr}/mcp ({})",
            match (proposes, writes) {
                (true, _) => "read-only; writes are proposals",
                (false, true) => "writes, each as the person asking",
                (false, false) => "read-only",
            }
        ),
    }
}

/// `mcp`'s end: the failure said, its exit code — the user's doing (a flag, a file, a config)
/// is usage.
pub fn served(result: Result<(), McpFailed>) -> u8 {
    said_ending(result, |failed| match failed {
        McpFailed::Served(McpError::NoClusters(_)) => exit::INVENTORY,
        McpFailed::Served(
            McpError::WritesRefused(_)
            | McpError::Proposals(_)
            | McpError::Listen(_)
            | McpError::Endpoints(_),
        ) => exit::USAGE,
        McpFailed::Served(McpError::Open(_) | McpError::Handshake(_) | McpError::Session(_))
        | McpFailed::Signals(_) => exit::ERROR,
    })
}

/// How a command that runs until told to stop ended: 0, or its failure said and `code`'s exit
/// code for it.
fn said_ending<E: std::fmt::Display>(result: Result<(), E>, code: impl FnOnce(&E) -> u8) -> u8 {
    match result {
        Ok(()) => exit::OK,
        Err(failed) => {
            say_error(&failed);
            code(&failed)
        }
    }
}

/// How the TUI or `demo` ended, when not by the person quitting or a signal.
#[derive(Debug, thiserror::Error)]
pub enum TuiFailed {
    /// The fleet could not be opened, or holds no cluster.
    #[error(transparent)]
    Open(#[from] OpenFailed),
    /// `demo`: its simulated fleet could not be started.
    #[error("the demo's simulated fleet: {0}")]
    Demo(fluxfleet_sim::Error),
    /// `demo`: its private directory could not be made.
    #[error("the demo's directory: {0}")]
    DemoDir(io::Error),
    #[error(transparent)]
    Terminal(#[from] crate::tui::TerminalFailed),
}

/// The TUI's or `demo`'s end: the failure said, its exit code (no cluster is the inventory's).
pub fn looked(result: Result<(), TuiFailed>) -> u8 {
    match result {
        Ok(()) => exit::OK,
        Err(TuiFailed::Open(open)) => open_failure(&open),
        Err(failed) => said_failure(&failed, false),
    }
}

/// How `fluxfleet collect` ended, when not told to stop.
#[derive(Debug, thiserror::Error)]
pub enum CollectFailed {
    #[error("collect publishes to NATS: give --nats URL (or FLUXFLEET_NATS)")]
    NoBus,
    /// The fleet's kubeconfigs or config could not be read.
    #[error(transparent)]
    Open(crate::bus::BusError),
    #[error("collect reads its clusters from kubeconfigs, not from the bus")]
    FromBus,
    #[error("no clusters to collect (see the warnings above)")]
    NoClusters,
    /// Its metrics or probes could not listen where asked.
    #[error(transparent)]
    Endpoints(#[from] crate::endpoints::BindError),
    /// The bus refused it, or what it could not mend by trying again.
    #[error(transparent)]
    Bus(crate::bus::BusError),
    #[error("cannot watch for SIGINT and SIGTERM: {0}")]
    Signals(io::Error),
}

/// `collect`'s end: the failure said, its exit code.
pub fn collected(result: Result<(), CollectFailed>) -> u8 {
    said_ending(result, |failed| match failed {
        CollectFailed::NoClusters => exit::INVENTORY,
        CollectFailed::NoBus | CollectFailed::FromBus | CollectFailed::Endpoints(_) => exit::USAGE,
        CollectFailed::Open(_) | CollectFailed::Bus(_) | CollectFailed::Signals(_) => exit::ERROR,
    })
}

/// How `fluxfleet sim` ended, when not told to stop.
#[derive(Debug, thiserror::Error)]
pub enum SimFailed {
    /// Its configuration, or what it could not write or listen on.
    #[error(transparent)]
    Start(fluxfleet_sim::Error),
    #[error("cannot watch for SIGINT and SIGTERM: {0}")]
    Signals(io::Error),
}

/// `sim`'s end: the failure said, its exit code — a configuration the flags made, or an address
/// that cannot be listened on, is usage.
pub fn simulated(result: Result<(), SimFailed>) -> u8 {
    said_ending(result, |failed| match failed {
        SimFailed::Start(fluxfleet_sim::Error::Config(_) | fluxfleet_sim::Error::Bind { .. }) => {
            exit::USAGE
        }
        SimFailed::Start(_) | SimFailed::Signals(_) => exit::ERROR,
    })
}
