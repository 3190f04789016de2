//! `fluxfleet mcp --listen --oauth-issuer … --impersonate` acting as each person asking, against
//! a real OpenID provider (`tests/common/oidc.rs`) and the simulator's RBAC: every Kubernetes
//! request of a call carries the person's name and groups, each cluster decides for them, and
//! the journal and the Events name them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use common::mcp::call;
use common::oidc::{Team, session, team};
use serde_json::{Value, json};

/// A team's server acts as each person asking: every Kubernetes request of
/// a call carries their name and groups, and each cluster's RBAC decides for them. Alice may
/// change dev but not prod; Bob may change nothing; the journal and the Events name each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_server_acts_as_each_person_and_each_cluster_decides_for_them() {
    use fluxfleet_sim::{Faults, Role};
    let sim = common::start_with(|c| c.clusters = 3).await;
    let names = sim.workload_clusters();
    let (dev, prod) = (names[0].clone(), names[1].clone());
    let people = |alice: Role| Faults {
        people: vec![
            ("oidc:alice".into(), alice),
            ("group:oidc:viewers".into(), Role::Viewer),
        ],
        ..Faults::default()
    };
    sim.handle.set_faults(&dev, people(Role::Admin));
    sim.handle.set_faults(&prod, people(Role::Viewer));
    let impersonating = ["--write", "--impersonate", "--impersonate-prefix", "oidc:"];
    let Team {
        provider,
        url,
        ca,
        data,
        ..
    } = &team(&sim, &impersonating).await;
    let args = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system",
                       "clusters": [dev, prod], "reason": "freeze" });
    // A dry run, then the call that acts with its token: the outcome per cluster.
    let act = |token: String| {
        let (url, ca, args) = (url.clone(), ca.clone(), args.clone());
        async move {
            let session = session(&url, &ca, &token).await;
            let dry = call(&session, "suspend", args.clone()).await.unwrap();
            let mut confirmed = args;
            confirmed["token"] = dry["token"].clone();
            confirmed["count"] = dry["count"].clone();
            let done = call(&session, "suspend", confirmed).await.unwrap();
            session.cancel().await.unwrap();
            done
        }
    };
    let alice = provider
        .token("alice", "fluxfleet:read fluxfleet:write", None)
        .await;
    let done = act(alice.clone()).await;
    let outcome = |done: &Value, cluster: &str| {
        done["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["cluster"] == cluster)
            .cloned()
            .unwrap_or_else(|| panic!("{cluster}: {done}"))
    };
    assert_eq!(outcome(&done, &dev)["outcome"], "done", "{done}");
    assert_eq!(outcome(&done, &dev)["seenAs"], "oidc:alice", "{done}");
    let refused = outcome(&done, &prod);
    assert_eq!(refused["outcome"], "forbidden", "{done}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("User \"oidc:alice\" cannot patch"),
        "{refused}"
    );
    // Bob, a viewer everywhere: refused on both, in his name.
    let bob = provider
        .token("bob", "fluxfleet:read fluxfleet:write", None)
        .await;
    let done = act(bob.clone()).await;
    for cluster in [&dev, &prod] {
        let refused = outcome(&done, cluster);
        assert_eq!(refused["outcome"], "forbidden", "{done}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("User \"oidc:bob\" cannot patch"),
            "{refused}"
        );
    }
    // The journal names each person; the Event on dev the identity it ran as.
    let attempts: Vec<String> = common::mcp::journal(data.path())
        .iter()
        .filter(|l| l["stage"] == "outcome")
        .map(|l| l["user"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(attempts, ["alice", "bob"]);
    let client = common::client(&sim.handle.files.fleet, &dev).await;
    let events =
        kube::Api::<k8s_openapi::api::core::v1::Event>::namespaced(client, "flux-system")
            .list(&kube::api::ListParams::default().fields(
                "involvedObject.kind=Kustomization,involvedObject.name=apps,reason=Suspended",
            ))
            .await
            .unwrap();
    let annotations = events.items[0].metadata.annotations.clone().unwrap();
    assert_eq!(
        annotations["event.toolkit.fluxcd.io/username"],
        "oidc:alice"
    );
    assert_eq!(
        annotations["event.toolkit.fluxcd.io/groups"],
        "oidc:dev-team, system:authenticated"
    );
    // A token that may read only does not reach the write tools.
    let reader = provider.token("alice", "fluxfleet:read", None).await;
    let http = common::mcp::https(ca);
    let suspend = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "suspend", "arguments": args}});
    let answer = common::mcp::post(&http, url, &reader, &suspend)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403);
}
