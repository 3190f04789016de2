//! The TUI's event loop, above [`crate::app`] (the state and how it changes) and [`crate::ui`]
//! (how it is drawn): the fleet opened into a session, keys and fleet events turned into
//! messages, effects carried out off the render path, the screen laid out and drawn.

pub mod effects;
pub mod handoff;
pub mod run;

use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::Backend;

use crate::app::keymap::Keymap;
use crate::app::model::{Model, Settings};
use crate::app::plugins;
use crate::config::theme::Theme;
use crate::config::{Config, Mode};
use crate::session::Session;
use crate::session::open::Fleet;
use effects::Clusters;
pub use run::{TerminalFailed, lay_out};

/// What the TUI starts with.
pub struct Start {
    pub config: Config,
    /// Where the config file is (its directory holds user themes).
    pub config_path: Option<PathBuf>,
    /// Config and inventory problems, shown in the status line.
    pub warnings: Vec<String>,
    /// Where the fleet comes from (management clusters are followed while running).
    pub fleet: Fleet,
    /// `--theme`, over the config's.
    pub theme: Option<String>,
    /// `--write` / `--read-only` (the demo: write), over the config's modes.
    pub mode: Option<Mode>,
    /// The audit journal (`audit::default_path()`).
    pub journal: Option<PathBuf>,
}

/// Opens the TUI on `start.fleet` and watches it until the user quits. The terminal is
/// restored however this ends, panics included.
pub async fn open(start: Start) -> Result<(), TerminalFailed> {
    use tokio::signal::unix::{SignalKind, signal};
    // Ended from outside (kill, a closed terminal): leave as if the user quit, so that the
    // terminal is restored and the caller cleans up.
    let heard = |kind| signal(kind).map_err(TerminalFailed::Signals);
    let mut terminate = heard(SignalKind::terminate())?;
    let mut hangup = heard(SignalKind::hangup())?;
    let mut interrupt = heard(SignalKind::interrupt())?;
    let mut terminal = ratatui::try_init().map_err(TerminalFailed::terminal)?;
    let mut tty = run::Tty::new();
    let handed_over = tty.handed_over.clone();
    // Ctrl-C while a plugin has the terminal stops the plugin, not fluxfleet.
    let interrupted = async {
        loop {
            interrupt.recv().await;
            if !handed_over.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
        }
    };
    let result = tokio::select! {
        result = session(&mut terminal, start, &mut tty) => result,
        _ = terminate.recv() => Ok(()),
        _ = hangup.recv() => Ok(()),
        _ = interrupted => Ok(()),
    };
    ratatui::restore();
    result
}

/// The whole TUI on any backend, driven by `keys`: config, theme and keymap loaded, the engine
/// started on the fleet, the event loop run until the user quits, the engine stopped. The
/// end-to-end test runs this on a test backend, with keys from a [`run::Given`] console.
pub async fn session<B: Backend>(
    terminal: &mut Terminal<B>,
    start: Start,
    console: &mut dyn run::Console,
) -> Result<(), TerminalFailed>
where
    B::Error: Send + Sync + 'static,
{
    let Start {
        config,
        config_path,
        mut warnings,
        fleet,
        theme,
        mode,
        journal,
    } = start;
    let (theme, theme_warnings) = Theme::chosen(theme.as_deref(), &config, config_path.as_deref());
    warnings.extend(theme_warnings.into_iter().map(|w| format!("theme: {w}")));
    let (mut keymap, keymap_warnings) = Keymap::from_config(&config.keymap);
    warnings.extend(keymap_warnings);
    let (plugins, plugin_warnings) =
        plugins::from_config(&config.plugins, std::env::var_os("PATH").as_deref());
    warnings.extend(plugin_warnings);
    warnings.extend(plugins::bind(&mut keymap, &plugins));
    // Proposals are kept on the bus the fleet is read from, else beside the journal.
    let proposals = match &fleet {
        crate::session::open::Fleet::Bus(bus) => {
            match crate::proposals::Keeper::of(Some(bus.options())).await {
                Ok(keeper) => Some(keeper),
                Err(e) => {
                    warnings.push(format!("proposals: {e}"));
                    None
                }
            }
        }
        crate::session::open::Fleet::Kubeconfigs { .. } => journal
            .as_deref()
            .and_then(std::path::Path::parent)
            .map(|dir| {
                crate::proposals::Keeper::Files(crate::proposals::Store::at(dir.join("proposals")))
            }),
    };
    let (index, events, sources) = Session::start(fleet.sources(&config.engine, true)).split();
    let (grant, permissions) = config.writable(mode, index.clusters().iter().map(|c| &*c.info));
    let settings = Settings {
        read_only: grant.is_none(),
        writes_refused: config.writes_refused(),
        permissions: Some(permissions.clone()),
        // Counted by with_settings, from the permissions.
        writable: (0, 0),
        actions: config.actions.clone(),
        rollout: config.rollout.clone(),
        plugins,
        user: crate::audit::local_user(),
    };
    let mut model =
        Model::new(index, keymap, warnings, jiff::Timestamp::now()).with_settings(settings);
    // The only place a writer can come from: write mode's grant.
    let writer = grant.map(|grant| sources.writer(grant, permissions));
    let mut effects = Clusters {
        reader: sources.reader(),
        writer,
        journal,
        proposals,
        concurrency: config.actions.concurrency,
        warm: config.engine.warm_clusters,
        events: config.actions.events,
        handled: None,
    };
    let result = run::run(
        terminal,
        &mut model,
        &theme,
        console,
        events,
        &mut effects,
        jiff::Timestamp::now,
    )
    .await;
    // Quitting is not held by a source that will not stop (a bus gone quiet): what is left of
    // its stopping is abandoned, and said in the log.
    if tokio::time::timeout(STOPPING, sources.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            within = ?STOPPING,
            "the fleet's sources did not stop in time after quitting: abandoned"
        );
    }
    result
}

/// How long quitting waits for the fleet's sources to stop.
const STOPPING: std::time::Duration = std::time::Duration::from_secs(5);
