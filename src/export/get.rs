//! `fluxfleet get` and `fluxfleet inventory`: resolving the fleet, waiting for it, exit codes.
//! What is printed lives in `output.rs`, the `--watch` stream in `watch.rs`.

use std::io::{self, Write};
use std::time::Duration;

use jiff::Timestamp;

use super::output;
use super::table::Table;
use super::{Filter, Status};
use crate::bus::reader::Bus;
use crate::fleet::{Counted, Index, Phase};
use crate::inventory::Inventory;
use crate::session::Session;
use crate::session::open::{Fleet, Opened};
use crate::session::resolve::Sources;
use crate::units::age;

/// Exit codes, documented in the README.
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Table,
    Json,
    Ndjson,
}

/// What `get` was asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub sources: Sources,
    pub filter: Filter,
    pub output: Output,
    pub summary: bool,
    /// The selected not-ready objects by their root causes (`--root-causes`).
    pub root_causes: bool,
    pub timeout: Duration,
    pub watch: bool,
    pub fail_on: Option<Status>,
    /// With `--nats`: the history of this last while instead of the objects.
    pub since: Option<Duration>,
}

/// The fleet the options name, every warning reported on stderr; None (said why) when the bus
/// cannot be read.
pub async fn open(sources: &Sources) -> Option<Opened> {
    match crate::session::open::open(sources).await {
        Ok(opened) => {
            for w in &opened.warnings {
                eprintln!("warning: {}", super::table::safe(w));
            }
            Some(opened)
        }
        Err(e) => {
            eprintln!("error: {}", super::table::safe(&e));
            None
        }
    }
}

/// `fluxfleet inventory`: the fleet as resolved (only management clusters are contacted), or
/// the bus's clusters with their collectors (no cluster is contacted).
pub async fn inventory(sources: &Sources, output: Output) -> u8 {
    let Some(opened) = open(sources).await else {
        return exit::ERROR;
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = match &opened.fleet {
        Fleet::Kubeconfigs { inventory, .. } => kubeconfigs(inventory, output, &mut out),
        Fleet::Bus(bus) => collected(bus, output, &mut out),
    };
    if let Err(code) = finish(written.and_then(|()| out.flush())) {
        return code;
    }
    if opened.clean && !opened.fleet.is_empty() {
        exit::OK
    } else {
        exit::INVENTORY
    }
}

fn kubeconfigs(inventory: &Inventory, output: Output, out: &mut dyn Write) -> io::Result<()> {
    match output {
        Output::Table => {
            let mut t = Table::new(vec!["CLUSTER", "WORKSPACE", "SERVER", "LABELS", "SOURCE"]);
            for c in &inventory.clusters {
                t.row(vec![
                    c.name.clone(),
                    c.workspace.clone(),
                    c.server.clone(),
                    labels(&c.labels),
                    c.source.display().to_string(),
                ]);
            }
            t.write(out)
        }
        Output::Json => output::write_json(out, inventory),
        Output::Ndjson => inventory
            .clusters
            .iter()
            .try_for_each(|c| output::write_line(out, c)),
    }
}

/// One cluster of the bus, as `inventory --nats` prints it.
#[derive(serde::Serialize)]
struct Collected<'a> {
    cluster: &'a str,
    workspace: &'a str,
    server: &'a str,
    labels: &'a std::collections::BTreeMap<String, String>,
    /// The collector that publishes it.
    collector: &'a str,
}

fn collected(bus: &Bus, output: Output, out: &mut dyn Write) -> io::Result<()> {
    let clusters: Vec<Collected> = bus
        .states()
        .map(|s| Collected {
            cluster: &s.name,
            workspace: &s.workspace,
            server: &s.server,
            labels: &s.labels,
            collector: &s.collector,
        })
        .collect();
    match output {
        Output::Table => {
            let mut t = Table::new(vec![
                "CLUSTER",
                "WORKSPACE",
                "SERVER",
                "LABELS",
                "COLLECTOR",
            ]);
            for c in &clusters {
                t.row(vec![
                    c.cluster.to_string(),
                    c.workspace.to_string(),
                    c.server.to_string(),
                    labels(c.labels),
                    c.collector.to_string(),
                ]);
            }
            t.write(out)
        }
        Output::Json => output::write_json(
            out,
            &serde_json::json!({ "bucket": bus.bucket(), "clusters": clusters }),
        ),
        Output::Ndjson => clusters.iter().try_for_each(|c| output::write_line(out, c)),
    }
}

fn labels(labels: &std::collections::BTreeMap<String, String>) -> String {
    if labels.is_empty() {
        return "-".into();
    }
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(",")
}

