//! A reader of the bus reads and acts directly on the clusters its own kubeconfigs reach, and
//! on no other.

use crate::common;

use std::time::Duration;

use fluxfleet::bus;
use fluxfleet::fleet::FluxKind;
use fluxfleet::session::Session;

use super::one_collector;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_reads_and_acts_directly_on_the_clusters_its_own_kubeconfigs_reach() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    use fluxfleet::fleet::verbs::{Intent, Outcome, Verb};
    let (_nats, options, sim, inventory, only) = one_collector().await;

    // This user's kubeconfigs reach every cluster but the first.
    let (far, near) = (&inventory.clusters[0], &inventory.clusters[1]);
    let own: Vec<_> = inventory.clusters[1..].to_vec();
    let direct = fluxfleet::k8s::direct::Direct::new(own, &common::engine_settings());
    let bus = bus::reader::Bus::connect(&options)
        .await
        .unwrap()
        .reaching(direct);
    let mut session = Session::start(vec![Box::new(bus)]);
    session.settle(Duration::from_secs(10)).await;
    let entry = |name: &str| session.index.cluster_named(name).unwrap();
    let ks = |name: &str| {
        entry(name)
            .objects
            .values()
            .find(|o| o.key.kind == FluxKind::Kustomization && !o.suspended)
            .cloned()
            .unwrap()
    };

    // Reads go to the cluster the user reaches, never to the one they do not.
    let target = ks(&near.name);
    let yaml = session
        .reader()
        .yaml(&entry(&near.name).info, &target.key)
        .await
        .unwrap();
    assert!(yaml.contains("kind: Kustomization"), "{yaml}");
    let why = session
        .reader()
        .events(
            &entry(&far.name).info,
            std::slice::from_ref(&ks(&far.name).key),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&why, fluxfleet::fleet::read::ReadError::NoKubeconfig(text) if text.contains("none of your kubeconfigs reaches it")),
        "{why:?}"
    );

    // Actions only with the write grant, over the user's own connection.
    let config = fluxfleet::config::Config::defaults();
    let infos: Vec<_> = session
        .index
        .clusters()
        .iter()
        .map(|c| (*c.info).clone())
        .collect();
    let (grant, permissions) = config.writable(Some(fluxfleet::config::Mode::Write), infos.iter());
    let writer = session.sources.writer(grant.unwrap(), permissions);
    let intent = Intent {
        verb: Verb::Suspend,
        user: "alice".into(),
        reason: Some("bus test".into()),
        token: "2026-11-24T10:00:00Z".into(),
    };
    let steps = fluxfleet::fleet::verbs::plan(&intent, &target, |_| None).unwrap();
    let outcome = writer
        .apply(&entry(&near.name).info, &steps, &intent.token, None)
        .await;
    assert_eq!(outcome, Outcome::Done);
    let suspended = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| c.name == near.name)
        .unwrap()
        .objects
        .into_iter()
        .find(|o| o.kind == "Kustomization" && o.name == *target.key.name)
        .unwrap()
        .suspended;
    assert!(suspended, "the cluster itself has it suspended");
    // The history, through the session as the TUI's `:history` reads it, has the suspension.

    let suspended_seen = async {
        for _ in 0..50 {
            let changes = session
                .reader()
                .history(jiff::Timestamp::UNIX_EPOCH)
                .await
                .unwrap();
            if changes.iter().any(|c| {
                c.cluster == near.name
                    && c.name.as_deref() == Some(&*target.key.name)
                    && c.to.as_deref() == Some("suspended")
            }) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        false
    };
    assert!(suspended_seen.await, "the suspension is in the history");
    let far_steps = fluxfleet::fleet::verbs::plan(&intent, &ks(&far.name), |_| None).unwrap();
    let refused = writer
        .apply(&entry(&far.name).info, &far_steps, &intent.token, None)
        .await;
    assert!(
        matches!(&refused, Outcome::Refused(why) if why.contains("none of your kubeconfigs")),
        "{refused:?}"
    );
    // The planner, which a dry run prints and a run follows, says the same beforehand: the
    // target no kubeconfig reaches is refused with the writer's words, the other is sent.
    let rules = fluxfleet::actions::Rules {
        writes_refused: None,
        purpose: fluxfleet::actions::Purpose::Preview,
        actions: &config.actions,
        permissions: None,
    };
    let objects = [far, near].map(|c| {
        let id = session.index.id_of(&entry(&c.name).info.key).unwrap();
        (id, ks(&c.name).key)
    });
    let ask = fluxfleet::actions::Ask {
        intent: intent.clone(),
        objects: fluxfleet::actions::Objects::Named(objects.to_vec()),
    };
    let admitted = fluxfleet::actions::admit(&session.index, ask, &rules).unwrap();
    let planned = admitted.targets();
    assert!(
        matches!(&planned[0].plan, Err(fluxfleet::fleet::verbs::Refusal::Unreachable(why))
            if matches!(&refused, Outcome::Refused(said) if said == why)),
        "{:?}",
        planned[0].plan
    );
    assert!(planned[1].plan.is_ok(), "{:?}", planned[1].plan);
    assert_eq!(
        fluxfleet::actions::Tally::of(planned),
        fluxfleet::actions::Tally {
            sent: 1,
            clusters: 1,
            refused: 1
        }
    );
    only.stop.cancel();
    only.task.await.unwrap().unwrap();
    session.shutdown().await;
    sim.handle.shutdown().await;
}
