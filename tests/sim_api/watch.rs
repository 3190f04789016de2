//! The simulated API server's watches: resumed, bookmarked, expired with 410 and relisted, and
//! narrowed by a label selector.

use super::*;

async fn next_event(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<DynamicObject>>> + Unpin),
) -> WatchEvent<DynamicObject> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open")
        .expect("no transport error")
}

#[tokio::test]
async fn watch_resumes_streams_changes_and_sends_bookmarks() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), Some("flux-system"));
    let list = ks.list(&ListParams::default()).await.unwrap();
    let rv = list.metadata.resource_version.clone().unwrap();
    let mut stream = ks
        .watch(&WatchParams::default().timeout(60), &rv)
        .await
        .unwrap()
        .boxed();
    ks.patch(
        "apps",
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"labels": {"x": "1"}}})),
    )
    .await
    .unwrap();
    let mut saw_modified = false;
    let mut saw_bookmark = false;
    while !(saw_modified && saw_bookmark) {
        match next_event(&mut stream).await {
            WatchEvent::Modified(o) if o.metadata.name.as_deref() == Some("apps") => {
                assert_eq!(o.metadata.labels.unwrap()["x"], "1");
                saw_modified = true;
            }
            WatchEvent::Bookmark(b) => {
                assert!(
                    b.metadata.resource_version.parse::<u64>().unwrap()
                        >= rv.parse::<u64>().unwrap()
                );
                saw_bookmark = true;
            }
            WatchEvent::Error(e) => panic!("unexpected watch error {e:?}"),
            _ => {}
        }
    }
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn watch_from_a_compacted_version_gets_410_then_a_relist_works() {
    let sim = start().await;
    let (name, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), None);
    let rv = ks
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let ns_ks = api(&client, &kustomizations(), Some("flux-system"));
    ns_ks
        .patch(
            "apps",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"y": "1"}}})),
        )
        .await
        .unwrap();
    assert!(sim.handle.compact(&name));
    let mut stream = ks
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
        }
        other => panic!("expected 410, got {other:?}"),
    }
    // The relist gives a fresh resourceVersion from which watching works again.
    let fresh = ks.list(&ListParams::default()).await.unwrap();
    assert!(fresh.items.iter().any(|o| {
        o.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("y"))
    }));
    let mut stream = ks
        .watch(
            &WatchParams::default(),
            fresh.metadata.resource_version.as_ref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    ns_ks
        .patch(
            "apps",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"y": "2"}}})),
        )
        .await
        .unwrap();
    assert!(matches!(
        next_event(&mut stream).await,
        WatchEvent::Modified(_)
    ));
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn kube_runtime_watcher_recovers_from_a_410_storm() {
    use kube::runtime::watcher;
    let sim = start().await;
    let (name, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), None);
    let mut events = watcher::watcher(ks.clone(), watcher::Config::default()).boxed();
    let (mut init_done, mut gone) = (0, 0);
    while init_done < 2 {
        let ev = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("in time")
            .expect("open");
        let Ok(ev) = ev else {
            // The 410 surfaces as an error item; the watcher relists by itself.
            gone += 1;
            continue;
        };
        if let watcher::Event::InitDone = ev {
            init_done += 1;
            if init_done == 1 {
                // Forget the history and change something: the watch must get 410 and relist.
                sim.handle.compact(&name);
                let ns_ks = api(&client, &kustomizations(), Some("flux-system"));
                ns_ks
                    .patch(
                        "apps",
                        &PatchParams::default(),
                        &Patch::Merge(&json!({"metadata": {"labels": {"z": "1"}}})),
                    )
                    .await
                    .unwrap();
            }
        }
    }
    assert_eq!(gone, 1, "exactly one 410 before the relist");
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn a_label_selected_watch_sees_objects_enter_and_leave_its_selection() {
    let sim = start().await;
    let (_, client) = first_cluster(&sim).await;
    let ks = api(&client, &kustomizations(), Some("flux-system"));
    let rv = ks
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let wp = WatchParams::default()
        .labels("team=sre")
        .disable_bookmarks()
        .timeout(60);
    let mut stream = ks.watch(&wp, &rv).await.unwrap().boxed();
    let label = |v: Option<&str>| json!({"metadata": {"labels": {"team": v}}});
    let pp = PatchParams::default();
    ks.patch("apps", &pp, &Patch::Merge(&label(Some("sre"))))
        .await
        .unwrap();
    assert!(
        matches!(next_event(&mut stream).await, WatchEvent::Added(o) if o.metadata.name.as_deref() == Some("apps"))
    );
    ks.patch(
        "apps",
        &pp,
        &Patch::Merge(&json!({"spec": {"interval": "3m0s"}})),
    )
    .await
    .unwrap();
    assert!(matches!(
        next_event(&mut stream).await,
        WatchEvent::Modified(_)
    ));
    ks.patch("apps", &pp, &Patch::Merge(&label(None)))
        .await
        .unwrap();
    assert!(
        matches!(next_event(&mut stream).await, WatchEvent::Deleted(o) if o.metadata.name.as_deref() == Some("apps"))
    );
    sim.handle.shutdown().await;
}
