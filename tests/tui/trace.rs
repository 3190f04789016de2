//! `T` in the detail view: where its object comes from on every cluster, in a view of its own;
//! once `w` has read its workloads, where the first of them comes from.

use super::*;
use fluxfleet::fleet::trace::{Applier, Chain, ChainLink, ClusterChain, fold};

/// A trace of `kind apps/name`: applied by Kustomization flux-system/apps on `a`, by hand on
/// `b`.
fn traced(kind: &str, name: &str, a: &[&str], b: &[&str]) -> fluxfleet::fleet::trace::Trace {
    let chain = |appliers: Vec<Applier>| Chain {
        objects: vec![ChainLink {
            kind: kind.into(),
            namespace: "apps".into(),
            name: name.into(),
        }],
        appliers,
        stop: None,
    };
    let apps = Applier {
        kind: FluxKind::Kustomization,
        namespace: "flux-system".into(),
        name: "apps".into(),
        revision: Some("main@sha1:1a2b3c".into()),
        origin_revision: None,
        source: None,
    };
    let read = a
        .iter()
        .map(|c| {
            (
                c.to_string(),
                Ok(ClusterChain::Found(chain(vec![apps.clone()]))),
            )
        })
        .chain(
            b.iter()
                .map(|c| (c.to_string(), Ok(ClusterChain::Found(chain(Vec::new()))))),
        )
        .collect();
    fold(read)
}

#[test]
fn t_traces_the_detail_views_object_on_every_cluster_and_shows_the_chains() {
    let (mut m, _, redis) = redis_detail();
    let effects = keys(&mut m, KeyCode::Char('T'));
    let [Effect::FetchTrace { asked, infos }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(
        (
            asked.kind.as_str(),
            asked.namespace.as_str(),
            asked.name.as_str()
        ),
        ("HelmRelease", redis.namespace.as_ref(), redis.name.as_ref())
    );
    // Every cluster of the fleet, not only the detail view's.
    assert_eq!(infos.len(), m.index().entries().count());
    assert_eq!(m.screen().view, View::Trace(Box::new(asked.clone())));
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("trace")));
    // An answer about something else changes nothing; its own is shown.
    let mut other = asked.clone();
    other.name = "other".into();
    update(
        &mut m,
        Msg::Traced {
            asked: other,
            trace: Box::new(traced("HelmRelease", "x", &["pay-prod-eu"], &[])),
        },
    );
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("trace")));
    let trace = traced(
        "HelmRelease",
        &redis.name,
        &["pay-prod-eu", "pay-prod-us", "shop-dev-1"],
        &["shop-dev-2"],
    );
    update(
        &mut m,
        Msg::Traced {
            asked: asked.clone(),
            trace: Box::new(trace),
        },
    );
    let screen = common::tui::screen(&mut m, 140, 16);
    assert!(
        screen.contains("on 4 of 4 clusters — 2 chains: the copies differ"),
        "{screen}"
    );
    assert!(
        screen.contains("differs: HelmRelease apps/redis — not managed by Flux"),
        "{screen}"
    );
    assert!(
        screen.contains("pay-prod-eu, pay-prod-us, shop-dev-1"),
        "{screen}"
    );
    key(&mut m, KeyCode::Esc);
    assert!(matches!(m.screen().view, View::Detail { .. }));
}

