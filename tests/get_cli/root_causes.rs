//! `get --root-causes`: every failing object explained by what holds it back.

use crate::common;

use serde_json::Value;

use super::{run, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_causes_explain_every_failing_object_by_what_holds_it_back() {
    let sim = common::start_with(|c| c.clusters = 24).await;
    let dir = sim.dir.path();
    let out = run(
        &["get", "--status", "failing", "--root-causes", "-o", "json"],
        dir,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let causes = doc["rootCauses"].as_array().unwrap();
    // Every failing object of the truth is a root cause on its cluster, or held back by one;
    // and nothing is both.
    let mut explained = std::collections::BTreeMap::new();
    for cause in causes {
        let root = format!(
            "{}/{}/{}",
            cause["kind"].as_str().unwrap(),
            cause["namespace"].as_str().unwrap(),
            cause["name"].as_str().unwrap()
        );
        for copy in cause["clusters"].as_array().unwrap() {
            let cluster = copy["cluster"].as_str().unwrap().to_string();
            let blocks = copy["blocks"].as_array().unwrap();
            assert!(
                blocks.iter().all(|b| b.as_str() != Some(root.as_str())),
                "{root} holds itself back on {cluster}"
            );
            explained.insert((cluster.clone(), root.clone()), "root");
            for b in blocks {
                explained.insert((cluster.clone(), b.as_str().unwrap().to_string()), "held");
            }
        }
        // A root cause waits for nothing: never a dependency that is not ready.
        assert_ne!(cause["reason"], "DependencyNotReady", "{cause}");
    }
    let mut failing = 0;
    for c in sim.handle.truth().into_iter().filter(|c| !c.management) {
        for o in c.objects.iter().filter(|o| o.health.is_failing()) {
            failing += 1;
            let key = (
                c.name.clone(),
                format!("{}/{}/{}", o.kind, o.namespace, o.name),
            );
            assert!(explained.contains_key(&key), "{key:?} is not explained");
        }
    }
    assert!(failing > 0, "the simulated fleet has failures");
    // The simulated fleet's dependency chains: some roots hold others back.
    assert!(
        causes
            .iter()
            .any(|c| c["blocks"]["most"].as_u64() > Some(0)),
        "{doc}"
    );

    let out = run(&["get", "--status", "failing", "--root-causes"], dir).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.starts_with("KIND"), "{table}");
    assert!(table.lines().next().unwrap().contains("BLOCKS"), "{table}");
    assert_eq!(table.lines().count(), causes.len() + 1, "{table}");
    let out = run(&["get", "--root-causes", "-o", "ndjson"], dir).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    sim.handle.shutdown().await;
}
