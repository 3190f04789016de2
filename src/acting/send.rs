//! Sending a planned job from the command line, after a person confirmed it: through the one
//! executor ([`crate::actions::carry_out`]) and the journal, its progress told to the edge, each
//! target's outcome written (a table at the end, or NDJSON lines as they end), and what was sent
//! returned as [`Sent`].

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::failed::ActFailed;
use crate::actions::{Progress, Tally, Target, Update, Watch};
use crate::audit;
use crate::fleet::FluxKind;
use crate::fleet::verbs::Verb;
use crate::headless::Output;
use crate::headless::table::Table;
use crate::headless::writing::write_line;
use crate::headless::{Confirm, Confirmed, Edge, Said};
use crate::session::Session;

/// What a sent job did.
#[derive(Debug)]
pub struct Sent {
    pub verb: Verb,
    /// Each target's journal record, in the targets' order.
    pub results: Vec<audit::Record>,
    pub tally: Tally,
    pub elapsed: Duration,
    /// The journal could not be written: either nothing was sent (the intent could not be
    /// recorded) or the outcomes are missing from it.
    pub unjournaled: Option<crate::actions::JournalError>,
    /// The outcomes could not all be written (what was done is in the journal).
    pub unwritten: Option<io::Error>,
}

impl Sent {
    /// The targets that did not end done.
    pub fn not_done(&self) -> usize {
        self.results.iter().filter(|r| r.outcome != "done").count()
    }

    /// The targets refused, whether when planned or on their cluster before anything was sent
    /// (Flux's verbs).
    pub fn refused(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome == "refused")
            .count()
    }

    /// The reconciles done, and handled, whose object was not ready when its controller
    /// handled them (`flux reconcile` fails these).
    pub fn not_ready(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome == "done" && r.result.as_ref().is_some_and(|v| v.not_ready()))
            .count()
    }

    /// Every target done, and journaled.
    pub fn all_done(&self) -> bool {
        self.not_done() == 0 && self.unjournaled.is_none()
    }
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

impl Sending {
    /// As the config's `[actions]` say, waiting up to `timeout`, the outcomes as `output` asks.
    pub fn of(actions: &crate::config::Actions, timeout: Duration, output: Output) -> Sending {
        Sending {
            timeout,
            concurrency: actions.concurrency,
            events: actions.events,
            ndjson: output == Output::Ndjson,
        }
    }
}

/// Sends `job` through the session's writer, journaled.
pub(crate) async fn send_job(
    job: crate::actions::Job,
    live: Session,
    (grant, permissions): (crate::config::WriteGrant, crate::config::Permissions),
    tally: Tally,
    (sending, edge): (Sending, Arc<dyn Edge>),
) -> Sent {
    let writer = live.sources.writer(grant, permissions);
    let journal = audit::default_path();
    let how = crate::actions::Carry {
        writer: Some(&writer),
        // Done means handled by the controller.
        wait: job
            .intent()
            .verb
            .requests_reconcile()
            .then_some(sending.timeout),
        concurrency: sending.concurrency,
        journal: journal.as_deref(),
        tool: None,
        events: sending.events,
    };
    send(&job, how, live, (tally, sending.ndjson), edge).await
}

