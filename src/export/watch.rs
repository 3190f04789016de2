//! `fluxfleet get --watch`: every change after the first output, as NDJSON lines.

use std::io::{self, Write};

use super::Filter;
use tokio_util::sync::CancellationToken;

use super::outcome::{Ended, ReadFailed};
use super::output::{write_cluster_line, write_object_line};
use super::query::Query;
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterEntry, ClusterId, Counted, FluxSummary, Index};
use crate::session::Session;

/// Events taken at once: what has arrived is written with one system call, not one a line.
const BATCH: usize = 256;

/// `--watch`: every change after the initial output, as NDJSON, until interrupted.
pub(super) async fn watch(
    live: &mut Session,
    request: &Query,
    stop: &CancellationToken,
) -> Result<Ended, ReadFailed> {
    let (mut events, mut text) = (Vec::with_capacity(BATCH), Vec::new());
    loop {
        let taken = tokio::select! {
            _ = stop.cancelled() => return Ok(Ended::Stopped),
            taken = live.next_events(&mut events, BATCH) => taken,
        };
        if taken == 0 {
            return Ok(Ended::Done);
        }
        text.clear();
        let written = events
            .drain(..)
            .try_for_each(|event| written(&mut live.index, &request.filter, event, &mut text));
        let mut out = io::stdout().lock();
        written.and_then(|()| out.write_all(&text).and_then(|()| out.flush()))?;
    }
}

/// Applies `event` to `index`, writing the lines it makes into `out`.
fn written(index: &mut Index, filter: &Filter, event: Event, out: &mut Vec<u8>) -> io::Result<()> {
    let lines = changes(index, filter, &event);
    // Looked up before applying: a cluster retiring leaves the index's keys.
    let cluster = index.id_of(&event.cluster);
    index.apply(event);
    match cluster {
        Some(cluster) => lines.iter().try_for_each(|l| l.write(index, cluster, out)),
        None => Ok(()),
    }
}

