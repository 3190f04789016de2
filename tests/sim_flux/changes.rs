//! The simulated fleet changing on its own: churn makes objects fail and recover, and rollouts
//! move new revisions ring by ring.

use super::*;

#[tokio::test]
async fn churn_makes_objects_fail_and_recover() {
    let sim = start_with(|c| {
        c.churn = 200.0;
        c.rollout_interval = Duration::from_secs(3600);
    })
    .await;
    let health =
        |t: Vec<fluxfleet_sim::TruthCluster>| -> std::collections::HashMap<String, Health> {
            t.into_iter()
                .flat_map(|c| {
                    let cluster = c.name;
                    c.objects.into_iter().map(move |o| {
                        (
                            format!("{cluster}/{}/{}/{}", o.kind, o.namespace, o.name),
                            meant(o.health),
                        )
                    })
                })
                .collect()
        };
    let before = health(sim.handle.truth());
    eventually(
        "a ready object fails and a failing one recovers",
        || async {
            let now = health(sim.handle.truth());
            let moved = |from: Health, to: Health| {
                before
                    .iter()
                    .any(|(k, h)| *h == from && now.get(k) == Some(&to))
            };
            moved(Health::Ready, Health::Failed) && moved(Health::Failed, Health::Ready)
        },
    )
    .await;
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn a_rollout_moves_workspaces_to_a_new_revision_ring_by_ring() {
    // The first ring moves at once; the second waits a rollout step (30 s, longer than the test).
    let sim = start_with(|c| {
        c.churn = 0.001;
        c.rollout_interval = Duration::from_millis(200);
        c.rollout_step = Duration::from_secs(30);
    })
    .await;
    let names = sim.handle.cluster_names();
    let git = resource(
        "source.toolkit.fluxcd.io",
        "v1",
        "GitRepository",
        "gitrepositories",
    );
    let mut repos = Vec::new();
    for name in &names[..2] {
        let client = client(&sim.handle.files.fleet, name).await;
        repos.push(api(&client, &git, Some("flux-system")));
    }
    let revision = |v: Value| {
        status_str(&v, "/status/artifact/revision")
            .unwrap()
            .to_string()
    };
    let first = revision(serde_json::to_value(repos[0].get("flux-system").await.unwrap()).unwrap());
    let second =
        revision(serde_json::to_value(repos[1].get("flux-system").await.unwrap()).unwrap());
    assert!(first.starts_with("main@sha1:"));
    assert_ne!(
        first, second,
        "a rollout is already under way: the rings run different revisions"
    );
    eventually("the first ring gets a new revision", || async {
        let v = serde_json::to_value(repos[0].get("flux-system").await.unwrap()).unwrap();
        revision(v) != first
    })
    .await;
    let later = revision(serde_json::to_value(repos[1].get("flux-system").await.unwrap()).unwrap());
    assert_eq!(later, second, "the next ring waits for its step");
    sim.handle.shutdown().await;
}
