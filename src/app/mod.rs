//! The TUI's model, messages, update function and event loop.

pub mod action;
pub mod keymap;
