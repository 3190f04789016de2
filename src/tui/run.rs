//! The event loop: await a key or a batch of fleet events, drain everything queued, apply it all,
//! and render at most once per frame interval — only when something changed.

use std::time::Duration;

use crossterm::event::{Event as TermEvent, EventStream};
use futures::StreamExt;
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;

use super::handoff::Prepared;
use crate::app::handoff::{Exit, PluginEnded};
use crate::app::model::Model;
use crate::app::plugin_error::PluginError;
use crate::app::plugins::Launch;
use crate::app::update::{Effect, Msg, update};
use crate::config::theme::Theme;
use crate::fleet::index::Event;

/// Why the TUI ended other than by the person quitting, a signal, or its input ending.
#[derive(Debug, thiserror::Error)]
pub enum TerminalFailed {
    /// SIGINT, SIGTERM and SIGHUP cannot be listened for.
    #[error("cannot listen for SIGINT, SIGTERM and SIGHUP: {0}")]
    Signals(std::io::Error),
    /// The terminal could not be set up, measured, drawn on or read, or given to a plugin and
    /// taken back.
    #[error("the terminal: {0}")]
    Terminal(Box<dyn std::error::Error + Send + Sync>),
}

impl TerminalFailed {
    /// What the terminal (any backend's) answered.
    pub fn terminal(e: impl std::error::Error + Send + Sync + 'static) -> TerminalFailed {
        TerminalFailed::Terminal(Box::new(e))
    }
}

/// The shortest time between two frames (60 per second at most).
pub const FRAME: Duration = Duration::from_millis(16);

/// Where effects go (fetching events and YAML); results come back as messages.
pub trait Effects {
    fn start(&mut self, effect: Effect, results: mpsc::UnboundedSender<Msg>);

    /// A plugin that takes the terminal, up to its start (its kubeconfig, the journal).
    fn prepare(&mut self, launch: Launch) -> Result<Prepared, PluginError>;
}

/// Keys typed at the terminal.
pub type Keys = dyn futures::Stream<Item = std::io::Result<TermEvent>> + Unpin + Send;

/// The terminal, as far as the event loop hands it to another program and takes it back.
pub trait Console {
    /// What the user types (a new reader after each hand-over).
    fn keys(&mut self) -> &mut Keys;
    /// Stops reading keys and leaves the alternate screen and raw mode: the terminal as the
    /// shell had it, for a program that takes it.
    fn release(&mut self) -> std::io::Result<()>;
    /// Back to raw mode and the alternate screen, reading keys again.
    fn reclaim(&mut self) -> std::io::Result<()>;
}

/// The real terminal.
pub struct Tty {
    keys: Option<EventStream>,
    /// True while another program has the terminal: its Ctrl-C is not fluxfleet's.
    pub handed_over: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Tty {
    pub fn new() -> Tty {
        Tty {
            keys: Some(EventStream::new()),
            handed_over: Default::default(),
        }
    }
}

impl Default for Tty {
    fn default() -> Self {
        Tty::new()
    }
}

impl Console for Tty {
    fn keys(&mut self) -> &mut Keys {
        self.keys.get_or_insert_with(EventStream::new)
    }

    fn release(&mut self) -> std::io::Result<()> {
        use std::sync::atomic::Ordering;
        // The key reader must stop before the program starts, or it reads the program's keys.
        self.keys = None;
        self.handed_over.store(true, Ordering::SeqCst);
        crossterm::terminal::disable_raw_mode()?;
        crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::LeaveAlternateScreen,
            crossterm::cursor::Show
        )
    }

    fn reclaim(&mut self) -> std::io::Result<()> {
        use std::sync::atomic::Ordering;
        crossterm::terminal::enable_raw_mode()?;
        crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
        )?;
        self.handed_over.store(false, Ordering::SeqCst);
        self.keys = Some(EventStream::new());
        Ok(())
    }
}

/// Keys from anywhere (tests, scripts): handing over changes nothing but is recorded in `log`.
pub struct Given<S> {
    pub keys: S,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>,
}

impl<S> Given<S> {
    pub fn new(keys: S) -> Given<S> {
        Given {
            keys,
            log: Default::default(),
        }
    }

    fn note(&self, what: &'static str) {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(what);
    }
}

impl<S> Console for Given<S>
where
    S: futures::Stream<Item = std::io::Result<TermEvent>> + Unpin + Send + 'static,
{
    fn keys(&mut self) -> &mut Keys {
        &mut self.keys
    }

    fn release(&mut self) -> std::io::Result<()> {
        self.note("release");
        Ok(())
    }

    fn reclaim(&mut self) -> std::io::Result<()> {
        self.note("reclaim");
        Ok(())
    }
}

/// Lays `model` out for a terminal of `area`: its rows refreshed, then what the view measures
/// (page size, scroll bounds, the map's room) applied. The view only reads the model.
pub fn lay_out(model: &mut Model, theme: &Theme, area: ratatui::layout::Rect) {
    model.refresh_rows();
    let fit = crate::ui::measure(model, theme, area);
    model.apply_fit(fit);
}

