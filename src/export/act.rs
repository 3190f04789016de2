//! `fluxfleet suspend | resume | reconcile [KIND] [NAME]`: the actions without a terminal, with
//! the selectors of `get`, on the same engine, and into the same audit journal as the TUI.

use std::io::{self, BufRead, IsTerminal, Write};
use std::time::Duration;

use jiff::Timestamp;

use super::opening::fleet;
use super::request::exit;
use super::table::Table;
use crate::actions::{Guard, Progress, Target, Update, Watch};
use crate::audit;
use crate::config::Mode;
use crate::fleet::FluxKind;
use crate::fleet::verbs::{Intent, Verb};
use crate::session::Session;
use crate::session::resolve::Sources;

/// What was asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub sources: Sources,
    /// The action, as every front door asks it.
    pub action: crate::actions::Request,
    /// `--write` / `--read-only` over the config's mode.
    pub mode: Option<Mode>,
    pub dry_run: bool,
    pub yes: bool,
    /// For the fleet to answer, and for each reconcile to be handled.
    pub timeout: Duration,
    /// `table`: the per-target table at the end (and a live progress line on a terminal);
    /// `ndjson`: each target's outcome as one JSON line as it ends.
    pub output: super::request::Output,
}

/// The kinds a reconcile with source may request first.
const SOURCE_KINDS: [FluxKind; 5] = [
    FluxKind::GitRepository,
    FluxKind::OciRepository,
    FluxKind::Bucket,
    FluxKind::HelmRepository,
    FluxKind::HelmChart,
];

/// Watches only `kind` when one is asked for (and, for a reconcile with source, the sources it
/// requests first and waits for).
pub(crate) fn watch_kinds(config: &mut crate::config::Config, kind: Option<FluxKind>, verb: Verb) {
    if let Some(kind) = kind {
        config.engine.kinds = vec![kind];
        if verb == Verb::ReconcileWithSource {
            config.engine.kinds.extend(SOURCE_KINDS);
        }
    }
}

pub async fn act(request: Request) -> u8 {
    let opened = match fleet(&request.sources).await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let mut config = opened.config;
    let infos = opened.fleet.clusters();
    let (grant, permissions) = config.writable(request.mode, &infos);
    let refused = crate::actions::may_write(
        config.writes_refused().as_deref(),
        grant.is_some(),
        request.action.verb,
    );
    if let (Err(why), false) = (&refused, request.dry_run) {
        eprintln!("error: {why}; nothing was sent (--dry-run shows the targets)");
        return exit::USAGE;
    }
    let action = &request.action;
    watch_kinds(&mut config, action.filter.kind, action.verb);
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    if !live.settle(request.timeout).await {
        eprintln!(
            "warning: not every cluster answered within the timeout; acting on those that did"
        );
    }
    let intent = action.intent(audit::local_user(), Timestamp::now().to_string());
    let guard = Guard {
        actions: &config.actions,
        // A dry run in read-only mode shows what would be sent with writes enabled.
        permissions: grant.is_some().then_some(&permissions),
    };
    let admitted = action
        .select(&live.index)
        .and_then(|objects| crate::actions::admit(&live.index, objects, &intent, &guard));
    let targets = match admitted {
        Ok(targets) => targets,
        Err(refused) => {
            eprintln!("error: {refused}; nothing was sent");
            live.shutdown().await;
            return match refused.is_usage() {
                true => exit::USAGE,
                false => exit::ERROR,
            };
        }
    };
    let tally = crate::actions::Tally::of(&targets);
    if request.dry_run {
        let code = print_plan(&targets, &intent, tally);
        live.shutdown().await;
        return code;
    }
    let asking = Asking {
        yes: request.yes,
        verb: action.verb,
        confirm_above: config.actions.confirm_above,
        even_one: false,
    };
    if !confirmed(&asking, tally) {
        live.shutdown().await;
        return exit::USAGE;
    }
    let Some(grant) = grant else {
        return exit::USAGE;
    };
    let sending = Sending {
        timeout: request.timeout,
        concurrency: config.actions.concurrency,
        events: config.actions.events,
        ndjson: request.output == super::request::Output::Ndjson,
    };
    let job = crate::actions::Job {
        run: 1,
        intent,
        targets,
        proposal: None,
    };
    send_job(job, live, (grant, permissions), tally, sending)
        .await
        .0
}

