//! `fluxfleet collect`: its options, and running a collector — the fleet opened as every
//! command opens it, this collector's share watched and published until SIGINT or SIGTERM,
//! with its metrics and probes served where asked.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::edge::{CollectFailed, Terminal};
use super::fleet::{FleetArgs, WatchArg};
use super::probes::ProbeArgs;
use super::process::{StopArgs, until_stopped};
use super::usage::Usage;
use super::usage::duration;
use crate::bus::collector::{self, Refresh};
use crate::headless::{Edge, Said};
use crate::inventory::FileStamp;
use crate::session::open::{Fleet, open};
use crate::session::resolve::{self, Sources};

/// `fluxfleet collect`: watch this collector's share of the fleet and publish it to NATS.
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// This collector's name among the others (default: host name and process id).
    #[arg(long)]
    pub id: Option<String>,
    /// A collector that has not renewed its announcement for this long is taken for dead, and
    /// its clusters move to the others.
    #[arg(long, default_value = "15s", value_parser = duration)]
    pub ttl: Duration,
    /// How long the history stream keeps a change.
    #[arg(long, default_value = "168h", value_parser = duration)]
    pub history: Duration,
    /// The most the history stream holds (per copy): past it, the oldest changes go first.
    /// 1GiB keeps about 2.7 million changes (docs/collectors.md has the arithmetic).
    #[arg(long, default_value = "1GiB", value_name = "SIZE", value_parser = size)]
    pub history_max_bytes: u64,
    /// Copies a NATS cluster keeps of the buckets and the history when the first collector
    /// makes them: 3 on a cluster of three loses nothing when a node goes; 1 on a single
    /// server.
    #[arg(long, default_value_t = 1, value_parser = replicas)]
    pub replicas: usize,
    /// How often ring metrics (lead time, change failure rate, time to restore per ring) are
    /// worked out from the history for /metrics; 0s: never.
    #[arg(long, default_value = "5m", value_parser = duration)]
    pub ring_metrics_every: Duration,
    /// How far back the history is read for them.
    #[arg(long, default_value = "24h", value_parser = duration)]
    pub ring_metrics_window: Duration,
    #[command(flatten)]
    pub probes: ProbeArgs,
    #[command(flatten)]
    pub stop: StopArgs,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
}

/// `512MiB`, `2GiB`: at least a MiB (a stream smaller than its largest change holds nothing).
fn size(s: &str) -> Result<u64, Usage> {
    match crate::units::parse_size(s) {
        Ok(n) if n >= 1 << 20 => Ok(n),
        Ok(_) => Err(Usage::TooSmall(s.to_string())),
        Err(e) => Err(Usage::Size(e)),
    }
}

/// JetStream keeps 1 to 5 copies of a stream.
fn replicas(s: &str) -> Result<usize, Usage> {
    match s.parse::<usize>() {
        Ok(n @ 1..=5) => Ok(n),
        _ => Err(Usage::Replicas(s.to_string())),
    }
}

/// Runs the collector until SIGINT or SIGTERM, then stops it within `--shutdown-timeout`.
pub async fn run(args: CollectArgs) -> Result<(), CollectFailed> {
    let deadline = args.stop.shutdown_timeout;
    until_stopped("fluxfleet collect", deadline, |stop| collect(args, stop))
        .await
        .map_err(CollectFailed::Signals)?
}

