//! `fluxfleet gate RING REVISION [KIND] [NAME]`: a check for a promotion pipeline. Open (exit 0)
//! only when every Kustomization and HelmRelease that runs or tries REVISION anywhere in the
//! scope runs it on every cluster of RING that has it, ready, for at least `--soak`, and no
//! failing root cause names REVISION as its likely suspect; closed (exit 6) otherwise, with
//! every reason. A ring cluster that cannot be seen keeps the gate closed: what is not seen is
//! not known to be healthy. MCP's `gate` tool gives the same verdict.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::outcome::{Ended, ReadFailed};
use super::roots::causes;
use super::{Filter, StatusFilter};
use crate::fleet::content_of;
use crate::fleet::rollouts::Rings;
use crate::fleet::{ClusterEntry, FluxKind, Health, Index, ObjectKey};
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::opening::sorted;
use crate::headless::opening::{fleet, not_live};
use crate::headless::writing::write_json;
use crate::session::Session;
use crate::session::resolve::Sources;

/// What `gate` was asked.
#[derive(Clone, Debug)]
pub struct GateQuery {
    pub sources: Sources,
    pub ring: String,
    pub revision: String,
    /// Kind, name, namespace, workspace and cluster globs (no status).
    pub filter: Filter,
    pub soak: Duration,
    pub output: Output,
    pub timeout: Duration,
}

/// Why a gate is closed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "reason")]
pub enum ClosedBy {
    /// No cluster in scope is in the ring.
    NoRing { rings: Vec<String> },
    /// No Kustomization or HelmRelease in scope runs or tries the revision.
    Unknown,
    /// A ring cluster is not seen: what it runs is not known.
    Unseen { cluster: String, state: String },
    /// A copy runs another revision (or none).
    NotApplied {
        object: String,
        cluster: String,
        runs: Option<String>,
    },
    /// A copy runs it and is not ready.
    NotReady {
        object: String,
        cluster: String,
        health: String,
    },
    /// A copy has run it for less than the soak time (or since a time not known).
    Soaking {
        object: String,
        cluster: String,
        since: Option<Timestamp>,
    },
    /// Copies in the ring that run the revision applied something other than most of them
    /// (another digest of the manifests, other values): `odd` names them.
    Differs {
        object: String,
        odd: Vec<String>,
        copies: usize,
    },
    /// A failing root cause began after the revision, on these ring clusters.
    Suspected {
        object: String,
        clusters: usize,
        evidence: String,
    },
}

impl ClosedBy {
    /// One line for people.
    pub fn line(&self, soak: SignedDuration, now: Timestamp) -> String {
        match self {
            ClosedBy::NoRing { rings } => format!(
                "no cluster in scope is in this ring (rings: {})",
                rings.join(", ")
            ),
            ClosedBy::Unknown => {
                "no Kustomization or HelmRelease in scope runs or tries this revision".into()
            }
            ClosedBy::Unseen { cluster, state } => format!("{cluster} is {state}: not seen"),
            ClosedBy::NotApplied {
                object,
                cluster,
                runs,
            } => format!(
                "{object} on {cluster} runs {}",
                runs.as_deref().unwrap_or("nothing yet")
            ),
            ClosedBy::NotReady {
                object,
                cluster,
                health,
            } => format!("{object} on {cluster} is {health}"),
            ClosedBy::Soaking {
                object,
                cluster,
                since: Some(since),
            } => format!(
                "{object} on {cluster} has run it for {} of {}",
                crate::units::age(Some(*since), now),
                crate::units::format_duration(soak.unsigned_abs())
            ),
            ClosedBy::Soaking {
                object, cluster, ..
            } => format!("{object} on {cluster}: since when it runs it is not known"),
            ClosedBy::Differs {
                object,
                odd,
                copies,
            } => format!(
                "{object}: {} of {copies} copies in the ring applied something else: {}",
                odd.len(),
                odd.join(", ")
            ),
            ClosedBy::Suspected {
                object,
                clusters,
                evidence,
            } => format!(
                "{object} fails on {} of the ring: {evidence}",
                crate::units::count(*clusters, "cluster", "clusters")
            ),
        }
    }
}

