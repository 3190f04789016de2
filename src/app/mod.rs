//! The TUI: the model, messages, the update function, the keymap and the event loop. The only
//! place that knows about channels and the terminal.

mod acting;
pub mod action;
pub mod command;
mod evidence;
pub mod handoff;
pub mod keymap;
mod launch;
pub mod links;
pub mod map;
pub mod message;
pub mod model;
pub mod plugins;
pub mod prompt;
pub mod rows;
pub mod run;
pub mod spreads;
pub mod triage;
pub mod update;
pub mod view;

use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;

use crate::config::theme::Theme;
use crate::config::{Config, Mode};
use crate::session::open::Fleet;
use crate::session::{Reader, Session, Writer};
use keymap::Keymap;
use model::Model;
use update::{Effect, Msg};
use view::Fetched;

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
pub async fn tui(start: Start) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Ended from outside (kill, a closed terminal): leave as if the user quit, so that the
    // terminal is restored and the caller cleans up.
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminal = ratatui::try_init()?;
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
) -> anyhow::Result<()>
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
    let (index, events, sources) = Session::start(fleet.sources(&config.engine, true)).split();
    let (grant, permissions) = config.writable(mode, index.clusters().iter().map(|c| &*c.info));
    let mut model = Model::new(index, keymap, warnings, jiff::Timestamp::now());
    model.read_only = grant.is_none();
    model.writes_refused = config.writes_refused();
    model.permissions = Some(permissions.clone());
    model.count_writable();
    model.actions = config.actions.clone();
    model.rollout = config.rollout.clone();
    model.user = crate::audit::local_user();
    model.plugins = plugins;
    // The only place a writer can come from: write mode's grant.
    let writer = grant.map(|grant| sources.writer(grant, permissions));
    let mut effects = Clusters {
        reader: sources.reader(),
        writer,
        journal,
        concurrency: config.actions.concurrency,
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
    sources.shutdown().await;
    result
}

/// How long the TUI's executor waits for a requested reconcile to be handled before the journal
/// calls it timed out (the results view keeps following the watch either way).
const TUI_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Carries out effects off the render path, each in its own task; results come back as
/// messages. Reads always work; actions only with a [`Writer`], which a read-only session does
/// not have.
pub struct Clusters {
    pub reader: Reader,
    pub writer: Option<Writer>,
    pub journal: Option<PathBuf>,
    pub concurrency: usize,
    /// The running action's executor, told which reconciles the watch shows handled.
    pub handled: Option<(u64, mpsc::UnboundedSender<crate::actions::Handled>)>,
}

impl run::Effects for Clusters {
    fn start(&mut self, effect: Effect, results: mpsc::UnboundedSender<Msg>) {
        match effect {
            Effect::FetchEvents { cluster, info, key } => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let fetched = match reader.events(&info, &key).await {
                        Ok(events) => Fetched::Events(events),
                        Err(e) => Fetched::Failed("events", e),
                    };
                    // The loop may have ended meanwhile: nobody to tell.
                    let _ = results.send(Msg::Fetched {
                        cluster,
                        key,
                        fetched,
                    });
                });
            }
            Effect::FetchYaml { cluster, info, key } => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let fetched = match reader.yaml(&info, &key).await {
                        Ok(yaml) => Fetched::Yaml(yaml),
                        Err(e) => Fetched::Failed("yaml", e),
                    };
                    let _ = results.send(Msg::Fetched {
                        cluster,
                        key,
                        fetched,
                    });
                });
            }
            Effect::FetchWorkloads {
                key,
                clusters,
                infos,
            } => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let infos: Vec<crate::fleet::ClusterInfo> =
                        infos.iter().map(|i| (**i).clone()).collect();
                    let how = crate::session::evidence::Gather::default();
                    let folded = crate::session::evidence::gather(&reader, &infos, &key, how).await;
                    let _ = results.send(Msg::Workloads {
                        key,
                        clusters,
                        folded: Box::new(folded),
                    });
                });
            }
            Effect::Open(info) => self.reader.open(&info),
            Effect::ReadHistory(since) => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let _ = results.send(Msg::History(reader.history(since).await));
                });
            }
            Effect::ReadAudit => {
                let path = self.journal.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = results.send(Msg::Audit(read_journal(path.as_deref())));
                });
            }
            Effect::Act(job) => {
                let writer = self.writer.clone();
                let journal = self.journal.clone();
                let concurrency = self.concurrency.max(1);
                let (told, handled) = mpsc::unbounded_channel();
                self.handled = Some((job.run, told));
                tokio::spawn(act(job, writer, journal, concurrency, handled, results));
            }
            Effect::Plugin(launch) => {
                let what = launch.describe();
                match self.prepare(launch) {
                    Ok(prepared) => {
                        tokio::spawn(async move {
                            let _ = results.send(Msg::Plugin(handoff::background(prepared).await));
                        });
                    }
                    Err(why) => {
                        let _ = results.send(Msg::Plugin(handoff::Ended {
                            what,
                            exit: handoff::Exit::NotRun(why),
                            tail: Vec::new(),
                        }));
                    }
                }
            }
            Effect::Handled { run, cluster, key } => {
                if let Some((current, told)) = &self.handled
                    && *current == run
                {
                    let _ = told.send(crate::actions::Handled { cluster, key });
                }
            }
        }
    }

    fn prepare(&mut self, launch: plugins::Launch) -> Result<handoff::Prepared, String> {
        handoff::prepare(
            launch,
            &self.reader,
            self.writer.as_ref(),
            self.journal.as_deref(),
        )
    }
}

/// Sends every target's patches, reports each outcome as it comes, then journals the attempt.
async fn act(
    job: crate::actions::Job,
    writer: Option<Writer>,
    journal: Option<PathBuf>,
    concurrency: usize,
    handled: mpsc::UnboundedReceiver<crate::actions::Handled>,
    results: mpsc::UnboundedSender<Msg>,
) {
    let how = crate::actions::Carry {
        writer: writer.as_ref(),
        // A reconcile is followed to "handled" in the watch (the event loop tells), not polled.
        wait: Some(TUI_WAIT),
        concurrency,
        journal: journal.as_deref(),
        tool: None,
    };
    let report = |t: &crate::actions::Target,
                  update: crate::actions::Update<'_>,
                  _: &crate::actions::Progress| {
        // Accepted shows as requested until the watch shows it handled.
        let outcome = match update {
            crate::actions::Update::Requested => crate::fleet::actions::Outcome::Done,
            crate::actions::Update::Ended(outcome, _) => outcome.clone(),
        };
        let _ = results.send(Msg::Acted {
            run: job.run,
            cluster: t.cluster,
            key: t.key.clone(),
            outcome,
        });
    };
    let (_, journaled) = crate::actions::carry_out(
        &job,
        how,
        Some(crate::actions::Watch::Told(handled)),
        report,
    )
    .await;
    if let Err(e) = journaled {
        tracing::warn!(error = %e, "audit journal");
    }
}

/// The journal's last 500 lines, newest first, as attempts ([`crate::audit::attempts`]).
fn read_journal(path: Option<&std::path::Path>) -> Result<Vec<String>, String> {
    let Some(path) = path else {
        return Err("no data directory for the audit journal".into());
    };
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(crate::audit::attempts(
            text.lines().rev().take(500).map(str::to_string).collect(),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}