/// Runs until the user quits or the input ends. `now` is the clock (pinned in tests).
pub async fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    model: &mut Model,
    theme: &Theme,
    console: &mut dyn Console,
    mut fleet: mpsc::Receiver<Event>,
    effects: &mut dyn Effects,
    now: impl Fn() -> Timestamp,
) -> Result<(), TerminalFailed>
where
    B::Error: Send + Sync + 'static,
{
    let (results_tx, mut results) = mpsc::unbounded_channel::<Msg>();
    let mut batch: Vec<Event> = Vec::with_capacity(4096);
    let mut dirty = true;
    let mut fleet_open = true;
    let mut last_frame = tokio::time::Instant::now() - FRAME;
    loop {
        if dirty && last_frame.elapsed() >= FRAME {
            let (due, started) = (last_frame + FRAME, tokio::time::Instant::now());
            model.tick(now());
            let size = terminal.size().map_err(TerminalFailed::terminal)?;
            lay_out(model, theme, size.into());
            terminal
                .draw(|frame| crate::ui::render(frame, model, theme))
                .map_err(TerminalFailed::terminal)?;
            last_frame = tokio::time::Instant::now();
            dirty = false;
            // How the loop keeps its frame budget (docs/performance.md, "The TUI while ten
            // thousand clusters connect"): FLUXFLEET_LOG=fluxfleet::tui::frame=debug.
            tracing::debug!(
                target: "fluxfleet::tui::frame",
                drawn_us = micros(last_frame - started),
                late_us = micros(started.saturating_duration_since(due)),
                "frame"
            );
        }
        let next_frame = last_frame + FRAME;
        let mut msgs = Vec::new();
        tokio::select! {
            biased;
            key = console.keys().next() => match key {
                Some(Ok(TermEvent::Key(k))) => msgs.push(Msg::Key(k)),
                // A resize redraws: every message below marks the screen dirty.
                Some(Ok(TermEvent::Resize(..))) => {}
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(TerminalFailed::terminal(e)),
                None => return Ok(()),
            },
            msg = results.recv() => {
                if let Some(m) = msg {
                    msgs.push(m);
                }
            }
            n = fleet.recv_many(&mut batch, 4096), if fleet_open => {
                if n == 0 {
                    fleet_open = false;
                } else {
                    msgs.push(Msg::Fleet(std::mem::take(&mut batch)));
                }
            }
            _ = tokio::time::sleep_until(next_frame), if dirty => continue,
            // Ages and freshness move with the clock even when nothing else does.
            _ = tokio::time::sleep(Duration::from_secs(1)), if !dirty => { dirty = true; continue; }
        }
        // Drain what else is queued before the next frame.
        while let Ok(m) = results.try_recv() {
            msgs.push(m);
        }
        while let Ok(event) = fleet.try_recv() {
            batch.push(event);
        }
        if !batch.is_empty() {
            msgs.push(Msg::Fleet(std::mem::take(&mut batch)));
        }
        let mut foreground = Vec::new();
        let (updating, events) = (tokio::time::Instant::now(), fleet_events(&msgs));
        for msg in msgs {
            for effect in update(model, msg) {
                match effect {
                    Effect::Plugin(launch) if !launch.background => foreground.push(launch),
                    effect => effects.start(effect, results_tx.clone()),
                }
            }
        }
        if events > 0 {
            tracing::debug!(
                target: "fluxfleet::tui::frame",
                updated_us = micros(updating.elapsed()),
                events,
                "update"
            );
        }
        for launch in foreground {
            let ended = hand_over(
                terminal,
                console,
                model,
                &mut fleet,
                effects,
                &results_tx,
                launch,
            )
            .await?;
            for effect in update(model, Msg::Plugin(ended)) {
                effects.start(effect, results_tx.clone());
            }
        }
        dirty = true;
        if model.quitting() {
            return Ok(());
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// How many of the fleet's events `msgs` bring.
fn fleet_events(msgs: &[Msg]) -> usize {
    msgs.iter()
        .map(|m| match m {
            Msg::Fleet(events) => events.len(),
            _ => 0,
        })
        .sum()
}

/// Gives the terminal to a plugin until it exits, and takes it back whatever its exit. The fleet
/// keeps being applied meanwhile, so the views are current when the TUI returns.
async fn hand_over<B: Backend>(
    terminal: &mut Terminal<B>,
    console: &mut dyn Console,
    model: &mut Model,
    fleet: &mut mpsc::Receiver<Event>,
    effects: &mut dyn Effects,
    results: &mpsc::UnboundedSender<Msg>,
    launch: Launch,
) -> Result<PluginEnded, TerminalFailed>
where
    B::Error: Send + Sync + 'static,
{
    let what = launch.describe();
    let prepared = match effects.prepare(launch) {
        Ok(p) => p,
        Err(why) => {
            return Ok(PluginEnded {
                what,
                exit: Exit::NotRun(why.to_string()),
                tail: Vec::new(),
            });
        }
    };
    console.release().map_err(TerminalFailed::terminal)?;
    let exit = match prepared.command().spawn() {
        Err(e) => Exit::NotRun(format!("cannot start it: {e}")),
        Ok(mut child) => {
            let mut batch = Vec::with_capacity(1024);
            let mut open = true;
            loop {
                tokio::select! {
                    status = child.wait() => break Exit::of(status),
                    n = fleet.recv_many(&mut batch, 1024), if open => {
                        if n == 0 {
                            open = false;
                        } else {
                            for effect in update(model, Msg::Fleet(std::mem::take(&mut batch))) {
                                effects.start(effect, results.clone());
                            }
                        }
                    }
                }
            }
        }
    };
    console.reclaim().map_err(TerminalFailed::terminal)?;
    // The screen was cleared: an empty frame makes the next one draw every cell again.
    // (`Terminal::clear` would ask the terminal where its cursor is, racing the key reader.)
    terminal
        .draw(|frame| frame.render_widget(ratatui::widgets::Clear, frame.area()))
        .map_err(TerminalFailed::terminal)?;
    Ok(prepared.finish(exit, Vec::new()))
}
