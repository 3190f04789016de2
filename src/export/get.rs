//! `fluxfleet get` and `fluxfleet inventory`.

use std::io::{self, Write};
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;

use super::live::Live;
use super::table::{Table, age, ready_and_message, revision};
use super::{Filter, Status, view};
use crate::config::{self, Config};
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterEntry, FluxKind, FluxSummary, Index, Phase};
use crate::inventory::{self, Inventory};

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

/// Where the fleet comes from (shared by every command that needs one).
#[derive(Clone, Debug, Default)]
pub struct Sources {
    pub kubeconfigs: Vec<std::path::PathBuf>,
    pub dirs: Vec<std::path::PathBuf>,
    pub contexts: Vec<String>,
    pub config: Option<std::path::PathBuf>,
}

/// What `get` was asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub sources: Sources,
    pub filter: Filter,
    pub output: Output,
    pub summary: bool,
    pub timeout: Duration,
    pub watch: bool,
    pub fail_on: Option<Status>,
}

/// Loads the config and the inventory, reporting every warning and problem on stderr.
pub fn resolve(sources: &Sources) -> (Config, Inventory, bool) {
    let path = sources.config.clone().or_else(config::default_path);
    let (config, warnings) = Config::load(path.as_deref(), sources.config.is_some());
    let mut clean = warnings.is_empty();
    for w in &warnings {
        eprintln!("warning: config {w}");
    }
    let request = inventory::Request::from_env(
        sources.kubeconfigs.clone(),
        sources.dirs.clone(),
        sources.contexts.clone(),
    );
    let inventory = inventory::load(&request, &config);
    for p in &inventory.problems {
        clean = false;
        eprintln!("warning: {p}");
    }
    (config, inventory, clean)
}

/// `fluxfleet inventory`: the resolved fleet, without connecting anywhere.
pub fn inventory(sources: &Sources, output: Output) -> u8 {
    let (_, inventory, clean) = resolve(sources);
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
        Output::Json => write_json(&mut out, &inventory),
        Output::Ndjson => inventory
            .clusters
            .iter()
            .try_for_each(|c| write_line(&mut out, c)),
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
    let (mut config, inventory, clean) = resolve(&request.sources);
    if inventory.clusters.is_empty() {
        eprintln!("error: no clusters to watch (see the warnings above)");
        return exit::INVENTORY;
    }
    if let Some(kind) = request.filter.kind {
        // Watch only what was asked for: cheaper, and reaches kinds not watched by default.
        config.engine.kinds = vec![kind];
    }
    let mut live = Live::start(&inventory, &config.engine);
    let settled = live.settle(request.timeout).await;
    let now = Timestamp::now();
    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = if request.summary {
        summary(&live.index, &request, now, &mut out)
    } else {
        objects(&live.index, &request, &mut out)
    };
    if let Err(code) = finish(written.and_then(|()| out.flush())) {
        return code;
    }
    drop(out);
    not_live(&live.index, &request.filter, settled, now);
    if request.watch {
        let code = watch(&mut live, &request).await;
        live.shutdown().await;
        return code;
    }
    let code = outcome(&live.index, &request, clean);
    live.shutdown().await;
    code
}

fn outcome(index: &Index, request: &Request, clean: bool) -> u8 {
    let filter = &request.filter;
    let clusters = || index.clusters().iter().filter(|c| filter.cluster(c));
    if !clean {
        return exit::INVENTORY;
    }
    if clusters().any(|c| {
        c.connection.phase != Phase::Live && c.connection.phase != Phase::FluxNotInstalled
            || !c.connection.forbidden.is_empty()
    }) {
        return exit::UNREACHABLE;
    }
    if let Some(fail_on) = request.fail_on {
        let found = clusters().any(|c| {
            c.objects
                .values()
                .any(|s| filter.object(s) && fail_on.matches(s.health))
        });
        if found {
            return exit::FAIL_ON;
        }
    }
    exit::OK
}

