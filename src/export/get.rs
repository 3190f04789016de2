//! `fluxfleet get`: the fleet opened, waited for, and written. What is printed lives in
//! `output.rs`, the `--watch` stream in `watch.rs`, the history in `history.rs`.

use std::io::{self, Write};
use std::sync::Arc;

use jiff::Timestamp;
use tokio_util::sync::CancellationToken;

use super::opening::{fleet, fleet_once_published, incomplete, not_live};
use super::outcome::{Edge, Ended, Failed, Said};
use super::output;
use super::query::Query;
use crate::fleet::{Counted, Index};
use crate::session::Session;

/// `fluxfleet get`; with `--watch`, until `stop` is cancelled.
pub async fn get(
    request: Query,
    edge: Arc<dyn Edge>,
    stop: CancellationToken,
) -> Result<Ended, Failed> {
    let edge = edge.as_ref();
    if let (Some(options), Some(since)) = (&request.sources.nats, request.since) {
        return super::history::write(options, since, &request).await;
    }
    // Counts are all `--summary` needs: a large bus may be read summarized.
    let sources = crate::session::resolve::Sources {
        counts_suffice: request.summary,
        ..request.sources.clone()
    };
    // Following the bus waits for a collector to publish; a one-off answer does not.
    let mut opened = if request.watch && sources.nats.is_some() {
        match fleet_once_published(&sources, edge, &stop).await? {
            Some(opened) => opened,
            None => return Ok(Ended::Stopped),
        }
    } else {
        fleet(&sources, edge).await?
    };
    if let Some(kind) = request.filter.kind {
        // Watch only what was asked for: cheaper, and reaches kinds not watched by default.
        opened.config.engine.kinds = vec![kind];
    }
    // Printed once: listed, not watched. Watching: clusters joining or leaving management
    // clusters show up as they do.
    opened.config.engine.list_only = !request.watch;
    let mut live = Session::start(opened.fleet.sources(&opened.config.engine, request.watch));
    let how = (&opened.config, opened.clean);
    let ended = answer(&mut live, &request, how, (edge, &stop)).await;
    live.shutdown().await;
    ended
}

/// The answer written once the fleet has answered, then followed with `--watch`.
async fn answer(
    live: &mut Session,
    request: &Query,
    (config, clean): (&crate::config::Config, bool),
    (edge, stop): (&dyn Edge, &CancellationToken),
) -> Result<Ended, Failed> {
    let settled = live.settle(request.timeout).await;
    let now = Timestamp::now();
    let mut out = io::BufWriter::new(io::stdout());
    if request.summary {
        output::summary(&live.index, request, now, &mut out)?;
    } else if request.root_causes {
        let window = config.rollout.rules.suspect_window;
        let what = (&request.filter, request.output);
        super::roots::write(&live.index, what, (now, window), &mut out)?;
    } else if !output::objects(&live.index, request, &mut out)? {
        edge.said(Said::NoObjects);
    }
    out.flush()?;
    drop(out);
    not_live(&live.index, &request.filter, settled, now, edge);
    if request.watch {
        return super::watch::watch(live, request, stop).await;
    }
    Ok(outcome(&live.index, request, clean))
}

fn outcome(index: &Index, request: &Query, clean: bool) -> Ended {
    let filter = &request.filter;
    let clusters = || {
        index
            .clusters()
            .iter()
            .filter(|c| !c.retired && filter.cluster(c))
    };
    if !clean {
        return Ended::Unclean;
    }
    if incomplete(index, filter) {
        return Ended::Incomplete;
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
            return Ended::FailOn;
        }
    }
    Ended::Done
}