#[test]
fn once_w_has_read_the_workloads_t_traces_the_first_of_them() {
    let (mut m, cluster, redis) = redis_detail();
    keys(&mut m, KeyCode::Char('w'));
    let folded = apps_evidence(&["pay-prod-eu"]);
    let first = folded.lines[0].workload.clone();
    update(
        &mut m,
        Msg::Workloads {
            key: redis,
            clusters: vec![cluster].into(),
            folded: Box::new(folded),
        },
    );
    let effects = keys(&mut m, KeyCode::Char('T'));
    let [Effect::FetchTrace { asked, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(asked.kind, first.kind.as_str());
    assert_eq!(
        (asked.namespace.as_str(), asked.name.as_str()),
        (first.namespace.as_str(), first.name.as_str())
    );
    assert!(
        asked.resource.is_some(),
        "a workload kind is known without asking"
    );
}

#[test]
fn i_shows_the_detail_views_release_as_one_tree_for_the_fleet() {
    use fluxfleet::fleet::tree::{ClusterTree, Entry, Planted};
    let (mut m, _, redis) = redis_detail();
    let effects = keys(&mut m, KeyCode::Char('i'));
    let [Effect::FetchTree { root, infos }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(root, &redis);
    assert_eq!(infos.len(), m.index().entries().count());
    assert_eq!(m.screen().view, View::Tree(Box::new(redis.clone())));
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("tree")));
    // The release's Deployment on two clusters, its Service on one.
    let planted = |with_service: bool| {
        let mut root = Planted::leaf(Entry::of(&redis));
        root.health = Some(fluxfleet::fleet::Health::Ready);
        let id = |kind: &str, group: &str| format!("{}_redis_{group}_{kind}", redis.namespace);
        root.children.push(Planted::leaf(
            Entry::parse(&id("Deployment", "apps")).unwrap(),
        ));
        if with_service {
            root.children
                .push(Planted::leaf(Entry::parse(&id("Service", "")).unwrap()));
        }
        Ok(ClusterTree::Found(root))
    };
    let tree = fluxfleet::fleet::tree::fold(vec![
        ("pay-prod-eu".into(), planted(true)),
        ("pay-prod-us".into(), planted(false)),
    ]);
    update(
        &mut m,
        Msg::Grown {
            root: redis.clone(),
            tree: Box::new(tree),
        },
    );
    let screen = common::tui::screen(&mut m, 140, 16);
    for said in [
        "on 2 of 2 clusters — the clusters' trees differ",
        &format!("├── Deployment/{}/redis  on 2", redis.namespace),
        &format!("└── Service/{}/redis  on 1 of 2", redis.namespace),
        "not on pay-prod-us",
        "ready 2",
    ] {
        assert!(screen.contains(said), "{said}: {screen}");
    }
    key(&mut m, KeyCode::Esc);
    assert!(matches!(m.screen().view, View::Detail { .. }));
}

/// The id of the cluster named `name` in the test fleet.
fn id_of(m: &Model, name: &str) -> ClusterId {
    let entry = m.index().cluster_named(name).unwrap();
    m.index().id_of(&entry.info.key).unwrap()
}

#[test]
fn the_arrows_pick_a_chain_and_enter_opens_its_copy_and_esc_comes_back() {
    let (mut m, _, redis) = redis_detail();
    let effects = keys(&mut m, KeyCode::Char('T'));
    let [Effect::FetchTrace { asked, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    let trace = traced(
        "HelmRelease",
        &redis.name,
        &["pay-prod-eu", "pay-prod-us"],
        &["shop-dev-2"],
    );
    let asked = asked.clone();
    update(
        &mut m,
        Msg::Traced {
            asked: asked.clone(),
            trace: Box::new(trace),
        },
    );
    // The majority's chain: its nearest applier, on its first cluster.
    key(&mut m, KeyCode::Enter);
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    assert_eq!(
        m.screen().view,
        View::Detail {
            cluster: id_of(&m, "pay-prod-eu"),
            key: apps
        }
    );
    // Back: the trace as it was, the same chain picked.
    key(&mut m, KeyCode::Esc);
    assert_eq!(m.screen().view, View::Trace(Box::new(asked)));
    assert!(matches!(m.reads().fetched(), Some(Fetched::Trace(_))));
    // The copy not managed by Flux: its cluster.
    key(&mut m, KeyCode::Down);
    key(&mut m, KeyCode::Down);
    assert_eq!(m.reads().picked(), 1, "the last chain, and no further");
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.screen().view, View::Cluster(id_of(&m, "shop-dev-2")));
}

#[test]
fn in_a_tree_enter_opens_a_flux_object_on_a_cluster_that_has_it() {
    use fluxfleet::fleet::tree::{ClusterTree, Entry, Planted};
    let (mut m, _, redis) = redis_detail();
    keys(&mut m, KeyCode::Char('i'));
    let child = |id: &str| Planted::leaf(Entry::parse(id).unwrap());
    let planted = |with_ks: bool| {
        let mut root = Planted::leaf(Entry::of(&redis));
        root.health = Some(fluxfleet::fleet::Health::Ready);
        root.children.push(child("data_redis_apps_Deployment"));
        if with_ks {
            root.children.push(child(
                "data_extra_kustomize.toolkit.fluxcd.io_Kustomization",
            ));
        }
        Ok(ClusterTree::Found(root))
    };
    let tree = fluxfleet::fleet::tree::fold(vec![
        ("pay-prod-eu".into(), planted(false)),
        ("shop-dev-1".into(), planted(true)),
    ]);
    update(
        &mut m,
        Msg::Grown {
            root: redis.clone(),
            tree: Box::new(tree),
        },
    );
    // The Kustomization only shop-dev-1 has: its detail there.
    key(&mut m, KeyCode::Char('G'));
    key(&mut m, KeyCode::Enter);
    assert_eq!(
        m.screen().view,
        View::Detail {
            cluster: id_of(&m, "shop-dev-1"),
            key: ObjectKey::new(FluxKind::Kustomization, "data", "extra")
        }
    );
    key(&mut m, KeyCode::Esc);
    // The Deployment: its first cluster.
    key(&mut m, KeyCode::Up);
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.screen().view, View::Cluster(id_of(&m, "pay-prod-eu")));
}

#[test]
fn in_the_workloads_view_the_arrows_pick_a_workload_and_t_traces_it() {
    let (mut m, cluster, redis) = redis_detail();
    let clusters: std::sync::Arc<[ClusterId]> = vec![cluster].into();
    m.push(View::Workloads {
        key: redis.clone(),
        clusters: clusters.clone(),
    });
    // Two workloads: the folded verdicts of apps, and a copy of them about another Deployment.
    let mut folded = apps_evidence(&["pay-prod-eu", "pay-prod-us"]);
    let mut other = folded.lines[0].clone();
    other.workload.name = "worker".into();
    folded.lines.push(other);
    update(
        &mut m,
        Msg::Workloads {
            key: redis,
            clusters,
            folded: Box::new(folded),
        },
    );
    key(&mut m, KeyCode::Char('G'));
    let effects = keys(&mut m, KeyCode::Char('T'));
    let [Effect::FetchTrace { asked, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(
        (asked.kind.as_str(), asked.name.as_str()),
        ("Deployment", "worker")
    );
}

#[test]
fn in_a_tree_t_traces_the_node_picked() {
    use fluxfleet::fleet::tree::{ClusterTree, Entry, Planted};
    let (mut m, _, redis) = redis_detail();
    keys(&mut m, KeyCode::Char('i'));
    let mut root = Planted::leaf(Entry::of(&redis));
    for id in [
        "data_redis_apps_Deployment",
        "data_redis-config__ConfigMap",
        "data_redis-auth__Secret",
        "data_cache_example.com_Widget",
    ] {
        root.children.push(Planted::leaf(Entry::parse(id).unwrap()));
    }
    let tree =
        fluxfleet::fleet::tree::fold(vec![("pay-prod-eu".into(), Ok(ClusterTree::Found(root)))]);
    update(
        &mut m,
        Msg::Grown {
            root: redis,
            tree: Box::new(tree),
        },
    );
    let traced = |m: &mut Model| match keys(m, KeyCode::Char('T')).as_slice() {
        [Effect::FetchTrace { asked, .. }] => {
            let asked = asked.clone();
            key(m, KeyCode::Esc);
            Some((asked.kind, asked.name, asked.resource.is_some()))
        }
        [] => None,
        other => panic!("{other:?}"),
    };
    key(&mut m, KeyCode::Down);
    assert_eq!(
        traced(&mut m),
        Some(("Deployment".into(), "redis".into(), true))
    );
    // A kind known only by its group: found in each cluster's discovery.
    key(&mut m, KeyCode::Char('G'));
    assert_eq!(
        traced(&mut m),
        Some(("Widget.example.com".into(), "cache".into(), false))
    );
    // A Secret is never read.
    key(&mut m, KeyCode::Up);
    assert_eq!(traced(&mut m), None);
    assert!(m.flash().is_some_and(|f| f.contains("never a Secret")));
}
