//! `fluxfleet get`: the fleet opened, waited for, and written. What is printed lives in
//! `output.rs`, the `--watch` stream in `watch.rs`, the history in `history.rs`.

use std::io::{self, Write};

use jiff::Timestamp;

use super::opening::{fleet, fleet_once_published, incomplete, not_live};
use super::output;
use super::request::{Request, exit, finish};
use crate::fleet::{Counted, Index};
use crate::session::Session;

/// `fluxfleet get`.
pub async fn get(request: Request) -> u8 {
    if let (Some(options), Some(since)) = (&request.sources.nats, request.since) {
        return super::history::write(options, since, &request).await;
    }
    // Counts are all `--summary` needs: a large bus may be read summarized.
    let sources = crate::session::resolve::Sources {
        counts_suffice: request.summary,
        ..request.sources.clone()
    };
    // Following the bus waits for a collector to publish; a one-off answer does not.
    let opening = if request.watch && sources.nats.is_some() {
        fleet_once_published(&sources).await
    } else {
        fleet(&sources).await
    };
    let mut opened = match opening {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    if let Some(kind) = request.filter.kind {
        // Watch only what was asked for: cheaper, and reaches kinds not watched by default.
        opened.config.engine.kinds = vec![kind];
    }
    // Printed once: listed, not watched. Watching: clusters joining or leaving management
    // clusters show up as they do.
    opened.config.engine.list_only = !request.watch;
    let mut live = Session::start(opened.fleet.sources(&opened.config.engine, request.watch));
    let clean = opened.clean;
    let settled = live.settle(request.timeout).await;
    let now = Timestamp::now();
    let mut out = io::BufWriter::new(io::stdout());
    let written = if request.summary {
        output::summary(&live.index, &request, now, &mut out)
    } else if request.root_causes {
        let window = opened.config.rollout.rules.suspect_window;
        let what = (&request.filter, request.output);
        super::roots::write(&live.index, what, (now, window), &mut out)
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
