//! What a headless command tells a person on the way, and how it asks them to confirm: the
//! command says it to an [`Edge`]; the edge (`cli`) makes the lines.

use std::time::Duration;

/// Where a command tells a person what happens on the way, and asks them to confirm: the
/// terminal for the command line, a recorder in tests.
pub trait Edge: Send + Sync {
    /// Something to tell a person now.
    fn said(&self, said: Said);
    /// Whether a progress line redrawn in place is seen (a terminal).
    fn shows_progress(&self) -> bool;
    /// Asks a person to confirm.
    fn confirm(&self, asked: &Confirm) -> Confirmed;
}

/// Something a command tells a person on the way, besides its output.
#[derive(Clone, Debug, PartialEq)]
pub enum Said {
    /// Something read inexactly (a source, a config, a proposal), and gone on without.
    Warning(String),
    /// What a command that follows the bus waits for (nothing published yet, not reachable).
    Waiting(String),
    /// The clusters in the scope that are not seen completely, when the output was made;
    /// `settled` is false when the timeout passed before every cluster answered.
    NotLive {
        settled: bool,
        clusters: Vec<NotLive>,
    },
    /// The selection matched no Flux object (the table would be empty).
    NoObjects,
    /// An action's progress: a line redrawn where that is seen, the last one kept.
    Progress {
        line: String,
        elapsed: Duration,
        last: bool,
    },
    /// A line for a person: what a dry run would do, what an approval shows, what is watched.
    Note(String),
}

/// A cluster not seen completely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotLive {
    pub workspace: String,
    pub cluster: String,
    /// Its phase.
    pub state: String,
    /// When it is tried again ("in 5s", or "-").
    pub retry: String,
    pub error: String,
}

/// What confirming an action asks a person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirm {
    /// "suspend 12 objects on 4 clusters".
    pub what: String,
    /// What they type to confirm: the count, or `y`.
    pub wanted: String,
}

/// A person's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmed {
    Yes,
    No,
    /// Nobody can be asked: no terminal.
    NoTerminal,
}