/// Clusters in the scope that are not live, on stderr: never silently missing from the output.
fn not_live(index: &Index, filter: &Filter, settled: bool, now: Timestamp) {
    let mut t = Table::new(vec!["WORKSPACE", "CLUSTER", "STATE", "RETRY", "ERROR"]);
    for c in sorted(index).filter(|c| filter.cluster(c)) {
        let conn = &c.connection;
        if conn.phase == Phase::Live && conn.forbidden.is_empty() {
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

/// Clusters by workspace, then name.
fn sorted(index: &Index) -> impl Iterator<Item = &ClusterEntry> {
    let mut clusters: Vec<&ClusterEntry> = index.clusters().iter().collect();
    clusters
        .sort_by(|a, b| (&a.info.workspace, &a.info.name).cmp(&(&b.info.workspace, &b.info.name)));
    clusters.into_iter()
}

fn selected<'a>(
    index: &'a Index,
    filter: &'a Filter,
) -> impl Iterator<Item = (&'a ClusterEntry, &'a FluxSummary)> {
    sorted(index)
        .filter(|c| filter.cluster(c))
        .flat_map(move |c| {
            c.objects
                .values()
                .filter(|s| filter.object(s))
                .map(move |s| (c, s))
        })
}

#[derive(Serialize)]
struct GetJson<'a> {
    clusters: Vec<view::Cluster<'a>>,
    objects: Vec<view::Object<'a>>,
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    fleet: view::Fleet<'a>,
    workspaces: Vec<view::Workspace<'a>>,
    clusters: Vec<view::Cluster<'a>>,
}

#[derive(Serialize)]
struct Line<T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<&'static str>,
    #[serde(flatten)]
    item: T,
}

fn objects(index: &Index, request: &Request, out: &mut dyn Write) -> io::Result<()> {
    let filter = &request.filter;
    match request.output {
        Output::Json => {
            let doc = GetJson {
                clusters: sorted(index)
                    .filter(|c| filter.cluster(c))
                    .map(view::Cluster::new)
                    .collect(),
                objects: selected(index, filter)
                    .map(|(c, s)| view::Object::new(c, s))
                    .collect(),
            };
            write_json(out, &doc)
        }
        Output::Ndjson => {
            for c in sorted(index).filter(|c| filter.cluster(c)) {
                if c.connection.phase != Phase::Live {
                    write_cluster_line(out, c, None)?;
                }
            }
            for (c, s) in selected(index, filter) {
                write_object_line(out, c, s, None)?;
            }
            Ok(())
        }
        Output::Table => {
            let kinds: std::collections::BTreeSet<FluxKind> =
                selected(index, filter).map(|(_, s)| s.key.kind).collect();
            let qualified = kinds.len() > 1;
            let mut t = Table::new(vec![
                "WORKSPACE",
                "CLUSTER",
                "NAMESPACE",
                "NAME",
                "REVISION",
                "SUSPENDED",
                "READY",
                "MESSAGE",
            ]);
            for (c, s) in selected(index, filter) {
                let (ready, message) = ready_and_message(s);
                let name = if qualified {
                    format!(
                        "{}/{}",
                        s.key.kind.as_str().to_ascii_lowercase(),
                        s.key.name
                    )
                } else {
                    s.key.name.to_string()
                };
                t.row(vec![
                    c.info.workspace.clone(),
                    c.info.name.clone(),
                    s.key.namespace.to_string(),
                    name,
                    revision(s),
                    if s.suspended { "True" } else { "False" }.into(),
                    ready.into(),
                    super::table::truncate_hex(&message),
                ]);
            }
            if t.is_empty() {
                eprintln!("no Flux objects found");
                return Ok(());
            }
            t.write(out)
        }
    }
}

