//! `fluxfleet rollout --metrics --nats URL [--since 7d]`: how each ring delivers, per
//! Kustomization and HelmRelease — lead time to 50 %, 90 % and 100 % of the ring, change failure
//! rate, time to restore — from the collectors' history of the last `--since`
//! (`fleet::rollouts::metrics`). The fleet is read too, for which ring each cluster is in and
//! how many copies each ring has.

use std::collections::HashMap;
use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;

use super::Filter;
use super::history::{Unread, changes};
use super::opening::fleet;
use super::output::write_json;
use super::request::{Output, exit, finish};
use super::table::{Table, safe};
use crate::fleet::rollouts::metrics::{RingDelivery, deliveries, shown as seconds};
use crate::fleet::{Index, ObjectKey};
use crate::session::Session;

#[derive(Serialize)]
struct Json<'a> {
    rings: &'a [RingDelivery],
}

/// The ring deliveries of `index`'s clusters in scope from `history`.
pub(crate) fn of(
    index: &Index,
    filter: &Filter,
    rollout: &crate::config::Rollout,
    history: &[crate::fleet::history::Change],
) -> Vec<RingDelivery> {
    let mut ring_of: HashMap<&str, &str> = HashMap::new();
    let mut copies: HashMap<(&str, &ObjectKey), usize> = HashMap::new();
    for c in index.clusters().iter().filter(|c| filter.cluster(c)) {
        let ring = rollout.rings.name_of(&c.info);
        ring_of.insert(&c.info.name, ring);
        for key in c.objects.keys() {
            *copies.entry((ring, key)).or_default() += 1;
        }
    }
    let ring = |cluster: &str| ring_of.get(cluster).map(|r| r.to_string());
    let count = |ring: &str, key: &ObjectKey| copies.get(&(ring, key)).copied();
    let window = rollout.rules.suspect_window;
    deliveries(history, &ring, &count, window)
        .into_iter()
        .filter(|d| filter.key(&d.key))
        .collect()
}

/// Writes the deliveries as a table or JSON.
pub(crate) fn write(rings: &[RingDelivery], output: Output, out: &mut dyn Write) -> io::Result<()> {
    if matches!(output, Output::Json | Output::Ndjson) {
        return write_json(out, &Json { rings });
    }
    let mut t = Table::new(vec![
        "RING",
        "KIND",
        "NAMESPACE",
        "NAME",
        "CLUSTERS",
        "REVISIONS",
        "LEAD 50%",
        "LEAD 90%",
        "LEAD 100%",
        "FAILURE RATE",
        "RESTORE",
    ]);
    for d in rings {
        t.row(vec![
            safe(&d.ring).into_owned(),
            d.key.kind.to_string(),
            safe(&d.key.namespace).into_owned(),
            safe(&d.key.name).into_owned(),
            d.clusters.to_string(),
            d.revisions.len().to_string(),
            seconds(d.lead_seconds[0]),
            seconds(d.lead_seconds[1]),
            seconds(d.lead_seconds[2]),
            d.change_failure_rate
                .map_or("-".into(), |r| format!("{:.0}%", r * 100.0)),
            seconds(d.restore_seconds),
        ]);
    }
    if t.is_empty() {
        return writeln!(out, "no revision reached a ring in the history read");
    }
    t.write(out)
}

/// `fluxfleet rollout --metrics`: the scope of `filter`, read from `sources` (the collectors),
/// written as `output`.
pub(crate) async fn metrics(
    sources: &crate::session::resolve::Sources,
    filter: &Filter,
    (output, timeout): (Output, Duration),
    since: Duration,
) -> u8 {
    let Some(options) = &sources.nats else {
        eprintln!(
            "error: ring metrics come from the collectors' history: read the fleet with --nats URL"
        );
        return exit::USAGE;
    };
    let opened = match fleet(sources).await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    // Every object's changes: a source's new artifact is when its revision was first seen.
    let everything = Filter {
        kind: None,
        name: None,
        namespace: None,
        ..filter.clone()
    };
    let history = match changes(options, since, &everything).await {
        Ok(history) => history,
        Err(Unread::Since(e)) => {
            eprintln!("error: --{e}");
            return exit::USAGE;
        }
        Err(Unread::Bus(e)) => {
            eprintln!("error: {}", safe(&e.to_string()));
            return exit::ERROR;
        }
    };
    let config = opened.config;
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    live.settle(timeout).await;
    let rings = of(&live.index, filter, &config.rollout, &history);
    live.shutdown().await;
    let mut out = io::BufWriter::new(io::stdout());
    match finish(write(&rings, output, &mut out).and_then(|()| out.flush())) {
        Ok(()) => exit::OK,
        Err(code) => code,
    }
}