/// Carries the job out, its progress told to the edge (a line redrawn where that is seen) or
/// its outcomes as NDJSON, then the per-target table.
async fn send(
    job: &crate::actions::Job,
    how: crate::actions::Carry<'_>,
    mut live: Session,
    (tally, ndjson): (Tally, bool),
    edge: Arc<dyn Edge>,
) -> Sent {
    let started = Instant::now();
    let verb = job.intent().verb;
    let shown = Arc::new(Mutex::new(Progress::default()));
    let progress = move |shown: &Mutex<Progress>, last: bool| Said::Progress {
        line: shown.lock().unwrap_or_else(|e| e.into_inner()).line(verb),
        elapsed: started.elapsed(),
        last,
    };
    // Five times a second, waiting included.
    let drawing = (!ndjson && edge.shows_progress()).then(|| {
        let (shown, edge) = (shown.clone(), edge.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            loop {
                tick.tick().await;
                edge.said(progress(&shown, false));
            }
        })
    });
    let mut unwritten = None;
    let report = |_: &Target, update: Update<'_>, now: &Progress| {
        *shown.lock().unwrap_or_else(|e| e.into_inner()) = *now;
        if ndjson && let Update::Ended(_, record) = update {
            let mut out = io::stdout();
            let line = OutcomeLine {
                kind: "outcome",
                target: record,
            };
            if let Err(e) = write_line(&mut out, &line).and_then(|()| out.flush()) {
                unwritten.get_or_insert(e);
            }
        }
    };
    let (results, journaled) =
        crate::actions::carry_out(job, how, Some(Watch::Session(&mut live)), report).await;
    if let Some(drawing) = drawing {
        drawing.abort();
        edge.said(progress(&shown, true));
    }
    live.shutdown().await;
    if !ndjson && let Err(e) = write_results(&results, &mut io::stdout()) {
        unwritten = Some(e);
    }
    Sent {
        verb,
        results,
        tally,
        elapsed: started.elapsed(),
        unjournaled: journaled.err(),
        unwritten,
    }
}

/// One line of `-o ndjson`: a target's journal record once it has ended.
#[derive(serde::Serialize)]
struct OutcomeLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    target: &'a audit::Record,
}

/// The per-target table, in the targets' order.
fn write_results(results: &[audit::Record], out: &mut dyn Write) -> io::Result<()> {
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
            message(r),
        ]);
    }
    t.write(out).and_then(|()| out.flush())
}

/// A target's MESSAGE: its outcome's words, or what its reconcile came to where the object was
/// not ready when the controller handled it (as `flux reconcile` says it).
fn message(r: &audit::Record) -> String {
    match &r.result {
        Some(v) if r.outcome == "done" && v.not_ready() => {
            let reason = v
                .reason
                .as_deref()
                .map_or(String::new(), |r| format!(" ({r})"));
            let said = v
                .message
                .as_deref()
                .map_or(String::new(), |m| format!(": {m}"));
            format!("handled, then {}{reason}{said}", v.status.key())
        }
        _ => r.message.clone(),
    }
}

/// The targets and what each would get, as a table on `out`.
pub(crate) fn write_targets(targets: &[Target], out: &mut dyn Write) -> io::Result<()> {
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
    t.write(out).and_then(|()| out.flush())
}

/// What confirming an action asks.
pub(crate) struct Asking {
    /// `--yes`.
    pub yes: bool,
    pub verb: Verb,
    /// How the one door said it is confirmed.
    pub confirmation: crate::actions::Confirmation,
    /// Ask even for one target (approving a proposal: a person must say yes).
    pub even_one: bool,
}

/// More than one target to send needs `--yes`, or a person typing the count (when the door
/// says so: above `actions.confirm_above`) or `y`. Refused targets are not counted: nothing is sent to them.
pub(crate) fn confirmed(asking: &Asking, tally: Tally, edge: &dyn Edge) -> Result<(), ActFailed> {
    let count = tally.sent;
    if asking.yes || (count <= 1 && !asking.even_one) {
        return Ok(());
    }
    let what = tally.describe(asking.verb);
    let wanted = match asking.confirmation {
        crate::actions::Confirmation::Count => count.to_string(),
        crate::actions::Confirmation::Yes => "y".to_string(),
    };
    match edge.confirm(&Confirm {
        what: what.clone(),
        wanted,
    }) {
        Confirmed::Yes => Ok(()),
        Confirmed::No => Err(ActFailed::NotConfirmed),
        Confirmed::NoTerminal => Err(ActFailed::NeedsYes {
            what,
            verb: asking.verb,
        }),
    }
}
