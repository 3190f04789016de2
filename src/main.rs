//! The `fluxfleet` binary: parse the command line and run the command (`cli::dispatch`).

use std::process::ExitCode;

/// mimalloc: reading a fleet allocates and frees millions of small values across threads, and
/// glibc's malloc spent a fifth of a 2,000-cluster start-up on it (1.6 s instead of 2.1 s).
/// Without transparent huge pages, which would round each thread's memory up to 2 MiB pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = fluxfleet::cli::Cli::parse_args();
    // One socket per cluster (and per watch over HTTP/1.1): a fleet needs more descriptors than
    // the usual soft limit of 1024. Failing to raise it is not fatal.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    fluxfleet::cli::dispatch::run(cli)
}
