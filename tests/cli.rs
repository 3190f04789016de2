//! The command line's own conventions: completion scripts every shell can load, and a version
//! that names the Flux APIs this build reads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Output};

mod completions;
mod no_kubeconfig;
mod options;
mod parsing;
mod version;

fn fluxfleet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env_remove("KUBECONFIG")
        .args(args)
        .output()
        .unwrap()
}
