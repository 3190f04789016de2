//! The TUI: the model, messages, the update function, the keymap and the event loop. The only
//! place that knows about channels and the terminal.

pub mod action;
pub mod keymap;
pub mod model;
pub mod rows;
pub mod run;
pub mod update;

use std::path::PathBuf;

use tokio::sync::mpsc;

use crate::config::Config;
use crate::config::theme::Theme;
use crate::inventory::Inventory;
use keymap::Keymap;
use model::{Fetched, Model};
use update::{Effect, Msg};

/// What the TUI starts with.
pub struct Start {
    pub config: Config,
    /// Where the config file is (its directory holds user themes).
    pub config_path: Option<PathBuf>,
    /// Config and inventory problems, shown in the status line.
    pub warnings: Vec<String>,
    pub inventory: Inventory,
    /// `--theme`, over the config's.
    pub theme: Option<String>,
    pub read_only: bool,
}

/// Opens the TUI on `start.inventory` and watches it until the user quits. The terminal is
/// restored however this ends, panics included.
pub async fn tui(start: Start) -> anyhow::Result<()> {
    let Start {
        config,
        config_path,
        mut warnings,
        inventory,
        theme,
        read_only,
    } = start;
    let theme_dir = config_path
        .as_deref()
        .and_then(|p| p.parent())
        .map(|d| d.join("themes"));
    let (theme, theme_warnings) = Theme::load(
        theme.as_deref().unwrap_or(&config.ui.theme),
        theme_dir.as_deref(),
    );
    warnings.extend(theme_warnings.into_iter().map(|w| format!("theme: {w}")));
    let (keymap, keymap_warnings) = Keymap::from_config(&config.keymap);
    warnings.extend(keymap_warnings);
    let (index, engine, events) = crate::export::live::watch(&inventory, &config.engine);
    let mut model = Model::new(index, keymap, warnings, jiff::Timestamp::now());
    model.read_only = read_only || config.ui.read_only;
    let mut terminal = ratatui::try_init()?;
    let mut effects = NoFetch;
    let result = run::run(
        &mut terminal,
        &mut model,
        &theme,
        run::terminal_events(),
        events,
        &mut effects,
        jiff::Timestamp::now,
    )
    .await;
    ratatui::restore();
    engine.shutdown().await;
    result
}

/// Fetching events and YAML needs a one-off request to the object's cluster; until the engine
/// offers it, the detail view says so instead of pretending.
struct NoFetch;

impl run::Effects for NoFetch {
    fn start(&mut self, effect: Effect, results: mpsc::UnboundedSender<Msg>) {
        let what = match effect {
            Effect::FetchEvents { .. } => "events",
            Effect::FetchYaml { .. } => "yaml",
        };
        let _ = results.send(Msg::Fetched(Fetched::Failed(
            what,
            "fetching from the cluster is not available in this build yet".into(),
        )));
    }
}