/// The collector, until `token` is cancelled.
async fn collect(args: CollectArgs, token: CancellationToken) -> Result<(), CollectFailed> {
    let Some(options) = args.fleet.bus.options() else {
        return Err(CollectFailed::NoBus);
    };
    // The clusters come from the kubeconfigs (and their management clusters); --nats is where
    // they are published, not where they are read from.
    // By name: the credentials of the clusters it takes are read when it takes them.
    let sources = Sources {
        nats: None,
        names_first: true,
        ..args.fleet.sources(args.watch_mode)
    };
    // What the files are before they are read: one changed while they were is read again.
    let stamp = resolve::stamp(&sources);
    let opened = open(&sources).await.map_err(CollectFailed::Open)?;
    for w in opened.warnings {
        Terminal.said(Said::Warning(w));
    }
    let Fleet::Kubeconfigs { inventory, .. } = opened.fleet else {
        return Err(CollectFailed::FromBus);
    };
    if inventory.clusters.is_empty() {
        return Err(CollectFailed::NoClusters);
    }
    let id = args
        .id
        .clone()
        .unwrap_or_else(|| format!("{}-{}", crate::audit::local_host(), std::process::id()));
    let request = collector::Collecting {
        options,
        id: id.clone(),
        retention: crate::bus::Retention {
            history: args.history,
            history_max_bytes: args.history_max_bytes,
            ttl: args.ttl,
            replicas: args.replicas,
        },
        clusters: inventory.clusters,
        rings: (!args.ring_metrics_every.is_zero()).then(|| collector::rings::RingsAsked {
            rings: opened.config.rollout.rings.clone(),
            window: args.ring_metrics_window,
            every: args.ring_metrics_every,
            suspect_window: opened.config.rollout.rules.suspect_window,
        }),
        settings: opened.config.engine,
        reread: resolve::reread(&sources),
        refresh: Some(refresh(sources, stamp)),
        // Its own steps end a little before the process must: what was abandoned is said.
        shutdown: args.stop.shutdown_timeout * 4 / 5,
        status: Default::default(),
    };
    args.probes
        .serve("collect", request.status.clone(), &token)
        .await?;
    Terminal.said(Said::Note(format!(
        "fluxfleet collect {id}: {} clusters in the fleet, publishing to bucket {}",
        request.clusters.len(),
        request.options.bucket
    )));
    collector::run(request, token)
        .await
        .map_err(CollectFailed::Bus)
}

/// The fleet read again for a collector when a file it is read from changed (always, when it
/// also comes from management clusters); any problem keeps the fleet as it was. `stamp` is what
/// the files were when the fleet was last read.
fn refresh(sources: Sources, stamp: Option<Vec<FileStamp>>) -> Refresh {
    let last = Arc::new(std::sync::Mutex::new(stamp));
    Arc::new(move || {
        let (sources, last) = (sources.clone(), last.clone());
        Box::pin(async move {
            let now = resolve::stamp(&sources);
            let same = |was: &Option<Vec<FileStamp>>| now.is_some() && *was == now;
            if last.lock().is_ok_and(|was| same(&was)) {
                return Ok(None);
            }
            let resolved = resolve::resolve(&sources).await;
            match resolved.inventory.problems.first() {
                Some(problem) => Err(problem.clone()),
                None => {
                    if let Ok(mut was) = last.lock() {
                        *was = now;
                    }
                    Ok(Some(resolved.inventory.clusters))
                }
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(name: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: {name}\n\
             clusters:\n- name: {name}\n  cluster:\n    server: https://{name}.example.com:6443\n\
             users:\n- name: {name}\n  user:\n    token: t\n\
             contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"
        )
    }

    /// The fleet is read again when a file it comes from changed, and only then; a fleet that
    /// also comes from management clusters is read again every time.
    #[tokio::test]
    async fn a_collector_reads_its_fleet_again_only_when_a_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let configs = dir.path().join("kubeconfigs");
        std::fs::create_dir(&configs).unwrap();
        std::fs::write(configs.join("a.yaml"), kubeconfig("a")).unwrap();
        let config = dir.path().join("fluxfleet.toml");
        std::fs::write(&config, "").unwrap();
        let sources = Sources {
            dirs: vec![configs.clone()],
            config: Some(config),
            ..Sources::default()
        };
        let again = refresh(sources.clone(), resolve::stamp(&sources));
        let names = |read: Result<Option<Vec<crate::inventory::ClusterSpec>>, _>| {
            read.unwrap()
                .map(|specs| specs.into_iter().map(|s| s.name).collect::<Vec<_>>())
        };
        assert_eq!(names(again().await), None, "nothing changed");
        std::fs::write(configs.join("b.yaml"), kubeconfig("b")).unwrap();
        assert_eq!(names(again().await), Some(vec!["a".into(), "b".into()]));
        assert_eq!(names(again().await), None);
        std::fs::write(configs.join("b.yaml"), kubeconfig("bb")).unwrap();
        assert_eq!(names(again().await), Some(vec!["a".into(), "bb".into()]));
        std::fs::remove_file(configs.join("a.yaml")).unwrap();
        assert_eq!(names(again().await), Some(vec!["bb".into()]));
        let managed = Sources {
            managements: vec!["mgmt".into()],
            ..sources
        };
        assert_eq!(resolve::stamp(&managed), None, "always read again");
    }
}
