//! Fuzzing the HTTP/2 client's decoders on the stable toolchain: each target's seeds (and any
//! files of `--corpus DIR/TARGET/`) mutated by a seeded generator, every input run under
//! `catch_unwind`. A panic or a broken promise stops the run and writes the input to
//! `--out DIR` (default `target/fuzz-findings`) for a test to replay.
//!
//!     cargo run --release -p fluxfleet-h2 --features testing --example fuzz -- [frames|hpack|huffman|all]
//!         [--seed N] [--runs N] [--seconds N] [--corpus DIR] [--out DIR]
//!
//! docs/fuzzing.md has what each target promises and how long a run takes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a developer's tool

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use fluxfleet_h2::fuzz::{Rng, TARGETS, mutate, seeds};

/// The largest input tried: frames larger than one are cut short by the driver anyway.
const MAX_INPUT: usize = 64 * 1024;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut which = "all".to_string();
    let (mut seed, mut runs, mut seconds) = (1u64, u64::MAX, 60u64);
    let mut corpus: Option<PathBuf> = None;
    let mut out = PathBuf::from("target/fuzz-findings");
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match arg.as_str() {
            "--seed" => seed = value().parse().unwrap_or(1),
            "--runs" => runs = value().parse().unwrap_or(u64::MAX),
            "--seconds" => seconds = value().parse().unwrap_or(60),
            "--corpus" => corpus = Some(PathBuf::from(value())),
            "--out" => out = PathBuf::from(value()),
            name => which = name.to_string(),
        }
    }
    let chosen: Vec<_> = TARGETS
        .iter()
        .filter(|(name, _)| which == "all" || which == *name)
        .collect();
    if chosen.is_empty() {
        eprintln!("fuzz: no target {which:?}: frames, hpack, huffman or all");
        return ExitCode::from(2);
    }
    // Quiet panics: each is reported once, as a finding.
    std::panic::set_hook(Box::new(|_| {}));
    let budget = Duration::from_secs(seconds) / chosen.len() as u32;
    for (name, target) in chosen {
        let mut inputs = seeds(name);
        if let Some(dir) = &corpus
            && let Ok(entries) = std::fs::read_dir(dir.join(name))
        {
            inputs.extend(
                entries
                    .flatten()
                    .filter_map(|e| std::fs::read(e.path()).ok()),
            );
        }
        let mut rng = Rng::new(seed);
        let started = Instant::now();
        let mut done = 0u64;
        while done < runs && started.elapsed() < budget {
            let input = &inputs[rng.below(inputs.len())];
            let other = &inputs[rng.below(inputs.len())];
            let tried = mutate(&mut rng, input, other, MAX_INPUT);
            let verdict = std::panic::catch_unwind(|| target(&tried));
            let finding = match verdict {
                Ok(Ok(())) => None,
                Ok(Err(finding)) => Some(finding.0),
                Err(_) => Some("it panicked".to_string()),
            };
            if let Some(what) = finding {
                std::fs::create_dir_all(&out).ok();
                let path = out.join(format!("{name}-seed{seed}-run{done}"));
                std::fs::write(&path, &tried).ok();
                eprintln!("fuzz {name}: {what}; the input is in {}", path.display());
                return ExitCode::FAILURE;
            }
            done += 1;
        }
        println!(
            "fuzz {name}: {done} inputs from seed {seed} in {:.1?}, nothing found",
            started.elapsed()
        );
    }
    ExitCode::SUCCESS
}
