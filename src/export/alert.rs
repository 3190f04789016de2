//! `fluxfleet alert --alertmanager URL`: one alert per failing root cause across the fleet, sent
//! to Alertmanager's v2 API — fired once the cause has failed for a while (`--for`), sent again
//! every round while it lasts (`--every`), held through a flap (`--hold`) and resolved when it
//! clears. The fleet is opened as every command opens it (kubeconfigs and management clusters,
//! or `--nats`) and followed; nothing is ever sent to a cluster but reads.
//!
//! [`cause`] says what an alert holds, [`state`] decides what fires and resolves, [`wire`] posts,
//! [`inside`] adds what broke inside a failing Kustomization or HelmRelease.

mod cause;
mod inside;
pub mod state;
mod wire;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio_util::sync::CancellationToken;

use self::state::{AlertTiming, Alerts, Labels, Note, Posted};
use self::wire::Alertmanager;
pub use self::wire::AlertmanagerError;
use super::outcome::Ended;
use super::{Filter, StatusFilter};
use crate::fleet::Index;
use crate::headless::OpenFailed;
use crate::headless::opening::{fleet, not_live};
use crate::headless::{Edge, Said};
use crate::session::Session;
use crate::session::resolve::Sources;

pub use self::cause::{ALERTNAME, INCIDENT_ALERTNAME};

/// What `fluxfleet alert` was asked.
#[derive(Clone, Debug)]
pub struct Alerting {
    pub sources: Sources,
    /// The scope; its status is always "failing".
    pub filter: Filter,
    /// Alertmanager URLs (each member of an HA cluster, as Prometheus sends to each).
    pub alertmanagers: Vec<String>,
    /// A CA bundle to trust for Alertmanager's HTTPS.
    pub ca: Option<PathBuf>,
    /// Labels every alert carries.
    pub labels: Labels,
    pub rules: AlertTiming,
    /// How long to wait for every cluster to answer before the first round.
    pub timeout: Duration,
    /// Print what would be sent (one JSON array a round) instead of sending it.
    pub dry_run: bool,
    /// Read what broke inside failing Kustomizations and HelmReleases for the `workloads`
    /// annotation.
    pub workloads: bool,
}

