//! The whole TUI, headless, against an in-process simulated fleet: the real session (config,
//! engine, event loop, fetches) on a recording test backend, driven by key events the way a
//! person would type them — fleet → workspace → cluster → a failing object → its events and YAML
//! — and checked on the rendered screen, including a resize to 80×24.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::truth::seen;
use common::tui::{Person, fleet, session};

use crossterm::event::{KeyCode, KeyModifiers};
use fluxfleet::config::Mode;
use fluxfleet::fleet::FluxKind;
use k8s_openapi::api::core::v1::Event as KubeEvent;
use kube::api::{Api, ListParams};

mod actions;
mod browsing;
mod halt;

/// The journal's lines once it holds `outcomes` outcome lines (it is written when every target
/// of an action has one, after the screen shows it).
async fn journaled(journal: &std::path::Path, outcomes: usize) -> Vec<serde_json::Value> {
    common::eventually("the journal's outcome lines", || async {
        std::fs::read_to_string(journal)
            .unwrap_or_default()
            .matches("\"stage\":\"outcome\"")
            .count()
            == outcomes
    })
    .await;
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
