//! What each object waits for, and the root causes and shared causes read in the controllers'
//! own words.

use super::summary;

#[test]
fn what_each_waits_for_is_what_the_controllers_name() {
    let after = summary("kustomization-after-broken.yaml");
    let deps: Vec<_> = after
        .depends_on
        .iter()
        .map(|d| (&*d.namespace, &*d.name))
        .collect();
    assert_eq!(deps, [("flux-system", "broken")]);
    let from = summary("kustomization-from-nowhere.yaml");
    let source = from.source.as_deref().unwrap();
    assert_eq!(
        (&*source.kind, &*source.namespace, &*source.name),
        ("GitRepository", "flux-system", "nowhere")
    );
    // What it applied, counted from the inventory the controller wrote.
    assert_eq!(summary("kustomization-apps.yaml").inventory(), Some(2));
    // A HelmRelease of `spec.chart` runs the HelmChart Flux made for it, which is what holds
    // `missing-chart` back.
    let hr = summary("helmrelease-missing-chart.yaml");
    let up = fluxfleet::fleet::graph::upstream(&hr);
    assert!(
        up.iter()
            .any(|k| k.kind.as_str() == "HelmChart" && &*k.name == "flux-system-missing-chart"),
        "{up:?}"
    );
}

/// One cluster of every object the controllers wrote: the root causes a person reading them
/// names. The Git server answering 503 leaves its GitRepository failing with the last artifact
/// kept, which kustomize-controller goes on applying: it is a failure of its own and holds
/// nothing back (`apps` fails its own health check on that artifact; `paused`, suspended before
/// it ever reconciled, has no Ready condition). The unresolvable source, the missing path and the
/// chart the repository lacks each hold back what stands on them.
#[test]
fn the_root_causes_are_the_ones_the_controllers_wait_on() {
    use fluxfleet::fleet::graph::{self, Cause, ClusterObjects};
    let dir = format!("{}/tests/fixtures/real-flux", env!("CARGO_MANIFEST_DIR"));
    let mut objects = ClusterObjects::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if file.ends_with(".yaml")
            && !file.starts_with("events-")
            && !file.starts_with("fluxreport-")
        {
            let s = summary(&file);
            objects.insert(s);
        }
    }
    let name = |k: &fluxfleet::fleet::ObjectKey| format!("{}/{}", k.kind.as_str(), k.name);
    let causes = graph::causes(&objects);
    let mut said: Vec<(String, Vec<String>)> = causes
        .iter()
        .map(|(k, c)| {
            let by = match c {
                Cause::Root => vec![],
                other => other.held_by(k).iter().map(name).collect(),
            };
            (name(k), by)
        })
        .collect();
    said.sort();
    let expected: Vec<(String, Vec<String>)> = [
        ("GitRepository/fleet", vec![]),
        ("GitRepository/limited", vec![]),
        ("GitRepository/nowhere", vec![]),
        ("GitRepository/private-denied", vec![]),
        ("GitRepository/private-noauth", vec![]),
        ("HelmChart/flux-system-missing-chart", vec![]),
        ("HelmChart/flux-system-pull-error", vec![]),
        ("HelmChart/flux-system-wrong-version", vec![]),
        // Out of retries after its Deployment crashed: its own failure.
        ("HelmRelease/hello-app", vec![]),
        (
            "HelmRelease/missing-chart",
            vec!["HelmChart/flux-system-missing-chart"],
        ),
        (
            "HelmRelease/pull-error",
            vec!["HelmChart/flux-system-pull-error"],
        ),
        (
            "HelmRelease/wrong-version",
            vec!["HelmChart/flux-system-wrong-version"],
        ),
        ("Kustomization/after-broken", vec!["Kustomization/broken"]),
        ("Kustomization/apps", vec![]),
        ("Kustomization/bad-build", vec![]),
        ("Kustomization/broken", vec![]),
        // Its own workloads failing, and one whose health checks a new revision cut short.
        ("Kustomization/capped", vec![]),
        ("Kustomization/from-nowhere", vec!["GitRepository/nowhere"]),
        ("Kustomization/paused", vec![]),
        ("Kustomization/shop", vec![]),
        ("Kustomization/slow", vec![]),
    ]
    .into_iter()
    .map(|(k, by)| (k.to_string(), by.into_iter().map(str::to_string).collect()))
    .collect();
    assert_eq!(said, expected);
}

/// The shared causes a person reads in the controllers' words: the host that does not resolve,
/// the Git server answering 503 (a team's, here by name: loopback is a cluster's own), and no
/// shared cause in a chart's own 404 or a version constraint nothing matches.
#[test]
fn the_controllers_words_name_the_endpoint_and_its_class() {
    use fluxfleet::fleet::incident::shared_cause;
    let said = |file: &str| summary(file).message.as_deref().unwrap_or("").to_string();
    let cause = |message: &str| shared_cause(message).map(|s| (s.class.as_str(), s.endpoint));
    assert_eq!(
        cause(&said("gitrepository-nowhere.yaml")),
        Some(("dns", "git.nowhere.invalid".to_string()))
    );
    let served = said("gitrepository-fleet-503.yaml").replace("127.0.0.1:28080", "git.example.com");
    assert_eq!(
        cause(&served),
        Some(("server-error", "git.example.com".to_string()))
    );
    // go-git's words for a 401, a 403 and a 429 (`authentication required: `, `authorization
    // failed: `, the status code of `info/refs`).
    for (file, class) in [
        ("gitrepository-private-noauth.yaml", "auth"),
        ("gitrepository-private-denied.yaml", "auth"),
        ("gitrepository-limited.yaml", "rate-limit"),
    ] {
        let served = said(file).replace("127.0.0.1:28080", "git.example.com");
        assert_eq!(
            cause(&served),
            Some((class, "git.example.com".to_string())),
            "{file}: {served}"
        );
    }
    for own in [
        "helmchart-flux-system-pull-error.yaml",
        "helmchart-flux-system-wrong-version.yaml",
        "kustomization-bad-build.yaml",
    ] {
        assert_eq!(cause(&said(own)), None, "{own}");
    }
}