/// Why `alert` stopped before it was told to.
#[derive(Debug, thiserror::Error)]
pub enum AlertFailed {
    /// An `--alertmanager` URL or its CA cannot be used: change the command line.
    #[error("{0}")]
    Alertmanager(#[from] AlertmanagerError),
    /// The fleet could not be opened (the config, the bus), or holds no cluster.
    #[error("{0}")]
    Open(#[from] OpenFailed),
    /// SIGINT and SIGTERM cannot be listened for.
    #[error("cannot listen for SIGINT and SIGTERM")]
    Signals,
    /// Every source of the followed fleet stopped.
    #[error("every source of the fleet has stopped")]
    SourcesStopped,
}

/// `fluxfleet alert`: runs until `stop` is cancelled — then at once, whatever the fleet or
/// Alertmanager are doing (a post in flight is abandoned: alerts not renewed lapse by
/// themselves).
pub async fn alert(
    request: Alerting,
    edge: Arc<dyn Edge>,
    stop: CancellationToken,
) -> Result<Ended, AlertFailed> {
    let managers = request
        .alertmanagers
        .iter()
        .map(|url| Alertmanager::new(url, request.ca.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    tokio::select! {
        ended = follow(&request, &managers, edge.as_ref()) => ended,
        _ = stop.cancelled() => Ok(Ended::Stopped),
    }
}

/// Follows the fleet and alerts, round after round, until every source stops.
async fn follow(
    request: &Alerting,
    managers: &[Alertmanager],
    edge: &dyn Edge,
) -> Result<Ended, AlertFailed> {
    let opened = fleet(&request.sources, edge).await?;
    let window = opened.config.rollout.rules.suspect_window;
    let mut live = Session::start(opened.fleet.sources(&opened.config.engine, true));
    let settled = live.settle(request.timeout).await;
    not_live(
        &live.index,
        &request.filter,
        settled,
        Timestamp::now(),
        edge,
    );
    let to: Vec<String> = managers.iter().map(ToString::to_string).collect();
    edge.said(Said::Note(format!(
        "fluxfleet alert: {} clusters; {} every {}, firing after {}, held {}",
        live.index.clusters().iter().filter(|c| !c.retired).count(),
        match request.dry_run {
            true => "printing the alerts".to_string(),
            false => format!("sending to {}", to.join(", ")),
        },
        crate::units::format_duration(request.rules.every),
        crate::units::format_duration(request.rules.pending),
        crate::units::format_duration(request.rules.hold),
    )));

    let labels = request.labels.clone();
    let mut rounds = Rounds::new(request.filter.clone(), window, labels, request.rules);
    let mut inside = inside::Inside::new(live.reader());
    let mut round = tokio::time::interval(request.rules.every);
    round.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            more = live.apply_batch() => {
                if !more {
                    return Err(AlertFailed::SourcesStopped);
                }
                rounds.changed();
            }
            Some((key, top)) = inside.next() => inside.learned(key, top, Timestamp::now()),
            _ = round.tick() => {
                let now = Timestamp::now();
                let (mut posts, notes) = rounds.round(&live.index, now);
                if request.workloads {
                    inside.ask(&live.index, &request.filter, rounds.found(), now);
                }
                inside.annotate(&mut posts);
                say(now, &notes);
                if request.dry_run {
                    print(&posts);
                } else {
                    send(managers, &posts, edge).await;
                }
            }
        }
    }
}

/// The alert loop's work apart from the network: the fleet looked at each round (worked out
/// again only when it changed since the last), and what to send.
pub struct Rounds {
    alerts: Alerts,
    filter: Filter,
    window: SignedDuration,
    labels: Labels,
    found: Vec<state::Finding>,
    changed: bool,
}

impl Rounds {
    /// `filter`'s failing root causes, suspects looked for within `window`, every alert
    /// carrying `labels`.
    pub fn new(
        filter: Filter,
        window: SignedDuration,
        labels: Labels,
        rules: AlertTiming,
    ) -> Rounds {
        Rounds {
            alerts: Alerts::new(rules),
            filter: Filter {
                status: Some(StatusFilter::Failing),
                ..filter
            },
            window,
            labels,
            found: Vec::new(),
            changed: true,
        }
    }

    /// The causes the last round found.
    pub fn found(&self) -> &[state::Finding] {
        &self.found
    }

    /// The fleet changed since the last round.
    pub fn changed(&mut self) {
        self.changed = true;
    }

    /// One round at `now`: what to send, and what fired, changed or resolved.
    pub fn round(&mut self, index: &Index, now: Timestamp) -> (Vec<Posted>, Vec<Note>) {
        if self.changed {
            self.found = cause::evaluate(index, &self.filter, (now, self.window), &self.labels);
            self.changed = false;
        }
        self.alerts.tick(now, self.found.clone())
    }
}

/// What fired, changed and resolved this round, a line each on stdout.
fn say(now: Timestamp, notes: &[Note]) {
    let mut out = std::io::stdout();
    for note in notes {
        let (what, line) = match note {
            Note::Firing(line) => ("firing", line),
            Note::Relabelled(line) => ("changed", line),
            Note::Resolved(line) => ("resolved", line),
        };
        let _ = writeln!(
            out,
            "{} {what:<8} {line}",
            now.strftime("%Y-%m-%dT%H:%M:%SZ")
        );
    }
    let _ = out.flush();
}

fn print(posts: &[Posted]) {
    let mut out = std::io::stdout();
    if let Ok(json) = serde_json::to_string(posts) {
        let _ = writeln!(out, "{json}");
    }
    let _ = out.flush();
}

/// Posts the round's alerts to every Alertmanager at once; one that fails is said on stderr and
/// gets them all again next round.
async fn send(managers: &[Alertmanager], posts: &[Posted], edge: &dyn Edge) {
    if posts.is_empty() {
        return;
    }
    let sent = futures::future::join_all(managers.iter().map(|m| m.post(posts))).await;
    for error in sent.into_iter().filter_map(Result::err) {
        edge.said(Said::Warning(format!("{error}; sent again next round")));
    }
}
