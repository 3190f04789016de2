//! The team sees what was done: each action leaves one Kubernetes Event on each object it
//! changed — type Normal, the reason naming the action, the message saying who (the local user
//! and who the cluster saw), through what and why — found as `kubectl describe` finds events
//! (by the object's kind, name and uid). A cluster that forbids creating Events still gets the
//! action and the journal says the Event was refused; `[actions] events = false` records none.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;

use common::fluxfleet;
use common::mcp::journal;
use fluxfleet_sim::Faults;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use serde_json::Value;

/// fluxfleet's own Events on Kustomization `apps` in flux-system of `cluster`, as `kubectl
/// describe` selects them (with the object's uid), and that uid.
async fn recorded(sim: &common::Sim, cluster: &str) -> Vec<Event> {
    let client = common::client(&sim.handle.files.fleet, cluster).await;
    let ks = common::api(&client, &common::kustomizations(), Some("flux-system"))
        .get("apps")
        .await
        .unwrap();
    let uid = ks.metadata.uid.unwrap();
    let selector = format!(
        "involvedObject.kind=Kustomization,involvedObject.name=apps,involvedObject.uid={uid}"
    );
    let events = Api::<Event>::namespaced(client, "flux-system")
        .list(&ListParams::default().fields(&selector))
        .await
        .unwrap();
    events
        .items
        .into_iter()
        .filter(|e| e.source.as_ref().and_then(|s| s.component.as_deref()) == Some("fluxfleet"))
        .collect()
}

