//! The event loop: await a key or a batch of fleet events, drain everything queued, apply it all,
//! and render at most once per frame interval — only when something changed.

use std::time::Duration;

use crossterm::event::{Event as TermEvent, EventStream};
use futures::StreamExt;
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;

use super::model::Model;
use super::update::{Effect, Msg, update};
use crate::config::theme::Theme;
use crate::fleet::index::Event;

/// The shortest time between two frames (60 per second at most).
pub const FRAME: Duration = Duration::from_millis(16);

/// Where effects go (fetching events and YAML); results come back as messages.
pub trait Effects {
    fn start(&mut self, effect: Effect, results: mpsc::UnboundedSender<Msg>);
}

/// Runs until the user quits or the input ends. `now` is the clock (pinned in tests).
pub async fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    model: &mut Model,
    theme: &Theme,
    mut keys: impl futures::Stream<Item = std::io::Result<TermEvent>> + Unpin,
    mut fleet: mpsc::Receiver<Event>,
    effects: &mut dyn Effects,
    now: impl Fn() -> Timestamp,
) -> anyhow::Result<()>
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
            model.now = now();
            let size = terminal.size()?;
            crate::ui::fit(model, theme, size.into());
            terminal.draw(|frame| crate::ui::render(frame, model, theme))?;
            last_frame = tokio::time::Instant::now();
            dirty = false;
        }
        let next_frame = last_frame + FRAME;
        let mut msgs = Vec::new();
        tokio::select! {
            biased;
            key = keys.next() => match key {
                Some(Ok(TermEvent::Key(k))) => msgs.push(Msg::Key(k)),
                // A resize redraws: every message below marks the screen dirty.
                Some(Ok(TermEvent::Resize(..))) => {}
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(anyhow::anyhow!("reading the terminal: {e}")),
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
        for msg in msgs {
            for effect in update(model, msg) {
                effects.start(effect, results_tx.clone());
            }
        }
        dirty = true;
        if model.quit {
            return Ok(());
        }
    }
}

/// Reads terminal events.
pub fn terminal_events() -> EventStream {
    EventStream::new()
}
