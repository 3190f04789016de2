//! `fluxfleet get`: the fleet opened, waited for, and written. What is printed lives in
//! `output.rs`, the `--watch` stream in `watch.rs`, the history in `history.rs`.

use std::io::{self, Write};
use std::sync::Arc;

use jiff::Timestamp;
use tokio_util::sync::CancellationToken;

use super::outcome::{Ended, ReadFailed};
use super::output;
use super::query::Query;
use crate::fleet::{Counted, FluxKind, Index};
use crate::headless::opening::{fleet, fleet_once_published, incomplete, not_live};
use crate::headless::{Edge, Said};
use crate::session::Session;

/// `fluxfleet get`; with `--watch`, until `stop` is cancelled.
pub async fn get(
    request: Query,
    edge: Arc<dyn Edge>,
    stop: CancellationToken,
) -> Result<Ended, ReadFailed> {
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
    opened.config.engine.kinds = kinds_read(&request, &opened.config.engine.kinds);
    // Printed once: listed, not watched. Watching: clusters joining or leaving management
    // clusters show up as they do.
    opened.config.engine.list_only = !request.watch;
    let mut live = Session::start(opened.fleet.sources(&opened.config.engine, request.watch));
    let how = (&opened.config, opened.clean);
    let ended = answer(&mut live, &request, how, (edge, &stop)).await;
    live.shutdown().await;
    ended
}

/// The kinds `request` reads: the one it names (cheaper, and reaching kinds not watched by
/// default), every kind Flux defines for `get all` (each cluster is asked for those its API
/// serves), else the `configured` ones.
fn kinds_read(request: &Query, configured: &[FluxKind]) -> Vec<FluxKind> {
    match request.filter.kind {
        Some(kind) => vec![kind],
        None if request.every_kind => FluxKind::ALL.to_vec(),
        None => configured.to_vec(),
    }
}

/// The answer written once the fleet has answered, then followed with `--watch`.
async fn answer(
    live: &mut Session,
    request: &Query,
    (config, clean): (&crate::config::Config, bool),
    (edge, stop): (&dyn Edge, &CancellationToken),
) -> Result<Ended, ReadFailed> {
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
                .any(|s| filter.object(s) && fail_on.selects(s)),
            // Counted by its report: what the report tells of the cluster as a whole.
            Counted::Report => c.health.iter().any(|(h, _)| fail_on.matches(h)),
        });
        if found {
            return Ended::FailOn;
        }
    }
    Ended::Done
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::headless::Output;

    fn query(kind: Option<FluxKind>, every_kind: bool) -> Query {
        Query {
            sources: Default::default(),
            filter: crate::fleet::filter::Filter {
                kind,
                ..Default::default()
            },
            every_kind,
            output: Output::Table,
            summary: false,
            root_causes: false,
            timeout: Duration::from_secs(1),
            watch: false,
            fail_on: None,
            since: None,
        }
    }

    /// `flux get all` lists ExternalArtifacts, Alerts and the image kinds beside the watched
    /// kinds; `get all` reads them too, while `get` alone reads what is configured.
    #[test]
    fn get_all_reads_every_flux_kind_and_get_alone_the_configured_ones() {
        let configured = [FluxKind::GitRepository, FluxKind::Kustomization];
        let all = kinds_read(&query(None, true), &configured);
        for kind in [
            FluxKind::ExternalArtifact,
            FluxKind::ArtifactGenerator,
            FluxKind::Alert,
            FluxKind::Provider,
            FluxKind::Receiver,
            FluxKind::ImagePolicy,
        ] {
            assert!(all.contains(&kind), "{kind} not read by get all");
        }
        assert_eq!(kinds_read(&query(None, false), &configured), configured);
        assert_eq!(
            kinds_read(&query(Some(FluxKind::ExternalArtifact), false), &configured),
            [FluxKind::ExternalArtifact]
        );
    }
}