/// `fluxfleet get`.
pub async fn get(request: Request) -> u8 {
    if let (Some(options), Some(since)) = (&request.sources.nats, request.since) {
        return super::history::write(options, since, &request).await;
    }
    let Some(mut opened) = open(&request.sources).await else {
        return exit::ERROR;
    };
    if opened.fleet.is_empty() {
        eprintln!("error: {}", opened.fleet.empty_why());
        return exit::INVENTORY;
    }
    if let Some(kind) = request.filter.kind {
        // Watch only what was asked for: cheaper, and reaches kinds not watched by default.
        opened.config.engine.kinds = vec![kind];
    }
    // Watching: clusters joining or leaving management clusters show up as they do.
    let mut live = Session::start(opened.fleet.sources(&opened.config.engine, request.watch));
    let clean = opened.clean;
    let settled = live.settle(request.timeout).await;
    let now = Timestamp::now();
    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = if request.summary {
        output::summary(&live.index, &request, now, &mut out)
    } else if request.root_causes {
        super::roots::write(&live.index, &request.filter, request.output, now, &mut out)
    } else {
        output::objects(&live.index, &request, &mut out)
    };
    if let Err(code) = finish(written.and_then(|()| out.flush())) {
        return code;
    }
    drop(out);
    not_live(&live.index, &request.filter, settled, now);
    if request.watch {
        let code = super::watch::watch(&mut live, &request).await;
        live.shutdown().await;
        return code;
    }
    let code = outcome(&live.index, &request, clean);
    live.shutdown().await;
    code
}

fn outcome(index: &Index, request: &Request, clean: bool) -> u8 {
    let filter = &request.filter;
    let clusters = || {
        index
            .clusters()
            .iter()
            .filter(|c| !c.retired && filter.cluster(c))
    };
    if !clean {
        return exit::INVENTORY;
    }
    if incomplete(index, filter) {
        return exit::UNREACHABLE;
    }
    if let Some(fail_on) = request.fail_on {
        let found = clusters().any(|c| match c.counted {
            Counted::Objects => c
                .objects
                .values()
                .any(|s| filter.object(s) && fail_on.matches(s.health)),
            // Counted by its report: what the report tells of the cluster as a whole.
            Counted::Report => c.health.iter().any(|(h, _)| fail_on.matches(h)),
        });
        if found {
            return exit::FAIL_ON;
        }
    }
    exit::OK
}

/// Some cluster in the scope is not seen completely (one without Flux is: it has nothing to
/// show).
pub(super) fn incomplete(index: &Index, filter: &Filter) -> bool {
    index.clusters().iter().any(|c| {
        let phase = c.connection.phase;
        !c.retired
            && filter.cluster(c)
            && !c.connection.is_complete()
            && phase != Phase::FluxNotInstalled
            && !summarized_whole(&c.connection)
            && !phase.is_lifecycle()
    })
}

/// Summarized as the engine was asked to, with nothing forbidden: seen, as far as a summary
/// goes.
fn summarized_whole(conn: &crate::fleet::Connection) -> bool {
    conn.phase == Phase::Summary && conn.forbidden.is_empty()
}

/// Clusters in the scope that are not live, on stderr: never silently missing from the output.
pub(super) fn not_live(index: &Index, filter: &Filter, settled: bool, now: Timestamp) {
    let mut t = Table::new(vec!["WORKSPACE", "CLUSTER", "STATE", "RETRY", "ERROR"]);
    for c in output::sorted(index).filter(|c| filter.cluster(c)) {
        let conn = &c.connection;
        if conn.is_complete() || summarized_whole(conn) {
            continue;
        }
        let retry = conn
            .retry_at
            // Rounded up: a retry 0.4 s away is "in 1s", not "in 0s".
            .map(|t| {
                let t = t
                    .checked_add(jiff::SignedDuration::from_millis(999))
                    .unwrap_or(t);
                format!("in {}", age(Some(now), t))
            })
            .unwrap_or_else(|| "-".into());
        t.row(vec![
            c.info.workspace.clone(),
            c.info.name.clone(),
            conn.phase.to_string(),
            retry,
            conn.error.as_deref().unwrap_or("").to_string(),
        ]);
    }
    if !t.is_empty() {
        if !settled {
            eprintln!("\nsome clusters had not answered when the timeout passed:");
        } else {
            eprintln!("\nclusters not completely visible:");
        }
        let _ = t.write(&mut io::stderr().lock());
    }
}

/// A closed pipe (`| head`) ends the output quietly; other write errors are errors.
pub(super) fn finish(result: io::Result<()>) -> Result<(), u8> {
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(exit::OK),
        Err(e) => {
            eprintln!("error: cannot write the output: {e}");
            Err(exit::ERROR)
        }
    }
}
