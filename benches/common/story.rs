//! The simulator's story fleet in the benchmark's own process, and the inventory of its
//! kubeconfigs. Included by `benches/workloads.rs` and `benches/trace.rs`.

use fluxfleet::config::Config;
use fluxfleet_sim::{Handle, Scenario};

/// `clusters` in 8 workspaces, of `scenario`; the directory of its kubeconfigs lives as long as
/// the returned guard.
pub async fn fleet(
    clusters: usize,
    scenario: Scenario,
) -> (tempfile::TempDir, Handle, fluxfleet::inventory::Inventory) {
    let dir = tempfile::tempdir().unwrap();
    let sim = fluxfleet_sim::start(fluxfleet_sim::Config {
        clusters,
        workspaces: 8,
        scenario,
        out: dir.path().to_path_buf(),
        ..fluxfleet_sim::Config::default()
    })
    .await
    .unwrap();
    let inventory = fluxfleet::inventory::load(
        &fluxfleet::inventory::Lookup {
            dirs: vec![dir.path().join("kubeconfigs")],
            ..Default::default()
        },
        &Config::defaults(),
    );
    (dir, sim, inventory)
}