/// What one event changes, in watch terms, computed before it is applied.
enum Changed {
    Object(&'static str, Box<FluxSummary>),
    Cluster,
}

impl Changed {
    fn write(&self, index: &Index, id: ClusterId, out: &mut dyn Write) -> io::Result<()> {
        let Some(c) = index.cluster(id) else {
            return Ok(());
        };
        match self {
            Changed::Object(event, s) => write_object_line(out, c, s, Some(event)),
            Changed::Cluster => write_cluster_line(out, c, Some("MODIFIED")),
        }
    }
}

fn changes(index: &Index, filter: &Filter, event: &Event) -> Vec<Changed> {
    let Some(cluster) = index.id_of(&event.cluster).and_then(|id| index.cluster(id)) else {
        return Vec::new();
    };
    if !filter.cluster(cluster) {
        return Vec::new();
    }
    let mut out = Vec::new();
    // An object entering or leaving the selection (a status filter) is ADDED or DELETED.
    let upsert = |out: &mut Vec<Changed>, new: &FluxSummary| {
        // As the index will keep it: what the previous summary knew carried (since when it is
        // not ready, across the controller's retries).
        let previous = cluster.objects.get(&new.key);
        let mut new = new.clone();
        if let Some(previous) = previous {
            new.carry(previous);
        }
        let new = &new;
        let old = previous.filter(|s| filter.object(s));
        match (old, filter.object(new)) {
            (None, true) => out.push(Changed::Object("ADDED", Box::new(new.clone()))),
            (Some(old), true) if old != new => {
                out.push(Changed::Object("MODIFIED", Box::new(new.clone())))
            }
            (Some(old), false) => out.push(Changed::Object("DELETED", Box::new(old.clone()))),
            _ => {}
        }
    };
    match &event.change {
        Change::Connection(c) => {
            if c.phase != cluster.connection.phase || c.error != cluster.connection.error {
                out.push(Changed::Cluster);
            }
        }
        Change::Applied(s) => upsert(&mut out, s),
        Change::Deleted(key) => {
            if let Some(old) = cluster.objects.get(key).filter(|s| filter.object(s)) {
                out.push(Changed::Object("DELETED", Box::new(old.clone())));
            }
        }
        Change::Replaced(kind, objects) => {
            let listed = |s: &FluxSummary| s.key.kind == *kind;
            replaced(&mut out, (cluster, filter), objects, &listed, &upsert);
        }
        // Held by a summarized cluster: what it holds replaced, of every kind.
        Change::Held(objects) if cluster.counted == Counted::Report => {
            replaced(&mut out, (cluster, filter), objects, &|_| true, &upsert);
        }
        Change::Held(_) => {}
        // A cluster leaving: its objects are deleted, then its state says why.
        Change::Retired => {
            for old in cluster.objects.values().filter(|s| filter.object(s)) {
                out.push(Changed::Object("DELETED", Box::new(old.clone())));
            }
        }
        // A new cluster: its state line follows with its first Connection change.
        Change::Added(_) => {}
        // Its counts come from elsewhere now: its state line says so.
        Change::Counted(counted) => {
            if *counted != cluster.counted {
                out.push(Changed::Cluster);
            }
        }
        Change::Recounted(counts, _) => {
            if cluster.report.as_ref().is_none_or(|r| r.counts != *counts) {
                out.push(Changed::Cluster);
            }
        }
        // A report read again says something new only when more than its time changed.
        Change::Report(new) => {
            let same = match (&cluster.report, new) {
                (Some(old), Some(new)) => old.same_as(new),
                (old, new) => old.is_none() && new.is_none(),
            };
            if !same {
                out.push(Changed::Cluster);
            }
        }
    }
    out
}

/// The objects `listed` selects replaced by `objects`: each one added or modified, the others
/// deleted.
fn replaced(
    out: &mut Vec<Changed>,
    (cluster, filter): (&ClusterEntry, &Filter),
    objects: &[FluxSummary],
    listed: &dyn Fn(&FluxSummary) -> bool,
    upsert: &dyn Fn(&mut Vec<Changed>, &FluxSummary),
) {
    for s in objects.iter().filter(|s| listed(s)) {
        upsert(out, s);
    }
    let kept: std::collections::HashSet<_> = objects.iter().map(|s| &s.key).collect();
    for old in cluster
        .objects
        .values()
        .filter(|s| listed(s) && !kept.contains(&s.key) && filter.object(s))
    {
        out.push(Changed::Object("DELETED", Box::new(old.clone())));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::fleet::{ClusterInfo, ClusterKey, FluxKind};
    use serde_json::{Value, json};

    /// A Kustomization failing as kustomize-controller retries it: Ready=False, its time
    /// rewritten at each attempt (seen on the real controller, docs/real-flux.md).
    fn attempt(at: &str) -> Event {
        let object = json!({"metadata": {"name": "app", "namespace": "apps", "generation": 2},
            "spec": {"sourceRef": {"kind": "GitRepository", "name": "fleet"}},
            "status": {"observedGeneration": 1, "conditions": [{"type": "Ready",
                "status": "False", "reason": "ArtifactFailed", "lastTransitionTime": at}]}});
        Event {
            cluster: ClusterKey::new("c"),
            at: at.parse().unwrap(),
            change: Change::Applied(FluxSummary::of(FluxKind::Kustomization, &object).unwrap()),
        }
    }

    /// Each line `--watch` writes says since when the object is failing as the index keeps it:
    /// its first failure, not the last retry.
    #[test]
    fn a_watched_failure_keeps_its_since_across_retries() {
        let mut index = Index::new();
        index.add_cluster(ClusterInfo::new("c", "w"));
        let filter = Filter::default();
        let mut out = Vec::new();
        for at in [
            "2026-12-04T23:48:51Z",
            "2026-12-04T23:49:06Z",
            "2026-12-04T23:49:21Z",
        ] {
            written(&mut index, &filter, attempt(at), &mut out).unwrap();
        }
        let since: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["lastTransitionTime"].clone())
            .collect();
        assert_eq!(since, vec![json!("2026-12-04T23:48:51Z"); 3]);
    }
}
