//! Browsing the live fleet: from the fleet view down to a failing object's events and YAML, and
//! a resize to 80×24.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_the_fleet_view_down_to_a_failing_objects_events_and_yaml() {
    let sim = common::start().await;
    let (config, inventory) = fleet(&sim);
    let clusters = inventory.clusters.len();

    // A failing Kustomization or HelmRelease somewhere, and what its cluster says about it.
    let (cluster, object) = sim
        .handle
        .truth()
        .into_iter()
        .filter(|c| !c.management)
        .find_map(|c| {
            let o = c.objects.iter().find(|o| {
                o.health.is_failing()
                    && !o.suspended
                    && (o.kind == "Kustomization" || o.kind == "HelmRelease")
            })?;
            Some((c.clone(), o.clone()))
        })
        .expect("the simulated fleet has a failing object");
    let client = common::client(&sim.handle.files.fleet, &cluster.name).await;
    let recorded = Api::<KubeEvent>::namespaced(client, &object.namespace)
        .list(&ListParams::default().fields(&format!(
            "involvedObject.kind={},involvedObject.name={}",
            object.kind, object.name
        )))
        .await
        .unwrap();
    let reason = recorded
        .items
        .first()
        .and_then(|e| e.reason.clone())
        .expect("the failing object has an event");

    let (mut person, app, _) = session(config, inventory, Some(Mode::ReadOnly), None);
    let drive = async {
        let all_live = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&all_live))
            .await;

        person.open(&cluster.workspace);
        let crumbs = format!("fleet ▸ {}", cluster.workspace);
        person.sees("the workspace", |s| s.contains(&crumbs)).await;

        person.open(&cluster.name);
        let crumbs = format!("{crumbs} ▸ {}", cluster.name);
        let screen = person.sees("the cluster", |s| s.contains(&crumbs)).await;
        assert!(screen.contains(&object.name), "{screen}");

        let kind = FluxKind::parse(&object.kind).unwrap();
        let title = format!("{kind} {}/{}", object.namespace, object.name);
        person.open(&title);
        let crumbs = format!("{crumbs} ▸ {title}");
        let screen = person.sees("the object", |s| s.contains(&crumbs)).await;
        let health = seen(object.health).to_string();
        assert!(
            screen
                .lines()
                .any(|l| l.contains("health") && l.contains(&health)),
            "the detail shows {health}:\n{screen}"
        );

        person.press(KeyCode::Char('e'));
        let screen = person
            .sees("the events", |s| s.contains("newest first"))
            .await;
        assert!(screen.contains("Warning"), "{screen}");
        assert!(
            screen.contains(&reason),
            "the event's reason {reason}:\n{screen}"
        );

        person.press(KeyCode::Char('y'));
        let screen = person
            .sees("the YAML", |s| s.contains("yaml (managedFields removed)"))
            .await;
        assert!(
            screen.contains(&format!("kind: {}", object.kind)),
            "{screen}"
        );
        assert!(
            screen.contains(&format!("name: {}", object.name)),
            "{screen}"
        );
        assert!(!screen.contains("managedFields:"), "{screen}");

        // Scrolling moves through the YAML: its first line leaves the pane.
        person.press(KeyCode::Char('j'));
        person.press(KeyCode::Char('j'));
        person
            .sees("the YAML scrolled", |s| {
                s.contains("yaml (managedFields removed)") && !s.contains("apiVersion:")
            })
            .await;

        person.resize(80, 24);
        let screen = person
            .sees("an 80×24 frame", |s| {
                s.lines().count() == 24 && s.lines().all(|l| l.chars().count() == 80)
            })
            .await;
        let last = screen.lines().last().unwrap();
        assert!(last.contains("read-only"), "status line: {last}");
        assert!(screen.contains(&object.name), "{screen}");

        // Back to the fleet: Esc clears each view's filter, then pops it.
        for _ in 0..5 {
            person.press(KeyCode::Esc);
        }
        person
            .sees("the fleet view again", |s| {
                s.lines().next().is_some_and(|l| !l.contains('▸'))
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    sim.handle.shutdown().await;
}
