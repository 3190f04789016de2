//! The whole TUI on a recording test backend, and the person at its keyboard: keys typed,
//! frames read as text, the window resized.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::config::{Config, Mode};
use fluxfleet::inventory;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use tokio::sync::watch;

/// A test backend that publishes every finished frame as text and can be resized from outside,
/// as a terminal window would be.
pub struct Recording {
    inner: TestBackend,
    size: Arc<Mutex<Size>>,
    frames: watch::Sender<String>,
}

impl Recording {
    /// Follows the window size, like a real terminal's buffer does.
    pub fn follow(&mut self) {
        let want = *self.size.lock().unwrap();
        let have = self.inner.buffer().area;
        if (have.width, have.height) != (want.width, want.height) {
            self.inner.resize(want.width, want.height);
        }
    }
}

impl Backend for Recording {
    type Error = <TestBackend as Backend>::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.follow();
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.follow();
        self.inner.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.follow();
        self.inner.clear_region(clear_type)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        Ok(*self.size.lock().unwrap())
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()?;
        let buffer = self.inner.buffer();
        let width = usize::from(buffer.area.width).max(1);
        let text: Vec<String> = buffer
            .content
            .chunks(width)
            .map(|row| row.iter().map(Cell::symbol).collect())
            .collect();
        self.frames.send_replace(text.join("\n"));
        Ok(())
    }
}

/// The person at the keyboard.
pub struct Person {
    keys: UnboundedSender<std::io::Result<TermEvent>>,
    frames: watch::Receiver<String>,
    size: Arc<Mutex<Size>>,
}

impl Person {
    pub fn press(&self, code: KeyCode) {
        let key = KeyEvent::new(code, KeyModifiers::NONE);
        self.keys.unbounded_send(Ok(TermEvent::Key(key))).unwrap();
    }

    pub fn chord(&self, code: KeyCode, modifiers: KeyModifiers) {
        let key = KeyEvent::new(code, modifiers);
        self.keys.unbounded_send(Ok(TermEvent::Key(key))).unwrap();
    }

    /// `:line⏎`
    pub fn command(&self, line: &str) {
        self.press(KeyCode::Char(':'));
        self.type_text(line);
        self.press(KeyCode::Enter);
    }

    pub fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    /// Filters the list with `/text`, then opens the first row.
    pub fn open(&self, text: &str) {
        self.press(KeyCode::Char('/'));
        self.type_text(text);
        self.press(KeyCode::Enter);
        self.press(KeyCode::Enter);
    }

    pub fn resize(&self, width: u16, height: u16) {
        *self.size.lock().unwrap() = Size { width, height };
        let event = TermEvent::Resize(width, height);
        self.keys.unbounded_send(Ok(event)).unwrap();
    }

    /// Waits (bounded) until the screen shows what `ok` looks for; returns that screen.
    /// Once all `clusters` are live: the rollout matrix of the Kustomization `namespace/name`.
    pub async fn in_the_matrix(&mut self, clusters: usize, namespace: &str, name: &str) {
        let live = format!("clusters {clusters}/{clusters} live");
        self.sees("every cluster live", |s| s.contains(&live)).await;
        self.command("rollout ks");
        self.press(KeyCode::Char('/'));
        self.type_text(&format!("{namespace}/{name}"));
        self.press(KeyCode::Enter);
        self.press(KeyCode::Enter);
        let title = format!("Kustomization {namespace}/{name}");
        self.sees("the matrix", |s| s.contains(&title)).await;
    }

    pub async fn sees(&mut self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let wait = async {
            loop {
                let screen = self.frames.borrow_and_update().clone();
                if ok(&screen) {
                    return screen;
                }
                if self.frames.changed().await.is_err() {
                    panic!("the TUI ended while waiting for {what}:\n{screen}");
                }
            }
        };
        match tokio::time::timeout(Duration::from_secs(30), wait).await {
            Ok(screen) => screen,
            Err(_) => panic!(
                "the screen never showed {what}; last frame:\n{}",
                *self.frames.borrow()
            ),
        }
    }
}

/// The fleet of `sim` as the TUI would load it.
pub fn fleet(sim: &super::Sim) -> (Config, fluxfleet::inventory::Inventory) {
    let request = inventory::Lookup {
        dirs: vec![sim.dir.path().join("kubeconfigs")],
        ..inventory::Lookup::default()
    };
    let mut config = Config::defaults();
    config.engine.connect_timeout = Duration::from_secs(5);
    let inventory = inventory::load(&request, &config);
    assert_eq!(inventory.problems, []);
    (config, inventory)
}

/// What the session did with the terminal: "release" when it handed it to a program,
/// "reclaim" when it took it back.
pub type ConsoleLog = Arc<Mutex<Vec<&'static str>>>;

/// The whole session on a 140×40 recording backend, the person at its keyboard, and when the
/// terminal was handed over and taken back.
pub fn session(
    config: Config,
    inventory: fluxfleet::inventory::Inventory,
    mode: Option<Mode>,
    journal: Option<std::path::PathBuf>,
) -> (
    Person,
    impl std::future::Future<Output = Result<(), fluxfleet::tui::TerminalFailed>>,
    ConsoleLog,
) {
    session_of(fluxfleet::tui::Start {
        config,
        config_path: None,
        warnings: Vec::new(),
        fleet: fluxfleet::session::open::Fleet::Kubeconfigs {
            inventory,
            managements: Vec::new(),
        },
        theme: None,
        mode,
        journal,
    })
}

/// [`session`] of any start (the fleet from a bus, say).
pub fn session_of(
    start: fluxfleet::tui::Start,
) -> (
    Person,
    impl std::future::Future<Output = Result<(), fluxfleet::tui::TerminalFailed>>,
    ConsoleLog,
) {
    let size = Arc::new(Mutex::new(Size {
        width: 140,
        height: 40,
    }));
    let (frames_tx, frames) = watch::channel(String::new());
    let backend = Recording {
        inner: TestBackend::new(140, 40),
        size: size.clone(),
        frames: frames_tx,
    };
    let (keys_tx, keys) = unbounded();
    let person = Person {
        keys: keys_tx,
        frames,
        size,
    };
    let mut console = fluxfleet::tui::run::Given::new(keys);
    let log = console.log.clone();
    let app = async move {
        let mut terminal = Terminal::new(backend).unwrap();
        fluxfleet::tui::session(&mut terminal, start, &mut console).await
    };
    (person, app, log)
}

/// The model drawn once at `width` × `height` with the dark theme, as text.
pub fn screen(model: &mut fluxfleet::app::model::Model, width: u16, height: u16) -> String {
    use fluxfleet::config::theme::Theme;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let area = ratatui::layout::Rect::new(0, 0, width, height);
    fluxfleet::tui::lay_out(model, &Theme::dark(), area);
    terminal
        .draw(|f| fluxfleet::ui::render(f, model, &Theme::dark()))
        .unwrap();
    terminal.backend().to_string()
}