fn summary(
    index: &Index,
    request: &Request,
    now: Timestamp,
    out: &mut dyn Write,
) -> io::Result<()> {
    let filter = &request.filter;
    let clusters: Vec<&ClusterEntry> = sorted(index).filter(|c| filter.cluster(c)).collect();
    match request.output {
        Output::Json => {
            let doc = SummaryJson {
                fleet: view::Fleet::new(index),
                workspaces: index
                    .workspaces()
                    .iter()
                    .filter(|w| filter.workspace.as_ref().is_none_or(|n| *n == w.name))
                    .map(view::Workspace::new)
                    .collect(),
                clusters: clusters.iter().map(|c| view::Cluster::new(c)).collect(),
            };
            write_json(out, &doc)
        }
        Output::Ndjson => {
            for w in index
                .workspaces()
                .iter()
                .filter(|w| filter.workspace.as_ref().is_none_or(|n| *n == w.name))
            {
                write_line(
                    out,
                    &Line {
                        kind: "workspace",
                        event: None,
                        item: view::Workspace::new(w),
                    },
                )?;
            }
            for c in clusters {
                write_cluster_line(out, c, None)?;
            }
            Ok(())
        }
        Output::Table => {
            let mut ws = Table::new(vec![
                "WORKSPACE",
                "CLUSTERS",
                "LIVE",
                "NOT-LIVE",
                "OBJECTS",
                "READY",
                "FAILING",
                "SUSPENDED",
                "PROGRESSING",
                "OTHER",
            ]);
            let mut workspaces: Vec<_> = index
                .workspaces()
                .iter()
                .filter(|w| filter.workspace.as_ref().is_none_or(|n| *n == w.name))
                .collect();
            workspaces.sort_by(|a, b| a.name.cmp(&b.name));
            for w in workspaces {
                let h = &w.health;
                let live = w.phases.get(Phase::Live);
                let other = h.total()
                    - h.get(crate::fleet::Health::Ready)
                    - h.failing()
                    - h.get(crate::fleet::Health::Suspended)
                    - h.get(crate::fleet::Health::Progressing);
                ws.row(vec![
                    w.name.clone(),
                    w.clusters.len().to_string(),
                    live.to_string(),
                    (w.clusters.len() as u32 - live).to_string(),
                    h.total().to_string(),
                    h.get(crate::fleet::Health::Ready).to_string(),
                    h.failing().to_string(),
                    h.get(crate::fleet::Health::Suspended).to_string(),
                    h.get(crate::fleet::Health::Progressing).to_string(),
                    other.to_string(),
                ]);
            }
            ws.write(out)?;
            writeln!(out)?;
            let mut cs = Table::new(vec![
                "WORKSPACE",
                "CLUSTER",
                "STATE",
                "LAST EVENT",
                "OBJECTS",
                "READY",
                "FAILING",
                "WORST",
            ]);
            for c in clusters {
                let h = &c.health;
                cs.row(vec![
                    c.info.workspace.clone(),
                    c.info.name.clone(),
                    c.connection.phase.to_string(),
                    age(c.last_event, now),
                    h.total().to_string(),
                    h.get(crate::fleet::Health::Ready).to_string(),
                    h.failing().to_string(),
                    h.worst().map(|w| w.as_str()).unwrap_or("-").to_string(),
                ]);
            }
            cs.write(out)
        }
    }
}

fn write_json(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::other)?;
    writeln!(out)
}

fn write_line(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::other)?;
    writeln!(out)
}

fn write_object_line(
    out: &mut dyn Write,
    c: &ClusterEntry,
    s: &FluxSummary,
    event: Option<&'static str>,
) -> io::Result<()> {
    write_line(
        out,
        &Line {
            kind: "object",
            event,
            item: view::Object::new(c, s),
        },
    )
}

fn write_cluster_line(
    out: &mut dyn Write,
    c: &ClusterEntry,
    event: Option<&'static str>,
) -> io::Result<()> {
    write_line(
        out,
        &Line {
            kind: "cluster",
            event,
            item: view::Cluster::new(c),
        },
    )
}

/// A closed pipe (`| head`) ends the output quietly; other write errors are errors.
fn finish(result: io::Result<()>) -> Result<(), u8> {
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(exit::OK),
        Err(e) => {
            eprintln!("error: cannot write the output: {e}");
            Err(exit::ERROR)
        }
    }
}

/// `--watch`: every change after the initial output, as NDJSON, until interrupted.
async fn watch(live: &mut Live, request: &Request) -> u8 {
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        let event = tokio::select! {
            _ = &mut interrupted => return exit::OK,
            event = live.next_event() => event,
        };
        let Some(event) = event else {
            return exit::OK;
        };
        let lines = changes(&live.index, &request.filter, &event);
        live.index.apply(event.clone());
        let mut out = io::stdout().lock();
        let written = lines
            .iter()
            .try_for_each(|l| l.write(&live.index, event.cluster, &mut out));
        if let Err(code) = finish(written.and_then(|()| out.flush())) {
            return code;
        }
    }
}

/// What one event changes, in watch terms, computed before it is applied.
enum Changed {
    Object(&'static str, Box<FluxSummary>),
    Cluster,
}

impl Changed {
    fn write(
        &self,
        index: &Index,
        id: crate::fleet::ClusterId,
        out: &mut dyn Write,
    ) -> io::Result<()> {
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
    let Some(cluster) = index.cluster(event.cluster) else {
        return Vec::new();
    };
    if !filter.cluster(cluster) {
        return Vec::new();
    }
    let mut out = Vec::new();
    // An object entering or leaving the selection (a status filter) is ADDED or DELETED.
    let upsert = |out: &mut Vec<Changed>, new: &FluxSummary| {
        let old = cluster.objects.get(&new.key).filter(|s| filter.object(s));
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
            for s in objects.iter().filter(|s| s.key.kind == *kind) {
                upsert(&mut out, s);
            }
            let kept: std::collections::HashSet<_> = objects.iter().map(|s| &s.key).collect();
            for old in cluster
                .objects
                .values()
                .filter(|s| s.key.kind == *kind && !kept.contains(&s.key) && filter.object(s))
            {
                out.push(Changed::Object("DELETED", Box::new(old.clone())));
            }
        }
    }
    out
}
