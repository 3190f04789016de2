use super::*;
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterInfo, Connection, FluxKind, Phase};

#[test]
fn only_objects_whose_kind_is_watched_on_their_cluster_wait_for_the_watch() {
    let mut index = Index::new();
    let cluster = index.add_cluster(ClusterInfo::new("prod", "payments"));
    let mut live = Connection::new(Phase::Live);
    live.watching = std::sync::Arc::new([(FluxKind::Kustomization, "v1".into()).into()]);
    let key = index.cluster(cluster).map(|c| c.info.key.clone()).unwrap();
    index.apply(Event {
        cluster: key,
        at: jiff::Timestamp::UNIX_EPOCH,
        change: Change::Connection(live),
    });
    let waiter = |kind| Waiter {
        cluster,
        key: ObjectKey::new(kind, "flux-system", "apps"),
        who: Awaited::Target(0),
        deadline: tokio::time::Instant::now(),
    };
    assert!(watched(&index, &waiter(FluxKind::Kustomization)));
    assert!(
        !watched(&index, &waiter(FluxKind::GitRepository)),
        "no GitRepository watch: it is read until handled"
    );
}
