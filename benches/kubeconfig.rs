//! A kubeconfig of 20,000 contexts (as a fleet's single file is), read into the inventory:
//! parsed with the budget that grows with the file, every context resolved to its cluster and
//! user — once with every user written out, once as Python's `yaml.safe_dump` writes a user map
//! they all share (one anchor, 19,999 aliases). `cargo bench --bench kubeconfig`; the figures are
//! in docs/performance.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark

use std::time::Instant;

/// `n` contexts; `shared`: their users one map, an anchor and aliases of it.
fn fleet(n: usize, shared: bool) -> String {
    let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for i in 0..n {
        text.push_str(&format!(
            "- name: c{i}\n  cluster:\n    server: https://10.{}.{}.{}:6443\n    certificate-authority-data: {}\n",
            i / 65_536,
            (i / 256) % 256,
            i % 256,
            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENC".repeat(20)
        ));
    }
    text.push_str("users:\n");
    for i in 0..n {
        match (shared, i) {
            (false, _) => {
                text.push_str(&format!("- name: u{i}\n  user:\n    token: token-{i:08}\n"))
            }
            (true, 0) => text.push_str("- name: u0\n  user: &id001\n    token: token-shared\n"),
            (true, _) => text.push_str(&format!("- name: u{i}\n  user: *id001\n")),
        }
    }
    text.push_str("contexts:\n");
    for i in 0..n {
        text.push_str(&format!(
            "- name: ctx-{i}\n  context:\n    cluster: c{i}\n    user: u{i}\n"
        ));
    }
    text
}

fn main() {
    for (shared, what) in [
        (false, "users written out"),
        (true, "users as aliases of one anchor"),
    ] {
        measure(20_000, shared, what);
    }
}

fn measure(contexts: usize, shared: bool, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.kubeconfig");
    std::fs::write(&path, fleet(contexts, shared)).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let config = fluxfleet::config::Config::defaults();
    let request = fluxfleet::inventory::Lookup {
        kubeconfigs: vec![path],
        ..Default::default()
    };
    let mut parsing = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let config = fluxfleet::inventory::yaml::read(&request.kubeconfigs[0]).unwrap();
        parsing.push(started.elapsed());
        assert_eq!(config.contexts.len(), contexts);
    }
    parsing.sort();
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let inventory = fluxfleet::inventory::load(&request, &config);
        times.push(started.elapsed());
        assert_eq!(
            inventory.clusters.len(),
            contexts,
            "{:?}",
            inventory.problems
        );
    }
    times.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!(
        "kubeconfig of {contexts} contexts, {what} ({:.1} MiB): parsed in a median {:.0} ms ({:.0}–{:.0}); into the inventory (parsed, every context resolved) {:.0} ms ({:.0}–{:.0}), 5 runs each",
        size as f64 / 1048576.0,
        ms(parsing[2]),
        ms(parsing[0]),
        ms(parsing[4]),
        ms(times[2]),
        ms(times[0]),
        ms(times[4])
    );
}
