//! The TUI: the model, messages, the update function, the keymap and the event loop. The only
//! place that knows about channels and the terminal.

pub mod action;
pub mod keymap;
pub mod model;
pub mod rows;
pub mod run;
pub mod update;

use std::path::PathBuf;

use crossterm::event::Event as TermEvent;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;

use crate::config::theme::Theme;
use crate::config::{Config, Mode};
use crate::inventory::Inventory;
use crate::k8s::Reader;
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
    /// Read-only or write, with the command line's say over the config's.
    pub mode: Mode,
}

/// Opens the TUI on `start.inventory` and watches it until the user quits. The terminal is
/// restored however this ends, panics included.
pub async fn tui(start: Start) -> anyhow::Result<()> {
    let mut terminal = ratatui::try_init()?;
    let result = session(&mut terminal, start, run::terminal_events()).await;
    ratatui::restore();
    result
}

/// The whole TUI on any backend, driven by `keys`: config, theme and keymap loaded, the engine
/// started on the inventory, the event loop run until the user quits, the engine stopped. The
/// end-to-end test runs this on a test backend.
pub async fn session<B: Backend>(
    terminal: &mut Terminal<B>,
    start: Start,
    keys: impl futures::Stream<Item = std::io::Result<TermEvent>> + Unpin,
) -> anyhow::Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let Start {
        config,
        config_path,
        mut warnings,
        inventory,
        theme,
        mode,
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
    model.read_only = mode == Mode::ReadOnly;
    let mut effects = Fetcher {
        reader: engine.reader(),
    };
    let result = run::run(
        terminal,
        &mut model,
        &theme,
        keys,
        events,
        &mut effects,
        jiff::Timestamp::now,
    )
    .await;
    engine.shutdown().await;
    result
}

/// Reads events and YAML from the object's cluster, each request in its own task; the answer
/// comes back as a message.
pub struct Fetcher {
    pub reader: Reader,
}

impl run::Effects for Fetcher {
    fn start(&mut self, effect: Effect, results: mpsc::UnboundedSender<Msg>) {
        let reader = self.reader.clone();
        tokio::spawn(async move {
            let (cluster, key, fetched) = match effect {
                Effect::FetchEvents { cluster, key } => {
                    let fetched = match reader.events(cluster, &key).await {
                        Ok(events) => Fetched::Events(events),
                        Err(e) => Fetched::Failed("events", e),
                    };
                    (cluster, key, fetched)
                }
                Effect::FetchYaml { cluster, key } => {
                    let fetched = match reader.yaml(cluster, &key).await {
                        Ok(yaml) => Fetched::Yaml(yaml),
                        Err(e) => Fetched::Failed("yaml", e),
                    };
                    (cluster, key, fetched)
                }
            };
            // The loop may have ended meanwhile: nobody to tell.
            let _ = results.send(Msg::Fetched {
                cluster,
                key,
                fetched,
            });
        });
    }
}
