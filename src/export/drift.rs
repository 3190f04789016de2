//! `fluxfleet drift [KIND] [NAME]`: same revision, different result — the copies of each
//! Kustomization and HelmRelease on one revision that applied something other than most of
//! them, with their clusters, and the HelmReleases drifted live. Exit 8 when any is found.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::Filter;
use super::outcome::{Ended, Misuse, ReadFailed};
use crate::fleet::drift::{Drift, drift};
use crate::fleet::{FluxKind, Index};
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::opening::{fleet, incomplete, not_live};
use crate::headless::table::{Table, safe};
use crate::headless::writing;
use crate::session::Session;
use crate::session::corrections;
use crate::session::drift as asked;
use crate::session::evidence::Gather;
use crate::session::resolve::Sources;
use crate::units::{format_duration, span, truncate_hex};

/// What `drift` was asked.
#[derive(Clone, Debug)]
pub struct DriftQuery {
    pub sources: Sources,
    /// Kind (Kustomization or HelmRelease), name, namespace, workspace and cluster globs.
    pub filter: Filter,
    pub output: Output,
    pub timeout: Duration,
}

/// `fluxfleet drift`.
pub async fn drift_of(request: DriftQuery, edge: Arc<dyn Edge>) -> Result<Ended, ReadFailed> {
    let edge = edge.as_ref();
    let filter = &request.filter;
    if let Some(refused) = refused(filter) {
        return Err(refused.into());
    }
    let opened = fleet(&request.sources, edge).await?;
    let (config, clean) = (opened.config, opened.clean);
    let mut engine = config.engine.clone();
    // Printed once: listed, not watched — unless what is asked is read after over the clusters'
    // connections: one object's copies, or fleet-wide the Kustomizations' events (kept open,
    // a connection is not made again for them).
    let reads_after = asked::is_asked(filter).is_some()
        || filter.kind.is_none_or(|k| k == FluxKind::Kustomization);
    engine.list_only = !reads_after;
    for kind in [FluxKind::Kustomization, FluxKind::HelmRelease] {
        if !engine.kinds.contains(&kind) {
            engine.kinds.push(kind);
        }
    }
    let mut live = Session::start(opened.fleet.sources(&engine, false));
    let settled = live.settle(request.timeout).await;
    let now = Timestamp::now();
    let how = Gather {
        timeout: request.timeout.min(Gather::default().timeout),
        ..Gather::default()
    };
    let found = match asked::plan(&live.index, filter) {
        Some(plan) => asked::asked(&plan, &live.reader(), now, (how, engine.warm_clusters)).await,
        None => {
            // Fleet-wide, the Kustomizations' events too: a controller that keeps correcting.
            let mut found = of(&live.index, filter, now);
            let wanted = corrections::wanted(&live.index, filter);
            corrections::corrected(&live.reader(), wanted, how, &mut found).await;
            found
        }
    };
    let mut out = io::BufWriter::new(io::stdout());
    let printed = write(&found, request.output, &mut out).and_then(|()| out.flush());
    drop(out);
    not_live(&live.index, filter, settled, now, edge);
    let incomplete = incomplete(&live.index, filter);
    live.shutdown().await;
    printed?;
    // Drift found is drift, whatever was not seen; none found proves nothing where clusters
    // were not seen.
    Ok(match found.is_clean() {
        false => Ended::Drifted,
        true => {
            let unread = found.reads.as_ref().is_some_and(|r| !r.not_read.is_empty());
            Ended::written(clean, incomplete || unread)
        }
    })
}

/// Why `filter` cannot be asked for drift: it names a kind that applies nothing to compare.
pub fn refused(filter: &Filter) -> Option<Misuse> {
    filter
        .kind
        .filter(|k| !matches!(k, FluxKind::Kustomization | FluxKind::HelmRelease))
        .map(Misuse::NoDrift)
}

/// Drift among the objects `filter` selects (its status aside), and how they reconcile by
/// `now`.
pub fn of(index: &Index, filter: &Filter, now: Timestamp) -> Drift {
    let clusters = index
        .entries()
        .map(|(_, c)| c)
        .filter(|c| filter.cluster(c));
    drift(clusters, |o| filter.key(&o.key), now)
}