async fn run(sim: &common::Sim, data: &Path, config: &Path, args: &[&str]) {
    let out = fluxfleet()
        .env("FLUXFLEET_DATA_DIR", data)
        .env("FLUXFLEET_CONFIG", config)
        .args(args)
        .arg("--kubeconfig-dir")
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    // 7: done, some objects not ready when their controllers handled the request.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(0)
            || (out.status.code() == Some(7) && stderr.contains("not ready when handled")),
        "{args:?}: {:?} {stderr}",
        out.status.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_action_leaves_one_event_on_each_target_saying_who_and_why() {
    let sim = common::start_with(|c| c.clusters = 3).await;
    let names = sim.workload_clusters();
    let (a, b, refusing) = (&names[0], &names[1], &names[2]);
    sim.handle.set_faults(
        refusing,
        Faults {
            forbidden_events: true,
            ..Faults::default()
        },
    );
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let config = scratch.path().join("fluxfleet.toml");
    std::fs::write(&config, "").unwrap();
    let scope = ["ks", "apps", "-n", "flux-system", "--write", "--yes"];
    let why = "freeze for INC-7";
    let suspend = [&["suspend", "--reason", why][..], &scope].concat();
    run(&sim, &data, &config, &suspend).await;

    let me = fluxfleet::audit::local_user();
    for cluster in [a, b] {
        let events = recorded(&sim, cluster).await;
        assert_eq!(
            events.len(),
            1,
            "{cluster}: {events:?} {:?}",
            journal(&data)
        );
        let event = &events[0];
        assert_eq!(event.type_.as_deref(), Some("Normal"));
        assert_eq!(event.reason.as_deref(), Some("Suspended"));
        let message = event.message.as_deref().unwrap_or_default();
        assert!(
            message.starts_with(&format!("suspended by {me}@"))
                && message.contains("(as system:serviceaccount:flux-system:fluxfleet-admin)")
                && message.ends_with(&format!("with fluxfleet: {why}")),
            "{message}"
        );
        assert_eq!(event.reporting_component.as_deref(), Some("fluxfleet"));
        assert_eq!(event.count, Some(1));
    }
    // Refused there, the action was still done; the journal says which Event was not recorded.
    assert!(recorded(&sim, refusing).await.is_empty());
    let truth = sim.handle.truth();
    let suspended = truth
        .iter()
        .flat_map(|c| &c.objects)
        .filter(|o| o.kind == "Kustomization" && o.name == "apps" && o.suspended)
        .count();
    assert_eq!(suspended, 3, "every target was suspended");
    let outcome = journal(&data)
        .into_iter()
        .rfind(|l| l["stage"] == "outcome")
        .unwrap();
    for target in outcome["targets"].as_array().unwrap() {
        let event = target["event"].as_str().unwrap_or_default();
        if target["cluster"] == refusing.as_str() {
            assert!(event.starts_with("not recorded: forbidden:"), "{target}");
            assert!(
                event.contains("cannot create resource \"events\""),
                "{target}"
            );
        } else {
            assert_eq!(event, "recorded", "{target}");
        }
    }

    // Turned off: the resume is done, and leaves no Event.
    std::fs::write(&config, "[actions]\nevents = false\n").unwrap();
    let resume = [&["resume"][..], &scope].concat();
    run(&sim, &data, &config, &resume).await;
    for cluster in [a, b] {
        let reasons: Vec<_> = recorded(&sim, cluster)
            .await
            .into_iter()
            .map(|e| e.reason.unwrap_or_default())
            .collect();
        assert_eq!(reasons, ["Suspended"], "{cluster}");
    }
    let outcome = journal(&data)
        .into_iter()
        .rfind(|l| l["stage"] == "outcome")
        .unwrap();
    assert_eq!(outcome["action"], "resume");
    for target in outcome["targets"].as_array().unwrap() {
        assert_eq!(target["outcome"], "done", "{target}");
        assert_eq!(target.get("event"), None::<&Value>, "{target}");
    }
}

/// An object's events come with its source's, as `flux events --for HelmRelease/NAME` shows
/// them: a reconcile of a HelmRelease's chart and one of the release each leave an Event, and
/// the assistant's `describe_object` of the release lists both, each saying whose it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_objects_events_come_with_its_charts_as_flux_events_shows_them() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let truth = sim.handle.truth();
    let (cluster, release) = truth
        .iter()
        .filter(|c| !c.management)
        .flat_map(|c| c.objects.iter().map(move |o| (c, o)))
        .find(|(_, o)| o.kind == "HelmRelease" && !o.suspended)
        .map(|(c, o)| (c.name.clone(), o.clone()))
        .expect("a HelmRelease in the fleet");
    let chart = format!("{}-{}", release.namespace, release.name);
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let config = scratch.path().join("fluxfleet.toml");
    std::fs::write(&config, "").unwrap();
    let on = ["--cluster", &cluster, "--write", "--yes"];
    let chart_args = [&["reconcile", "hc", &chart, "-n", "flux-system"][..], &on].concat();
    run(&sim, &data, &config, &chart_args).await;
    let release_args = [
        &["reconcile", "hr", &release.name, "-n", &release.namespace][..],
        &on,
    ]
    .concat();
    run(&sim, &data, &config, &release_args).await;

    let client = common::mcp::connect(sim.dir.path(), &[]).await;
    let args = serde_json::json!({
        "cluster": cluster, "kind": "HelmRelease",
        "namespace": release.namespace, "name": release.name,
    });
    let detail = common::mcp::call(&client, "describe_object", args)
        .await
        .unwrap();
    let said: Vec<(&str, &str)> = detail["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["object"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect();
    let own = format!("HelmRelease/{}", release.name);
    let its_chart = format!("HelmChart/{chart}");
    for expected in [
        (own.as_str(), "ReconcileRequested"),
        (its_chart.as_str(), "ReconcileRequested"),
    ] {
        assert!(said.contains(&expected), "{expected:?} in {said:?}");
    }
    client.cancel().await.unwrap();
    sim.handle.shutdown().await;
}

/// A team's credentials that stop at its own namespaces: Events in `flux-system`, where a
/// HelmRelease's chart and repository live, cannot be read. The release's own events are still
/// shown, without its sources'; an object in `flux-system` itself says its events could not be
/// read, naming why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_whose_events_are_forbidden_leaves_the_objects_own_shown() {
    let sim = common::start_with(|c| {
        c.clusters = 2;
        c.faults = fluxfleet_sim::faults::Spec::parse("hidden-events=100%:flux-system").unwrap();
    })
    .await;
    let truth = sim.handle.truth();
    let cluster = truth.iter().find(|c| !c.management).unwrap();
    let release = cluster
        .objects
        .iter()
        .find(|o| o.kind == "HelmRelease" && !o.suspended && o.namespace != "flux-system")
        .expect("a HelmRelease outside flux-system")
        .clone();
    let inside = cluster
        .objects
        .iter()
        .find(|o| o.kind == "Kustomization" && o.namespace == "flux-system")
        .unwrap()
        .clone();
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let config = scratch.path().join("fluxfleet.toml");
    std::fs::write(&config, "").unwrap();
    let args = [
        "reconcile",
        "hr",
        &release.name,
        "-n",
        &release.namespace,
        "--cluster",
        &cluster.name,
        "--write",
        "--yes",
    ];
    run(&sim, &data, &config, &args).await;

    let client = common::mcp::connect(sim.dir.path(), &[]).await;
    let describe = |kind: &str, o: &fluxfleet_sim::TruthObject| {
        serde_json::json!({"cluster": cluster.name, "kind": kind,
                           "namespace": o.namespace, "name": o.name})
    };
    let detail = common::mcp::call(
        &client,
        "describe_object",
        describe("HelmRelease", &release),
    )
    .await
    .unwrap();
    assert!(detail.get("eventsError").is_none(), "{detail}");
    let whose: Vec<&str> = detail["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["object"].as_str().unwrap())
        .collect();
    let own = format!("HelmRelease/{}", release.name);
    assert!(whose.contains(&own.as_str()), "{whose:?}");
    assert!(whose.iter().all(|w| *w == own), "only its own: {whose:?}");

    let detail = common::mcp::call(
        &client,
        "describe_object",
        describe("Kustomization", &inside),
    )
    .await
    .unwrap();
    let error = detail["eventsError"]
        .as_str()
        .unwrap_or_else(|| panic!("{detail}"));
    assert!(error.contains("forbidden"), "{error}");
    client.cancel().await.unwrap();
    sim.handle.shutdown().await;
}
