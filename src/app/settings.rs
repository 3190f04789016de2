//! What the session may do and how, fixed when it starts, and what a frame measured: plain
//! values the model holds and the view and update read.

/// What the view measures of a screen of a given size, for the update step to apply: the view
/// only reads the model, and what it learns comes back as this value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fit {
    /// Rows of the body a list can use (for paging and scrolling).
    pub body_rows: usize,
    /// How far the fetched pane (events, YAML, journal, history, workloads) can scroll.
    pub fetched_max_scroll: usize,
    /// Width and height of the fleet map; (0, 0) where the view has none.
    pub map_room: (u16, u16),
}

/// What this session may do and how, fixed when it starts (copies of the config and of what
/// the session was granted).
#[derive(Clone, Debug)]
pub struct Settings {
    pub read_only: bool,
    /// Why writes are refused even with --write (guardrails that cannot be read exactly).
    pub writes_refused: Option<String>,
    /// Which clusters' modes allow writes (None: every cluster, as in tests).
    pub permissions: Option<crate::config::Permissions>,
    /// How many clusters of the fleet are writable, of how many: counted by the model when it
    /// is given its settings and when clusters join or leave.
    pub writable: (usize, usize),
    /// Confirmation threshold, bulk limit and deny rules.
    pub actions: crate::config::Actions,
    /// Rings and stuck rules for the rollout view.
    pub rollout: crate::config::RolloutSection,
    /// The plugins of the config, as the keymap numbers them.
    pub plugins: Vec<super::plugins::Plugin>,
    /// The local user, recorded as the suspender.
    pub user: String,
}

impl Default for Settings {
    fn default() -> Settings {
        let config = crate::config::Config::defaults();
        Settings {
            read_only: false,
            writes_refused: None,
            permissions: None,
            writable: (0, 0),
            actions: config.actions,
            rollout: config.rollout,
            plugins: Vec::new(),
            user: "unknown".into(),
        }
    }
}
