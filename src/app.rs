//! The TUI's state and its changes: the model, messages, the update function, typed commands
//! and the keymap, plugins planned and handed the terminal. No terminal and no drawing: the
//! event loop ([`crate::tui`]) drives it and [`crate::ui`] draws it.

pub mod command;
mod delivered;
mod drift;
mod evidence;
mod flux_action;
pub mod handoff;
pub mod key_action;
pub mod keymap;
mod launch;
pub mod links;
pub mod map;
pub mod marks;
pub mod message;
pub mod model;
mod planning;
pub mod plugin_error;
pub mod plugins;
pub mod prompt;
mod proposal_action;
mod reads;
pub mod rows;
mod settings;
pub mod spreads;
mod trace;
pub mod triage;
pub mod update;
pub mod view;

pub use model::Fit;