/// The gate's verdict.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateVerdict {
    pub ring: String,
    pub revision: String,
    pub open: bool,
    /// The soak time asked, in seconds.
    pub soak_seconds: u64,
    /// The ring's clusters in scope.
    pub clusters: usize,
    /// What carries the revision, `Kind/namespace/name`.
    pub objects: Vec<String>,
    pub closed_by: Vec<ClosedBy>,
}

/// `applied` is `revision`, or starts with it where it names a digest (`main@sha1:28306761`
/// for the whole sha) — by whatever ref each names it (`ring-staging@sha1:…` runs
/// `ring-dev@sha1:…` when the commit is one, and `sha1:28306761` names it alone).
fn same(applied: &str, revision: &str) -> bool {
    let prefix =
        |a: &str, r: &str| a == r || (r.contains(':') && r.len() >= 12 && a.starts_with(r));
    prefix(applied, revision) || prefix(content_of(applied), content_of(revision))
}

fn named(k: &ObjectKey) -> String {
    format!("{}/{}/{}", k.kind, k.namespace, k.name)
}

/// The verdict on `revision` in `ring`, for the index as it is at `now`.
pub fn verdict(
    index: &Index,
    (filter, rings): (&Filter, &Rings),
    (ring, revision): (&str, &str),
    (soak, window): (SignedDuration, SignedDuration),
    now: Timestamp,
) -> GateVerdict {
    let scope: Vec<&ClusterEntry> = sorted(index).filter(|c| filter.cluster(c)).collect();
    let members: Vec<&ClusterEntry> = scope
        .iter()
        .copied()
        .filter(|c| rings.name_of(&c.info) == ring)
        .collect();
    // What carries the revision: anything in scope that runs or tries it.
    let mut carriers: BTreeSet<&ObjectKey> = BTreeSet::new();
    for c in &scope {
        for o in c.objects.values() {
            let deploys = matches!(o.key.kind, FluxKind::Kustomization | FluxKind::HelmRelease);
            let carries = o.rollout.as_ref().is_some_and(|r| {
                [&r.applied, &r.attempted]
                    .into_iter()
                    .flatten()
                    .any(|a| same(a, revision))
            });
            if deploys && carries && filter.object(o) {
                carriers.insert(&o.key);
            }
        }
    }
    let mut closed_by = Vec::new();
    if members.is_empty() {
        let names: BTreeSet<&str> = scope.iter().map(|c| rings.name_of(&c.info)).collect();
        closed_by.push(ClosedBy::NoRing {
            rings: names.into_iter().map(str::to_string).collect(),
        });
    } else if carriers.is_empty() {
        closed_by.push(ClosedBy::Unknown);
    }
    for c in &members {
        let conn = &c.connection;
        if !conn.is_complete() {
            closed_by.push(ClosedBy::Unseen {
                cluster: c.info.name.clone(),
                state: conn.phase.as_str().to_string(),
            });
            continue;
        }
        for key in &carriers {
            let Some(o) = c.objects.get(key) else {
                continue;
            };
            let (object, cluster) = (named(key), c.info.name.clone());
            let rollout = o.rollout.as_deref();
            let runs = rollout.and_then(|r| r.applied.as_deref());
            if !runs.is_some_and(|r| same(r, revision)) {
                closed_by.push(ClosedBy::NotApplied {
                    object,
                    cluster,
                    runs: runs.map(str::to_string),
                });
            } else if o.health != Health::Ready {
                closed_by.push(ClosedBy::NotReady {
                    object,
                    cluster,
                    health: o.health.key().to_string(),
                });
            } else {
                let since = rollout.and_then(|r| r.since).or(o.since);
                if since.is_none_or(|t| now.duration_since(t) < soak) {
                    closed_by.push(ClosedBy::Soaking {
                        object,
                        cluster,
                        since,
                    });
                }
            }
        }
    }
    // Same revision, different result: the ring's copies must have applied one thing.
    let seen = members
        .iter()
        .filter(|c| c.connection.is_complete())
        .copied();
    for d in crate::fleet::drift::drift(seen, |o| carriers.contains(&o.key), now).differ {
        if same(&d.revision, revision) {
            let odd = d.variants.iter().flat_map(|v| &v.clusters);
            closed_by.push(ClosedBy::Differs {
                object: format!("{}/{}/{}", d.kind, d.namespace, d.name),
                odd: odd.map(|c| c.to_string()).collect(),
                copies: d.copies,
            });
        }
    }
    // A failure that began after it, on the ring's clusters.
    let ring_names: BTreeSet<&str> = members.iter().map(|c| c.info.name.as_str()).collect();
    let failing = Filter {
        status: Some(StatusFilter::Failing),
        ..filter.clone()
    };
    for cause in causes(index, &failing, (now, window)) {
        let Some(suspect) = cause
            .suspect
            .as_ref()
            .filter(|s| s.likely && s.how.is_revision())
        else {
            continue;
        };
        let on = cause
            .clusters
            .iter()
            .filter(|c| ring_names.contains(c.cluster))
            .count();
        if on > 0 && same(&suspect.revision, revision) {
            closed_by.push(ClosedBy::Suspected {
                object: format!("{}/{}/{}", cause.kind, cause.namespace, cause.name),
                clusters: on,
                evidence: suspect.evidence.clone(),
            });
        }
    }
    GateVerdict {
        ring: ring.to_string(),
        revision: revision.to_string(),
        open: closed_by.is_empty(),
        soak_seconds: soak.unsigned_abs().as_secs(),
        clusters: members.len(),
        objects: carriers.into_iter().map(named).collect(),
        closed_by,
    }
}

