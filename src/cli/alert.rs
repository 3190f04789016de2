//! `fluxfleet alert`'s options: the scope, where to send, the labels added and the timing.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::fleet::{FleetArgs, WatchArg};
use super::usage::Usage;
use super::usage::duration;
use crate::fleet::scope::Scope;

/// `fluxfleet alert`: the scope, where to send, and the timing.
#[derive(Debug, Args)]
pub struct AlertArgs {
    #[command(flatten)]
    pub scope: Scope,
    /// Alertmanager (http://alertmanager:9093; user:password@ for basic auth); repeat for each
    /// member of an HA cluster.
    #[arg(
        long = "alertmanager",
        value_name = "URL",
        required_unless_present = "dry_run"
    )]
    pub alertmanagers: Vec<String>,
    /// A CA bundle to trust for Alertmanager's HTTPS (default: the system's).
    #[arg(long, value_name = "FILE")]
    pub alertmanager_ca: Option<PathBuf>,
    /// A label every alert carries (repeatable): --label fleet=prod.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = label)]
    pub labels: Vec<(String, String)>,
    /// How often the fleet is looked at and every alert sent again.
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub every: Duration,
    /// How long a root cause fails (its oldest copy) before its alert fires.
    #[arg(long = "for", value_name = "DURATION", default_value = "1m", value_parser = duration)]
    pub pending: Duration,
    /// How long a firing cause must be gone before its alert resolves: one that comes back
    /// within it does not fire again.
    #[arg(long, default_value = "5m", value_parser = duration)]
    pub hold: Duration,
    /// How long to wait for every cluster to answer before the first round.
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub timeout: Duration,
    /// Print each round's alerts as a JSON array instead of sending them.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not read what broke inside failing Kustomizations and HelmReleases from their
    /// clusters (the `workloads` annotation): the alerts then come from the fleet's state alone
    /// (on the bus: no connection to any cluster).
    #[arg(long)]
    pub no_workloads: bool,
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
    #[command(flatten)]
    pub stop: super::process::StopArgs,
}

/// `KEY=VALUE`, KEY a Prometheus label name.
fn label(text: &str) -> Result<(String, String), Usage> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| Usage::NotALabel(text.to_string()))?;
    let mut chars = key.chars();
    let first = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') || key.starts_with("__") {
        return Err(Usage::LabelName(key.to_string()));
    }
    Ok((key.to_string(), value.to_string()))
}

impl AlertArgs {
    pub fn request(&self) -> Result<crate::export::alert::Alerting, Usage> {
        Ok(crate::export::alert::Alerting {
            sources: self.fleet.sources(self.watch_mode),
            filter: self.scope.filter(None)?,
            alertmanagers: self.alertmanagers.clone(),
            ca: self.alertmanager_ca.clone(),
            labels: self.labels.iter().cloned().collect(),
            rules: crate::export::alert::state::AlertTiming {
                pending: self.pending,
                hold: self.hold,
                every: self.every.max(Duration::from_millis(100)),
            },
            timeout: self.timeout,
            dry_run: self.dry_run,
            workloads: !self.no_workloads,
        })
    }
}
