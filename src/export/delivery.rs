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
use super::history::{HistoryUnread, each_change, reading};
use super::outcome::{Ended, Misuse, ReadFailed};
use crate::fleet::rollouts::metrics::{Deliveries, RingDelivery, shown as seconds};
use crate::fleet::{Index, ObjectKey};
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::opening::fleet;
use crate::headless::table::{Table, safe};
use crate::headless::writing::write_json;
use crate::session::Session;

#[derive(Serialize)]
struct Json<'a> {
    rings: &'a [RingDelivery],
}

/// Which ring each of `index`'s clusters in scope is in, and how many copies of each thing
/// each ring has.
pub(crate) struct RingScope {
    ring_of: HashMap<String, String>,
    copies: HashMap<(String, ObjectKey), usize>,
}

impl RingScope {
    pub(crate) fn of(
        index: &Index,
        filter: &Filter,
        rollout: &crate::config::RolloutSection,
    ) -> RingScope {
        let mut scope = RingScope {
            ring_of: HashMap::new(),
            copies: HashMap::new(),
        };
        for c in index.clusters().iter().filter(|c| filter.cluster(c)) {
            let ring = rollout.rings.name_of(&c.info);
            scope.ring_of.insert(c.info.name.clone(), ring.to_string());
            for key in c.objects.keys() {
                *scope
                    .copies
                    .entry((ring.to_string(), key.clone()))
                    .or_default() += 1;
            }
        }
        scope
    }

    /// The ring a cluster is in; None out of scope.
    fn ring(&self, cluster: &str) -> Option<String> {
        self.ring_of.get(cluster).cloned()
    }

    /// The ring deliveries the changes given to `add` show, in `filter`'s scope.
    fn finish(
        &self,
        delivering: Deliveries<impl Fn(&str) -> Option<String>>,
        filter: &Filter,
    ) -> Vec<RingDelivery> {
        let count = |ring: &str, key: &ObjectKey| {
            self.copies.get(&(ring.to_string(), key.clone())).copied()
        };
        delivering
            .finish(&count)
            .into_iter()
            .filter(|d| filter.key(&d.key))
            .collect()
    }
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
    edge: &dyn Edge,
) -> Result<Ended, ReadFailed> {
    let Some(options) = &sources.nats else {
        return Err(Misuse::MetricsNeedBus.into());
    };
    if let Err(HistoryUnread::Since(e)) = reading(since, filter) {
        return Err(Misuse::Since(e).into());
    }
    let opened = fleet(sources, edge).await?;
    // The fleet first, for its rings; then the history streams through, not kept.
    let mut config = opened.config;
    config.engine.list_only = true;
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    live.settle(timeout).await;
    let scope = RingScope::of(&live.index, filter, &config.rollout);
    live.shutdown().await;
    // Every object's changes: a source's new artifact is when its revision was first seen.
    let everything = Filter {
        kind: None,
        name: None,
        namespace: None,
        ..filter.clone()
    };
    let mut delivering =
        Deliveries::new(|c: &str| scope.ring(c), config.rollout.rules.suspect_window);
    each_change(options, since, &everything, |c| delivering.add(&c)).await?;
    let rings = scope.finish(delivering, filter);
    let mut out = io::BufWriter::new(io::stdout());
    write(&rings, output, &mut out).and_then(|()| out.flush())?;
    Ok(Ended::Done)
}
