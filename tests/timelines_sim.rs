//! The simulator held to the rules the real controllers' timelines hold fluxfleet to
//! (`tests/timelines.rs`), where it makes the same situations.

use fluxfleet::export::Filter;
use fluxfleet::fleet::{FluxKind, ObjectKey, Ready};
use fluxfleet::headless::Output;
use jiff::Timestamp;
use serde_json::Value;

use crate::timelines::WINDOW;

/// The simulator makes the same situations where it can, and the same verdicts hold on it: its
/// controller rewrites Ready's time when it runs a failing Kustomization again (as
/// kustomize-controller does at every retry), and fluxfleet keeps the first failure; a Ready
/// Kustomization suspended is no root cause and not selected as not ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_simulator_a_retry_keeps_since_and_a_suspended_ready_object_is_no_cause() {
    use crate::common;
    use std::time::Duration;
    let sim = common::start_with(|c| {
        c.clusters = 4;
        c.reconcile_delay = Duration::from_millis(200);
    })
    .await;
    let truth = sim.handle.truth();
    let of = |kind: &str, pick: &dyn Fn(&fluxfleet_sim::TruthObject) -> bool| {
        truth
            .iter()
            .filter(|c| !c.management)
            .flat_map(|c| c.objects.iter().map(move |o| (c.name.clone(), o.clone())))
            .find(|(_, o)| o.kind == kind && !o.suspended && pick(o))
            .expect("the simulated fleet has one")
    };
    let (failing_on, failing) = of("Kustomization", &|o| {
        o.health.is_failing() && o.reason.as_deref() != Some("DependencyNotReady")
    });
    let (ready_on, ready) = of("Kustomization", &|o| {
        o.health == fluxfleet_sim::facts::Health::Ready
    });
    let mut live = common::settled(&sim.handle.files.fleet).await;
    let key = |o: &fluxfleet_sim::TruthObject| {
        ObjectKey::new(FluxKind::Kustomization, &o.namespace, &o.name)
    };
    let summary = |live: &fluxfleet::session::Session, cluster: &str, k: &ObjectKey| {
        live.index
            .cluster_named(cluster)
            .unwrap()
            .objects
            .get(k)
            .unwrap()
            .clone()
    };
    let first = summary(&live, &failing_on, &key(&failing));
    assert!(first.since.is_some());

    let data = tempfile::tempdir().unwrap();
    let act = |args: Vec<String>| {
        std::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
            .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
            .env("FLUXFLEET_DATA_DIR", data.path())
            .env_remove("KUBECONFIG")
            .env("HOME", "/nonexistent-home")
            .args(args)
            .arg("--kubeconfig")
            .arg(&sim.handle.files.fleet)
            .output()
            .unwrap()
    };
    let named = |verb: &str, cluster: &str, o: &fluxfleet_sim::TruthObject| -> Vec<String> {
        [
            verb,
            "ks",
            &o.name,
            "-n",
            &o.namespace,
            "--cluster",
            cluster,
            "--write",
            "--yes",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    // Run again, it fails the same way, its Ready condition written anew.
    let out = act(named("reconcile", &failing_on, &failing));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("handled"),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rewritten = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| c.name == failing_on)
        .and_then(|c| c.objects.into_iter().find(|o| key(o) == key(&failing)))
        .and_then(|o| o.ready_since)
        .unwrap();
    let rewritten: Timestamp = rewritten.parse().unwrap();
    assert!(rewritten > first.since.unwrap(), "Ready's time moved");
    common::until(&mut live, Duration::from_secs(10), |live| {
        let now = summary(live, &failing_on, &key(&failing));
        (now.last_handled_reconcile_at() == first.last_handled_reconcile_at())
            .then(|| "the reconcile is not seen handled".to_string())
    })
    .await;
    assert_eq!(
        summary(&live, &failing_on, &key(&failing)).since,
        first.since,
        "failing since its first failure, not its retry at {rewritten}"
    );

    // Suspended while Ready: no cause, not not-ready.
    let out = act(named("suspend", &ready_on, &ready));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::until(&mut live, Duration::from_secs(10), |live| {
        (!summary(live, &ready_on, &key(&ready)).suspended).then(|| "not seen suspended".into())
    })
    .await;
    let suspended = summary(&live, &ready_on, &key(&ready));
    assert_eq!(suspended.ready, Some(Ready::True));
    assert!(!suspended.is_not_ready());
    let mut json = Vec::new();
    fluxfleet::export::roots::write(
        &live.index,
        (&Filter::default(), Output::Json),
        (Timestamp::now(), WINDOW),
        &mut json,
    )
    .unwrap();
    let roots: Value = serde_json::from_slice(&json).unwrap();
    assert!(
        !roots["rootCauses"].as_array().unwrap().iter().any(|c| {
            c["name"] == ready.name.as_str()
                && c["kind"] == "Kustomization"
                && c["clusters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["cluster"] == ready_on.as_str())
        }),
        "{roots:#}"
    );
    live.shutdown().await;
    sim.handle.shutdown().await;
}