/// The table: one row per variant of an object on a revision, the norm first; then the live
/// drift. JSON: the whole [`Drift`].
pub fn write(found: &Drift, output: Output, out: &mut dyn Write) -> io::Result<()> {
    if output != Output::Table {
        return writing::write_json(out, found);
    }
    if found.differ.is_empty() {
        writeln!(
            out,
            "every copy on a revision applied the same ({} compared, {} not recorded)",
            found.agree, found.unrecorded
        )?;
    } else {
        let mut t = Table::new(vec![
            "KIND",
            "NAMESPACE",
            "NAME",
            "REVISION",
            "DIGEST",
            "COPIES",
            "CLUSTERS",
        ]);
        for d in &found.differ {
            let revision = truncate_hex(&d.revision);
            let norm = (
                &d.norm.digest,
                d.norm.copies,
                format!("the norm ({} of {})", d.norm.copies, d.copies),
            );
            let others = d.variants.iter().map(|v| {
                let names: Vec<&str> = v.clusters.iter().map(|c| &**c).collect();
                (&v.digest, v.clusters.len(), names.join(","))
            });
            for (digest, copies, clusters) in std::iter::once(norm).chain(others) {
                t.row(vec![
                    d.kind.to_string(),
                    safe(&d.namespace).into_owned(),
                    safe(&d.name).into_owned(),
                    safe(&revision).into_owned(),
                    safe(&truncate_hex(digest)).into_owned(),
                    copies.to_string(),
                    safe(&clusters).into_owned(),
                ]);
            }
        }
        t.write(out)?;
        for d in &found.differ {
            let said = format!("{} {}/{}: {}", d.kind, d.namespace, d.name, d.said());
            writeln!(out, "{}", safe(&said))?;
            for b in d.variants.iter().filter_map(|v| v.objects.as_ref()) {
                let said = format!(
                    "  {} (beside {}, of the norm): {}",
                    b.read_on,
                    b.norm_read_on,
                    b.said()
                );
                writeln!(out, "{}", safe(&said))?;
            }
        }
    }
    if !found.live.is_empty() {
        writeln!(out)?;
        let mut t = Table::new(vec![
            "LIVE DRIFT",
            "NAMESPACE",
            "NAME",
            "CLUSTER",
            "MESSAGE",
        ]);
        for l in &found.live {
            t.row(vec![
                l.kind.to_string(),
                safe(&l.namespace).into_owned(),
                safe(&l.name).into_owned(),
                safe(&l.cluster).into_owned(),
                safe(&l.message).into_owned(),
            ]);
        }
        t.write(out)?;
    }
    if !found.reconciles.is_empty() {
        writeln!(out)?;
        reconciles(found, out)?;
    }
    if let Some(r) = &found.reads {
        writeln!(out)?;
        writeln!(out, "{}", r.said())?;
        for n in &r.not_read {
            let said = format!("not read on {}: {}", n.cluster, n.why);
            writeln!(out, "{}", safe(&said))?;
        }
    }
    Ok(())
}

/// How reconciles behave: one row per object, those with odd copies first; the odd copies
/// named after the table.
fn reconciles(found: &Drift, out: &mut dyn Write) -> io::Result<()> {
    let took = |ms: u32| format_duration(Duration::from_millis(u64::from(ms)));
    let mut t = Table::new(vec![
        "RECONCILES",
        "NAMESPACE",
        "NAME",
        "COPIES",
        "MEDIAN",
        "SLOWEST",
        "SLOW",
        "FLAPPING",
        "STUCK",
    ]);
    for r in &found.reconciles {
        let slowest = r.slowest.first().map_or("-".to_string(), |s| {
            format!("{} ({})", took(s.took_ms), s.cluster)
        });
        t.row(vec![
            r.kind.to_string(),
            safe(&r.namespace).into_owned(),
            safe(&r.name).into_owned(),
            r.copies.to_string(),
            r.median_ms.map_or("-".to_string(), took),
            safe(&slowest).into_owned(),
            r.slow.len().to_string(),
            r.flapping.len().to_string(),
            r.stuck.len().to_string(),
        ]);
    }
    t.write(out)?;
    for r in found.reconciles.iter().filter(|r| r.is_odd()) {
        let object = format!("{} {}/{}", r.kind, r.namespace, r.name);
        if !r.slow.is_empty() {
            let names: Vec<String> = r
                .slow
                .iter()
                .map(|s| format!("{} ({})", s.cluster, took(s.took_ms)))
                .collect();
            let median = r.median_ms.map_or("-".to_string(), took);
            let said = format!("{object}: slow on {} (median {median})", names.join(", "));
            writeln!(out, "{}", safe(&said))?;
        }
        if !r.flapping.is_empty() {
            let names: Vec<&str> = r.flapping.iter().map(|c| &**c).collect();
            let said = format!(
                "{object}: flapping on {} (a success between two failures)",
                names.join(", ")
            );
            writeln!(out, "{}", safe(&said))?;
        }
        if !r.stuck.is_empty() {
            let names: Vec<String> = r
                .stuck
                .iter()
                .map(|s| format!("{} ({} ago)", s.cluster, span(s.since_s)))
                .collect();
            let said = format!(
                "{object}: not reconciled within twice its interval on {}",
                names.join(", ")
            );
            writeln!(out, "{}", safe(&said))?;
        }
    }
    Ok(())
}