/// How a planned job is sent, besides its targets.
pub(crate) struct Sending {
    /// For each reconcile to be handled.
    pub timeout: Duration,
    pub concurrency: usize,
    /// Record an Event on each target changed (`[actions] events`).
    pub events: bool,
    /// Each outcome as an NDJSON line as it ends, instead of a table at the end.
    pub ndjson: bool,
}

/// Sends `job` through the session's writer, journaled: the exit code and each target's record.
pub(crate) async fn send_job(
    job: crate::actions::Job,
    live: Session,
    (grant, permissions): (crate::config::WriteGrant, crate::config::Permissions),
    tally: crate::actions::Tally,
    sending: Sending,
) -> (u8, Vec<audit::Target>) {
    let writer = live.sources.writer(grant, permissions);
    let journal = audit::default_path();
    let how = crate::actions::Carry {
        writer: Some(&writer),
        // Done means handled by the controller.
        wait: job
            .intent
            .verb
            .requests_reconcile()
            .then_some(sending.timeout),
        concurrency: sending.concurrency,
        journal: journal.as_deref(),
        tool: None,
        events: sending.events,
    };
    send(&job, how, live, (tally, sending.ndjson)).await
}

/// Carries the job out, its progress on stderr (a line redrawn on a terminal) or its outcomes
/// as NDJSON, then the results; the exit code and each target's record.
async fn send(
    job: &crate::actions::Job,
    how: crate::actions::Carry<'_>,
    mut live: Session,
    (tally, ndjson): (crate::actions::Tally, bool),
) -> (u8, Vec<audit::Target>) {
    let started = std::time::Instant::now();
    // On a terminal, one line on stderr redrawn five times a second, waiting included.
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Progress::default()));
    let drawing = (!ndjson && io::stderr().is_terminal()).then(|| {
        let (shown, verb) = (shown.clone(), job.intent.verb);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            loop {
                tick.tick().await;
                let progress = *shown.lock().unwrap_or_else(|e| e.into_inner());
                eprint!("{}", redrawn(&progress, verb, started));
            }
        })
    });
    let report = |_: &Target, update: Update<'_>, progress: &Progress| {
        *shown.lock().unwrap_or_else(|e| e.into_inner()) = *progress;
        if ndjson && let Update::Ended(_, record) = update {
            let mut out = io::stdout();
            let line = OutcomeLine {
                kind: "outcome",
                target: record,
            };
            let _ = super::output::write_line(&mut out, &line).and_then(|()| out.flush());
        }
    };
    let (results, journaled) =
        crate::actions::carry_out(job, how, Some(Watch::Session(&mut live)), report).await;
    if let Some(drawing) = drawing {
        drawing.abort();
        let progress = *shown.lock().unwrap_or_else(|e| e.into_inner());
        eprintln!("{}", redrawn(&progress, job.intent.verb, started));
    }
    live.shutdown().await;
    // Writes without an audit record are an error: either nothing was sent (the intent could
    // not be written) or the outcomes are missing from the journal.
    let unjournaled = journaled.is_err();
    if let Err(e) = &journaled {
        eprintln!("error: {e}");
    }
    let failed = results.iter().filter(|r| r.outcome != "done").count();
    if !ndjson {
        print_results(&results);
    }
    if tally.sent == 0 {
        eprintln!("{}; nothing was sent", tally.describe(job.intent.verb));
    } else {
        eprintln!(
            "{}: {} done, {failed} not done, on {} objects ({} refused) in {:.1}s",
            job.intent.verb,
            results.len() - failed,
            results.len(),
            tally.refused,
            started.elapsed().as_secs_f64()
        );
    }
    let code = if failed == 0 && !unjournaled {
        exit::OK
    } else {
        exit::ERROR
    };
    (code, results)
}

