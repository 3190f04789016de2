//! `fluxfleet` with no command, and `fluxfleet demo`: the TUI on the fleet the options name, or
//! on a simulated fleet served in-process. Both open their fleet through `session::open`.

use clap::Args;

use super::edge::{Terminal, TuiFailed};
use super::fleet::{ConfigArg, FleetArgs, ModeArgs, WatchArg};
use super::process::file_logs;
use crate::config::Mode;
use crate::headless::{Edge, OpenFailed, Said};
use crate::session::open::open;
use crate::session::resolve::Sources;

/// How the TUI looks.
#[derive(Clone, Debug, Default, Args)]
pub struct ThemeArg {
    /// Theme: dark, light, high-contrast, colorblind, or THEME.toml in the config directory's
    /// `themes` folder.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
}

/// The TUI's options: the fleet, how much is watched, the theme and what may be changed.
#[derive(Clone, Debug, Default, Args)]
pub struct TuiArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    #[command(flatten)]
    pub watch_mode: WatchArg,
    #[command(flatten)]
    pub theme: ThemeArg,
    #[command(flatten)]
    pub mode: ModeArgs,
}

/// `fluxfleet demo`: the TUI on a simulated fleet served in-process.
#[derive(Debug, Args)]
pub struct DemoArgs {
    #[arg(long, default_value_t = 500)]
    pub clusters: usize,
    #[arg(long, default_value_t = 8)]
    pub workspaces: usize,
    /// The config whose keymap and theme apply (its fleet does not: the demo's is simulated).
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub theme: ThemeArg,
    #[command(flatten)]
    pub mode: ModeArgs,
}

/// The TUI on the fleet the options name.
pub async fn run(args: TuiArgs) -> Result<(), TuiFailed> {
    // The TUI reads the objects of the clusters it opens: counts suffice for the rest.
    let sources = Sources {
        counts_suffice: true,
        ..args.fleet.sources(args.watch_mode)
    };
    tui(&sources, args.theme, args.mode.mode()).await
}

/// The TUI on a simulated fleet (the story, with churn, rollouts and a few clusters on an older
/// Flux), served until the TUI ends; the user's config applies, in write mode unless told.
pub async fn demo(args: DemoArgs) -> Result<(), TuiFailed> {
    // Removed when this returns (the TUI also ends on SIGTERM and SIGHUP to get here).
    let private = fluxfleet_sim::private_dir(&std::env::temp_dir(), "fluxfleet-demo-")
        .map_err(TuiFailed::DemoDir)?;
    let dir = private.path().to_path_buf();
    let config = fluxfleet_sim::Config {
        clusters: args.clusters,
        workspaces: args.workspaces,
        objects: 30,
        out: dir.clone(),
        churn: 5.0,
        rollout_interval: std::time::Duration::from_secs(60),
        rollout_step: std::time::Duration::from_secs(10),
        report_every: std::time::Duration::from_secs(60),
        // The story brings its own trouble (a flaky region, clusters nobody reaches); a few
        // clusters run an older Flux, as fleets do.
        faults: fluxfleet_sim::faults::Spec::parse("old-flux=3%")
            .map_err(|e| TuiFailed::Demo(fluxfleet_sim::Error::Config(e)))?,
        scenario: fluxfleet_sim::Scenario::Story,
        ..fluxfleet_sim::Config::default()
    };
    let handle = fluxfleet_sim::start(config)
        .await
        .map_err(TuiFailed::Demo)?;
    let sources = Sources {
        dirs: vec![dir.join("kubeconfigs")],
        config: args.config.config,
        command_line_only: true,
        ..Sources::default()
    };
    let mode = args.mode.mode().unwrap_or(Mode::Write);
    let result = tui(&sources, args.theme, Some(mode)).await;
    handle.shutdown().await;
    drop(private);
    result
}

/// Opens the fleet and runs the TUI on it; an empty fleet is an error that says where
/// fluxfleet looked.
async fn tui(sources: &Sources, theme: ThemeArg, mode: Option<Mode>) -> Result<(), TuiFailed> {
    let opened = open(sources).await.map_err(OpenFailed::Bus)?;
    if opened.fleet.is_empty() {
        // Said here: the TUI that shows them otherwise will not open.
        for w in &opened.warnings {
            Terminal.said(Said::Warning(w.clone()));
        }
        return Err(OpenFailed::NoClusters(opened.fleet.empty_why()).into());
    }
    file_logs();
    crate::tui::open(crate::tui::Start {
        config: opened.config,
        config_path: opened.config_path,
        warnings: opened.warnings,
        fleet: opened.fleet,
        mode,
        theme: theme.theme,
        journal: crate::audit::default_path(),
    })
    .await?;
    Ok(())
}
