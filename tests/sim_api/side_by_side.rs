//! Simulators run side by side: the second numbers its clusters on from where the first stops.

use super::*;

#[tokio::test]
async fn simulators_side_by_side_number_their_clusters_on_from_where_the_other_stops() {
    let first = common::start_with(|c| {
        c.clusters = 8;
        c.workspaces = 2;
        c.objects = 2;
    })
    .await;
    let second = common::start_with(|c| {
        c.clusters = 8;
        c.workspaces = 2;
        c.objects = 2;
        c.first_cluster = 8;
    })
    .await;
    let one: Vec<String> = first.handle.cluster_names();
    let two: Vec<String> = second.handle.cluster_names();
    assert!(one.iter().all(|n| !two.contains(n)), "{one:?} {two:?}");
    // Together, the numbering of one simulator of sixteen.
    let whole = common::start_with(|c| {
        c.clusters = 16;
        c.workspaces = 2;
        c.objects = 2;
    })
    .await;
    let mut both: Vec<String> = one.into_iter().chain(two).collect();
    let mut all = whole.handle.cluster_names();
    both.sort();
    all.sort();
    assert_eq!(both, all);
    for sim in [first, second, whole] {
        sim.handle.shutdown().await;
    }
}