/// The progress line, drawn over the previous one.
fn redrawn(progress: &Progress, verb: Verb, started: std::time::Instant) -> String {
    format!(
        "\r\x1b[2K{} · {:.1}s",
        progress.line(verb),
        started.elapsed().as_secs_f64()
    )
}

/// One line of `-o ndjson`: a target's journal record once it has ended.
#[derive(serde::Serialize)]
struct OutcomeLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    target: &'a audit::Target,
}

/// The per-target table, in the targets' order.
fn print_results(results: &[audit::Target]) {
    let mut t = Table::new(vec![
        "OUTCOME",
        "WORKSPACE",
        "CLUSTER",
        "KIND",
        "NAMESPACE",
        "NAME",
        "MESSAGE",
    ]);
    for r in results {
        t.row(vec![
            r.outcome.to_string(),
            r.workspace.clone(),
            r.cluster.clone(),
            r.kind.clone(),
            r.namespace.clone(),
            r.name.clone(),
            r.message.clone(),
        ]);
    }
    let mut out = io::stdout();
    let _ = super::request::finish(t.write(&mut out).and_then(|()| out.flush()));
}

/// `--dry-run`: the targets and what each would get.
fn print_plan(targets: &[Target], intent: &Intent, tally: crate::actions::Tally) -> u8 {
    if let Err(code) = print_targets(targets, &mut io::stdout()) {
        return code;
    }
    let what = tally.describe(intent.verb);
    if tally.sent == 0 {
        eprintln!("dry run: {what}");
    } else {
        eprintln!("dry run: {} would {what}; nothing was sent", intent.user);
    }
    exit::OK
}

/// The targets and what each would get, as a table on `out`.
pub(crate) fn print_targets(targets: &[Target], out: &mut dyn Write) -> Result<(), u8> {
    let mut t = Table::new(vec![
        "WORKSPACE",
        "CLUSTER",
        "KIND",
        "NAMESPACE",
        "NAME",
        "WOULD",
    ]);
    for target in targets {
        let r = &target.record;
        t.row(vec![
            r.workspace.clone(),
            r.cluster.clone(),
            r.kind.clone(),
            r.namespace.clone(),
            r.name.clone(),
            target.would(),
        ]);
    }
    super::request::finish(t.write(out).and_then(|()| out.flush()))
}

/// What confirming an action asks.
pub(crate) struct Asking {
    /// `--yes`.
    pub yes: bool,
    pub verb: Verb,
    pub confirm_above: usize,
    /// Ask even for one target (approving a proposal: a person must say yes).
    pub even_one: bool,
}

/// More than one target to send needs `--yes`, or, on a terminal, typing the count (above
/// `confirm_above`) or `y`. Refused targets are not counted: nothing is sent to them.
pub(crate) fn confirmed(asking: &Asking, tally: crate::actions::Tally) -> bool {
    let count = tally.sent;
    let confirm_above = asking.confirm_above;
    if asking.yes || (count <= 1 && !asking.even_one) {
        return true;
    }
    if !io::stdin().is_terminal() {
        eprintln!(
            "error: {}: pass --yes to {} them without a terminal (--dry-run lists them)",
            tally.describe(asking.verb),
            asking.verb
        );
        return false;
    }
    let wanted = if count > confirm_above {
        count.to_string()
    } else {
        "y".to_string()
    };
    eprint!(
        "{}? Type {wanted} to confirm: ",
        tally.describe(asking.verb)
    );
    let _ = io::stderr().flush();
    let mut line = String::new();
    if io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    let ok = line.trim() == wanted;
    if !ok {
        eprintln!("not confirmed; nothing was sent");
    }
    ok
}
