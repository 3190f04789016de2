//! The tests that need no NATS server, in one binary (`cargo test --test local`; one file's
//! tests: `cargo test --test local tui::`). One binary rather than one per file: each of ~40
//! binaries linked the whole crate again, which was most of CI's build (docs/development.md).
//! Every file beside this one is a module of this binary or of `tests/nats.rs`
//! (the test at the end checks that none is left out).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

// The chaos harness (shared with `cargo bench --bench chaos`) finds `truth` at the crate root.
#[path = "chaos/harness.rs"]
mod harness;
use common::truth;

// The crate's own mutator, compiled here too: test helpers are not the crate's public API.
#[path = "../src/hostile.rs"]
#[allow(dead_code)]
mod hostile;

mod action_events;
mod action_speed;
mod actions;
mod alert;
mod chaos;
mod cli;
mod discovery;
mod docs;
mod doors_halt_plugin;
mod drain;
mod drift;
mod engine;
mod exec_auth;
mod fleet_samples;
mod flux_verbs;
mod front_doors;
mod get_cli;
mod h2_hostile;
mod hostile_bytes;
mod house;
mod imports;
mod incidents;
mod kubeconfig_forms;
mod manifests;
mod mcp;
mod mcp_http;
mod mcp_impersonate;
mod mcp_oauth;
mod mcp_proposals;
mod mcp_strict;
mod mcp_writes;
mod outcomes;
mod plugins;
mod real_flux;
mod real_workloads;
mod reports;
mod rollout;
mod root_causes;
mod screenshots;
mod security;
mod sim_api;
mod sim_cli;
mod sim_faults;
mod sim_flux;
mod sources;
mod story;
mod streaming_lists;
mod summary;
mod timelines;
mod timelines_sim;
mod trace;
mod trace_real;
mod tree;
mod tree_real;
mod tui;
mod tui_incidents;
mod tui_live;
mod workloads;

/// A file added to `tests/` runs only once a test binary declares it (`autotests = false`): every
/// file here is a module of `tests/local.rs` or `tests/nats.rs`, or one of the two.
#[test]
fn every_file_in_tests_is_a_module_of_a_test_binary() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let declared: String = ["local.rs", "nats.rs"]
        .iter()
        .map(|root| std::fs::read_to_string(dir.join(root)).unwrap())
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        if !["local", "nats"].contains(&stem) && !declared.contains(&format!("\nmod {stem};\n")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "declare these in tests/local.rs or tests/nats.rs: {missing:?}"
    );
}
