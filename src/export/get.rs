//! `fluxfleet get` and `fluxfleet inventory`: resolving the fleet, waiting for it, exit codes.
//! What is printed lives in `output.rs`, the `--watch` stream in `watch.rs`.

use std::io::{self, Write};
use std::time::Duration;

use jiff::Timestamp;

use super::output;
use super::table::Table;
use super::{Filter, Status};
use crate::fleet::{Counted, Index, Phase};
use crate::session::Session;
use crate::session::resolve::{Resolved, Sources};
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

/// The config and the fleet, every warning and problem reported on stderr.
pub async fn resolve(sources: &Sources) -> Resolved {
    let resolved = crate::session::resolve::resolve(sources).await;
    for w in &resolved.warnings {
        eprintln!("warning: {}", super::table::safe(w));
    }
    resolved
}

/// `fluxfleet inventory`: the resolved fleet; only management clusters are contacted.
pub async fn inventory(sources: &Sources, output: Output) -> u8 {
    let Resolved {
        inventory, clean, ..
    } = resolve(sources).await;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = match output {
        Output::Table => {
            let mut t = Table::new(vec!["CLUSTER", "WORKSPACE", "SERVER", "LABELS", "SOURCE"]);
            for c in &inventory.clusters {
                let labels: Vec<String> =
                    c.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                t.row(vec![
                    c.name.clone(),
                    c.workspace.clone(),
                    c.server.clone(),
                    if labels.is_empty() {
                        "-".into()
                    } else {
                        labels.join(",")
                    },
                    c.source.display().to_string(),
                ]);
            }
            t.write(&mut out)
        }
        Output::Json => output::write_json(&mut out, &inventory),
        Output::Ndjson => inventory
            .clusters
            .iter()
            .try_for_each(|c| output::write_line(&mut out, c)),
    };
    if let Err(code) = finish(written.and_then(|()| out.flush())) {
        return code;
    }
    if clean && !inventory.clusters.is_empty() {
        exit::OK
    } else {
        exit::INVENTORY
    }
}

/// `fluxfleet get`.
pub async fn get(request: Request) -> u8 {
    let (mut live, clean) = match &request.sources.nats {
        Some(options) => {
            if let Some(since) = request.since {
                return super::history::write(options, since, &request).await;
            }
            match crate::bus::reader::Bus::connect(options).await {
                Ok(bus) => {
                    for p in &bus.problems {
                        eprintln!("warning: {}", super::table::safe(p));
                    }
                    let clean = bus.problems.is_empty();
                    (Session::start(vec![Box::new(bus)]), clean)
                }
                Err(e) => {
                    eprintln!("error: {}", super::table::safe(&e));
                    return exit::ERROR;
                }
            }
        }
        None => {
            let Resolved {
                mut config,
                inventory,
                managements,
                clean,
                ..
            } = resolve(&request.sources).await;
            if inventory.clusters.is_empty() {
                eprintln!("error: no clusters to watch (see the warnings above)");
                return exit::INVENTORY;
            }
            if let Some(kind) = request.filter.kind {
                // Watch only what was asked for: cheaper, and reaches kinds not watched by
                // default.
                config.engine.kinds = vec![kind];
            }
            // Watching: clusters joining or leaving management clusters show up as they do.
            let follow = if request.watch { &managements[..] } else { &[] };
            let sources = crate::session::sources(&inventory, &config.engine, follow);
            (Session::start(sources), clean)
        }
    };
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