/// Writes the verdict: a line, and a line per reason; or JSON.
pub fn write(
    verdict: &GateVerdict,
    output: Output,
    now: Timestamp,
    out: &mut dyn Write,
) -> io::Result<()> {
    if matches!(output, Output::Json | Output::Ndjson) {
        return write_json(out, verdict);
    }
    let soak = SignedDuration::from_secs(verdict.soak_seconds as i64);
    let state = if verdict.open { "open" } else { "closed" };
    let line = format!(
        "gate {} {}: {state} — {} on {}",
        verdict.ring,
        verdict.revision,
        crate::units::count(verdict.objects.len(), "object", "objects"),
        crate::units::count(verdict.clusters, "cluster", "clusters"),
    );
    writeln!(out, "{}", crate::headless::table::safe(&line))?;
    for reason in &verdict.closed_by {
        writeln!(
            out,
            "  {}",
            crate::headless::table::safe(&reason.line(soak, now))
        )?;
    }
    Ok(())
}

/// `fluxfleet gate`.
pub async fn gate(request: GateQuery, edge: Arc<dyn Edge>) -> Result<Ended, ReadFailed> {
    let edge = edge.as_ref();
    let opened = fleet(&request.sources, edge).await?;
    let mut config = opened.config;
    config.engine.list_only = true;
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    let settled = live.settle(request.timeout).await;
    let now = Timestamp::now();
    let soak = SignedDuration::try_from(request.soak).unwrap_or(SignedDuration::MAX);
    let window = config.rollout.rules.suspect_window;
    let verdict = verdict(
        &live.index,
        (&request.filter, &config.rollout.rings),
        (&request.ring, &request.revision),
        (soak, window),
        now,
    );
    let mut out = io::BufWriter::new(io::stdout());
    let printed = write(&verdict, request.output, now, &mut out).and_then(|()| out.flush());
    drop(out);
    not_live(&live.index, &request.filter, settled, now, edge);
    live.shutdown().await;
    printed?;
    Ok(match verdict.open {
        true => Ended::Done,
        false => Ended::GateClosed,
    })
}
