//! Objects as the real Flux controllers wrote them (`tests/fixtures/real-flux`: source-controller
//! v1.9.1, kustomize-controller v1.9.4, helm-controller v1.6.3 and notification-controller v1.9.3
//! reconciling on a kube-apiserver v1.35.4, with kube-controller-manager, kube-scheduler and kwok
//! running the workloads for the later ones, source-watcher v2.2.1 for `artifacts/`; captured
//! 2026-12-02; how, in docs/real-flux.md): what fluxfleet makes of each — health, reason,
//! READY, REVISION and message as `flux get` prints them, and what each depends on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fluxfleet::fleet::{FluxSummary, Health, Ready};
use serde_json::Value;

/// A fixture as the controllers wrote it (also the workloads' under `workloads/`).
pub(crate) fn object(file: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/real-flux/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn summary(file: &str) -> FluxSummary {
    FluxSummary::from_object(&object(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// (file, health, READY, reason, REVISION as `flux get` prints it, the start of the message)
type Expected = (
    &'static str,
    Health,
    Option<Ready>,
    Option<&'static str>,
    &'static str,
    &'static str,
);

const EXPECTED: &[Expected] = &[
    // The Git server answering 503: the artifact it had is kept, the revision with it.
    (
        "gitrepository-fleet-503.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("GitOperationFailed"),
        "main@sha1:2de2a43b",
        "failed to checkout and determine revision: unable to list remote for 'http://127.0.0.1:28080/git/fleet.git': unexpected client error: unexpected requesting \"http://127.0.0.1:28080/git/fleet.git/info/refs?service=git-upload-pack\" status code: 503",
    ),
    // A host that does not resolve: no artifact ever.
    (
        "gitrepository-nowhere.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("GitOperationFailed"),
        "",
        "failed to checkout and determine revision: unable to clone 'http://git.nowhere.invalid/fleet.git'",
    ),
    (
        "helmrepository-charts.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("Succeeded"),
        "sha256:c9d230e7",
        "stored artifact: revision 'sha256:c9d230e7",
    ),
    (
        "kustomization-infra.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("ReconciliationSucceeded"),
        "main@sha1:2de2a43b",
        "Applied revision: main@sha1:2de2a43b",
    ),
    // A health check that timed out on a Deployment nothing runs: Ready=False HealthCheckFailed
    // beside Reconciling=True (ProgressingWithRetry) and status.observedGeneration -1.
    (
        "kustomization-apps.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("HealthCheckFailed"),
        "",
        "health check failed after 40.02",
    ),
    // A path that is not in the artifact: ArtifactFailed, not BuildFailed.
    (
        "kustomization-broken.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("ArtifactFailed"),
        "",
        "kustomization path not found: stat /tmp/kustomization-",
    ),
    (
        "kustomization-after-broken.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("DependencyNotReady"),
        "",
        "dependency 'flux-system/broken' is not ready",
    ),
    (
        "kustomization-from-nowhere.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("ArtifactFailed"),
        "",
        "Source artifact not found, retrying in 30s",
    ),
    (
        "helmchart-flux-system-hello.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("ChartPullSucceeded"),
        "0.1.0",
        "pulled 'hello' chart with version '0.1.0'",
    ),
    // A chart the repository does not have: Stalled, not retried until the spec changes.
    (
        "helmchart-flux-system-missing-chart.yaml",
        Health::Stalled,
        Some(Ready::False),
        Some("InvalidChartReference"),
        "",
        "invalid chart reference: failed to get chart version for remote reference: no chart name found",
    ),
    (
        "helmrelease-hello.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("InstallSucceeded"),
        "0.1.0",
        "Helm install succeeded for release default/default-hello.v1 with chart hello@0.1.0",
    ),
    (
        "helmrelease-missing-chart.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("SourceNotReady"),
        "",
        "HelmChart 'flux-system/flux-system-missing-chart' is not ready: invalid chart reference",
    ),
    // A resource kustomization.yaml lists and the repository lacks: BuildFailed.
    (
        "kustomization-bad-build.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("BuildFailed"),
        "",
        "kustomize build failed: accumulating resources: accumulation err='accumulating resources from 'missing.yaml'",
    ),
    // A version the repository's index lists and its server does not have: retried.
    (
        "helmchart-flux-system-pull-error.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("ChartPullError"),
        "",
        "chart pull error: failed to download chart for remote reference: failed to fetch http://127.0.0.1:28080/charts/hello-0.2.0.tgz : 404 Not Found",
    ),
    // No version matching the constraint: stalled, as for a chart that is not there.
    (
        "helmchart-flux-system-wrong-version.yaml",
        Health::Stalled,
        Some(Ready::False),
        Some("InvalidChartReference"),
        "",
        "invalid chart reference: failed to get chart version for remote reference: no 'hello' chart with version matching '9.9.x' found",
    ),
    (
        "helmrelease-pull-error.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("SourceNotReady"),
        "",
        "HelmChart 'flux-system/flux-system-pull-error' is not ready: chart pull error",
    ),
    (
        "helmrelease-wrong-version.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("SourceNotReady"),
        "",
        "HelmChart 'flux-system/flux-system-wrong-version' is not ready: invalid chart reference",
    ),
    // Pods kube-controller-manager created and kwok ran: one Deployment past its progress
    // deadline, and kustomize-controller gives up at once (kstatus Failed is stalled).
    (
        "kustomization-shop.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("HealthCheckFailed"),
        "",
        "health check failed after 45.799895ms: failed early due to stalled resources: [Deployment/shop/cart status: 'Failed']",
    ),
    (
        "kustomization-capped.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("HealthCheckFailed"),
        "",
        "health check failed after 32.83843ms: failed early due to stalled resources: [Deployment/capped/batch status: 'Failed']",
    ),
    // A new revision while its health checks ran (kustomize-controller's
    // CancelHealthCheckOnNewRevision): the controller is already at the next reconcile.
    (
        "kustomization-slow-canceled.yaml",
        Health::Progressing,
        Some(Ready::False),
        Some("HealthCheckCanceled"),
        "",
        "New reconciliation triggered by GitRepository/flux-system/fleet",
    ),
    // Out of install retries: stalled, Stalled's own words, then what failed (Released's).
    (
        "helmrelease-hello-app.yaml",
        Health::Stalled,
        Some(Ready::False),
        Some("RetriesExceeded"),
        "0.1.0",
        "Failed to install after 1 attempt(s): Helm install failed for release default/default-hello-app with chart hello@0.1.0: timeout waiting for: [Deployment/default/default-hello-app-app status: 'InProgress']",
    ),
    // A ConfigMap of the release edited by hand, drift detection in `warn` mode: still Ready.
    (
        "helmrelease-hello-drifted.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("InstallSucceeded"),
        "0.1.0",
        "Helm install succeeded for release default/default-hello.v1 with chart hello@0.1.0",
    ),
    // notification.toolkit.fluxcd.io/v1beta3 writes no status: `flux get alerts` prints
    // "Alert is Ready" for every one; fluxfleet says nothing is reported (READY "-").
    (
        "alert-on-call.yaml",
        Health::NotApplicable,
        None,
        None,
        "",
        "",
    ),
    (
        "provider-team-hook.yaml",
        Health::NotApplicable,
        None,
        None,
        "",
        "",
    ),
    (
        "provider-nowhere-hook.yaml",
        Health::NotApplicable,
        None,
        None,
        "",
        "",
    ),
    // A Git server over HTTP refusing without credentials, refusing the ones given, and
    // rate-limiting: go-git's words.
    (
        "gitrepository-private-noauth.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("GitOperationFailed"),
        "",
        "failed to checkout and determine revision: unable to clone 'http://127.0.0.1:28080/git/private/fleet.git': authentication required: ",
    ),
    (
        "gitrepository-private-denied.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("GitOperationFailed"),
        "",
        "failed to checkout and determine revision: unable to clone 'http://127.0.0.1:28080/git/private/fleet.git': authorization failed: ",
    ),
    (
        "gitrepository-limited.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("GitOperationFailed"),
        "",
        "failed to checkout and determine revision: unable to clone 'http://127.0.0.1:28080/git/limited/fleet.git': unexpected client error: unexpected requesting \"http://127.0.0.1:28080/git/limited/fleet.git/info/refs?service=git-upload-pack\" status code: 429",
    ),
    // Suspended before its first reconcile: no status at all.
    (
        "kustomization-paused.yaml",
        Health::Suspended,
        None,
        None,
        "",
        "",
    ),
];

#[test]
fn every_object_the_controllers_wrote_reads_as_flux_get_shows_it() {
    for &(file, health, ready, reason, revision, message) in EXPECTED {
        let s = summary(file);
        assert_eq!(s.health, health, "{file}");
        assert_eq!(s.ready, ready, "{file}");
        assert_eq!(s.reason.as_deref(), reason, "{file}");
        assert_eq!(s.shown_revision(), revision, "{file}");
        let said = s.message.as_deref().unwrap_or("");
        assert!(said.starts_with(message), "{file}: {said}");
    }
}

#[test]
fn every_fixture_has_an_expectation() {
    let dir = format!("{}/tests/fixtures/real-flux", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if file.ends_with(".yaml")
            && !file.starts_with("events-")
            && !file.starts_with("fluxreport-")
        {
            assert!(
                EXPECTED.iter().any(|e| e.0 == file),
                "{file} has no expectation"
            );
        }
    }
}

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
    use fluxfleet::fleet::graph::{self, Cause, Objects};
    let dir = format!("{}/tests/fixtures/real-flux", env!("CARGO_MANIFEST_DIR"));
    let mut objects = Objects::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if file.ends_with(".yaml")
            && !file.starts_with("events-")
            && !file.starts_with("fluxreport-")
        {
            let s = summary(&file);
            objects.insert(s.key.clone(), Box::new(s));
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

/// The Events the controllers (and fluxfleet's actions) left in flux-system, read as the detail
/// view and MCP's `describe_object` read an object's: who reported each, how many times (the
/// recorder's aggregation), when last, newest first.
#[test]
fn the_controllers_events_read_as_flux_events_shows_them() {
    use fluxfleet::fleet::ObjectEvent;
    let list = object("events-flux-system.yaml");
    let of = |kind: &str, name: &str| {
        let items: Vec<Value> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["involvedObject"]["kind"] == kind && e["involvedObject"]["name"] == name)
            .cloned()
            .collect();
        ObjectEvent::from_list(&serde_json::json!({ "items": items }))
    };
    let held = of("Kustomization", "after-broken");
    let newest = &held[0];
    assert_eq!(newest.reason, "DependencyNotReady");
    assert_eq!(newest.from, "kustomize-controller");
    assert_eq!(
        newest.message,
        "Dependencies do not meet ready condition, retrying in 30s"
    );
    assert!(newest.count > 1, "aggregated: {}", newest.count);
    let hello = of("HelmRelease", "hello");
    let said: Vec<(&str, &str)> = hello
        .iter()
        .map(|e| (e.from.as_str(), e.reason.as_str()))
        .collect();
    for expected in [
        ("helm-controller", "InstallSucceeded"),
        ("helm-controller", "UpgradeSucceeded"),
        ("fluxfleet", "ForceRequested"),
        ("fluxfleet", "ResetRequested"),
    ] {
        assert!(said.contains(&expected), "{expected:?} in {said:?}");
    }
    // Every event says who reported it and when; the newest comes first.
    let all = ObjectEvent::from_list(&list);
    assert!(
        all.iter()
            .all(|e| !e.from.is_empty() && e.last_seen.is_some())
    );
    assert!(all.windows(2).all(|w| w[0].last_seen >= w[1].last_seen));
    assert!(all.iter().any(|e| e.warning && e.reason == "BuildFailed"));
}

/// The FluxReport the real Flux Operator (v0.58.1, built from its repository; version unset in
/// that build) wrote on the cluster of the other fixtures, read as the summary tier reads one.
/// Of its seven Kustomizations five were Ready=False, and the operator counts four failing: it
/// leaves `after-broken` out, whose reason is DependencyNotReady — so a summarized cluster shows
/// it among the running, not failing, until opened.
#[test]
fn the_operators_report_counts_as_the_summary_tier_reads_it() {
    use fluxfleet::fleet::report::Report;
    use fluxfleet::fleet::{FluxKind, Health};
    let doc = object("fluxreport-flux.yaml");
    let report = Report::read(&doc, None, "2026-12-02T04:30:00Z".parse().unwrap()).unwrap();
    assert_eq!(report.version.as_deref(), Some("v2.9.4"));
    assert_eq!(report.status.as_deref(), Some("Installed"));
    assert_eq!(report.kubernetes.as_deref(), Some("v1.35.4"));
    let ks = report
        .reconcilers
        .iter()
        .find(|r| &*r.kind == "Kustomization")
        .unwrap();
    assert_eq!((ks.running, ks.failing, ks.suspended), (6, 4, 1));
    let counts = report
        .clone()
        .counting(&[FluxKind::Kustomization, FluxKind::HelmRelease])
        .counts;
    assert_eq!(
        (
            counts.get(Health::Failed),
            counts.get(Health::Running),
            counts.get(Health::Ready),
            counts.get(Health::Suspended)
        ),
        (7, 3, 0, 1)
    );
    // No Deployments run the controllers here (they ran as processes): no components, and
    // nothing said to be wrong with Flux itself.
    assert!(report.components.is_empty());
    assert_eq!(report.trouble(), None);
}

/// What Flux 2.7–2.9 record beside the conditions, read from the real controllers' objects: a
/// Kustomization's runs (`status.history`, one per digest and outcome), a HelmRelease's releases
/// with the Helm action, and helm-controller's `Drifted` condition.
#[test]
fn the_runs_and_the_drift_the_controllers_record_are_read() {
    use fluxfleet::fleet::FluxKind;
    use fluxfleet::fleet::runs::Runs;
    let Runs::Recorded { runs } =
        Runs::of(FluxKind::Kustomization, &object("kustomization-infra.yaml"))
    else {
        panic!("kustomize-controller v1.9.4 records its runs");
    };
    let newest = &runs[0];
    assert_eq!(
        newest.revision.as_deref(),
        Some("main@sha1:2de2a43bc5ca17076173fd7e5d6ff66ed4f673c1")
    );
    assert!(newest.digest.as_deref().unwrap().starts_with("sha256:"));
    assert_eq!(newest.status.as_deref(), Some("ReconciliationSucceeded"));
    assert_eq!(newest.duration.as_deref(), Some("372.911688ms"));
    assert_eq!(newest.total, Some(4));
    assert!(newest.succeeded());

    // A health check that failed is a run too, with its own outcome.
    let Runs::Recorded { runs } =
        Runs::of(FluxKind::Kustomization, &object("kustomization-shop.yaml"))
    else {
        panic!("recorded");
    };
    assert!(
        runs.iter()
            .any(|r| r.status.as_deref() == Some("HealthCheckFailed") && !r.succeeded())
    );

    let Runs::Recorded { runs } =
        Runs::of(FluxKind::HelmRelease, &object("helmrelease-hello.yaml"))
    else {
        panic!("helm-controller records its releases");
    };
    assert_eq!(runs[0].action.as_deref(), Some("install"));
    assert_eq!(runs[0].revision.as_deref(), Some("hello@0.1.0"));
    assert_eq!(runs[0].version, Some(1));
    assert_eq!(runs[0].status.as_deref(), Some("deployed"));
    assert!(runs[0].config_digest.is_some());

    let drifted = summary("helmrelease-hello-drifted.yaml");
    let said = drifted
        .rollout
        .as_ref()
        .and_then(|r| r.drifted.as_deref())
        .unwrap();
    assert!(
        said.starts_with("Cluster state of release default/default-hello.v1 has drifted")
            && said.contains("ConfigMap/default/default-hello-hello changed"),
        "{said}"
    );
    assert_eq!(
        summary("helmrelease-hello.yaml").rollout.unwrap().drifted,
        None
    );
}

/// The Flux Operator installing Flux: a FluxInstance (v2.9.x, from the distribution manifests the
/// operator carries, its Deployments run by kube-controller-manager and kwok) and the FluxReport
/// it then writes, read as the summary tier reads them: the version installed, each component
/// with its image's version, who manages Flux, and the instance ready.
#[test]
fn the_operators_instance_and_its_report_read_as_installed() {
    use fluxfleet::fleet::report::Report;
    let report = Report::read(
        &object("operator/fluxreport-flux.yaml"),
        Some(&object("operator/fluxinstance-flux.yaml")),
        "2026-12-02T07:40:00Z".parse().unwrap(),
    )
    .unwrap();
    assert_eq!(report.version.as_deref(), Some("v2.9.4"));
    assert_eq!(report.status.as_deref(), Some("Installed"));
    assert_eq!(report.managed_by.as_deref(), Some("flux-operator"));
    assert_eq!(report.kubernetes.as_deref(), Some("v1.35.4"));
    let components: Vec<(&str, Option<&str>, bool)> = report
        .components
        .iter()
        .map(|c| (&*c.name, c.version.as_deref(), c.ready))
        .collect();
    assert_eq!(
        components,
        [
            ("helm-controller", Some("v1.6.3"), true),
            ("kustomize-controller", Some("v1.9.4"), true),
            ("notification-controller", Some("v1.9.3"), true),
            ("source-controller", Some("v1.9.4"), true),
        ]
    );
    let instance = report.instance.as_deref().unwrap();
    assert_eq!(&*instance.name, "flux");
    assert_eq!(instance.ready, Some(true));
    assert_eq!(instance.wants.as_deref(), Some("2.9.x"));
    assert!(
        instance
            .revision
            .as_deref()
            .unwrap()
            .starts_with("v2.9.4@sha256:"),
        "{:?}",
        instance.revision
    );
    assert_eq!(report.trouble(), None);
}

/// ExternalArtifacts and ArtifactGenerators as source-watcher v2.2.1 wrote them, with the
/// GitRepository they compose from and the Kustomizations that apply them (`artifacts/`,
/// kustomize-controller with its `ExternalArtifact` feature gate), as `flux get all` shows them.
const ARTIFACTS: &[Expected] = &[
    (
        "artifacts/gitrepository-fleet.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("Succeeded"),
        "main@sha1:cfd00e52",
        "stored artifact for revision 'main@sha1:cfd00e52",
    ),
    (
        "artifacts/artifactgenerator-infra-bundle.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("Succeeded"),
        "",
        "reconciliation succeeded, generated 2 artifact(s)",
    ),
    // Its GitRepository does not exist.
    (
        "artifacts/artifactgenerator-from-missing-repo.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("SourceFetchFailed"),
        "",
        "get sources failed: GitRepository.source.toolkit.fluxcd.io \"not-there\" not found",
    ),
    // Its GitRepository deleted after it generated: the ExternalArtifact it made stays ready.
    (
        "artifacts/artifactgenerator-copy-bundle.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("SourceFetchFailed"),
        "",
        "get sources failed: GitRepository.source.toolkit.fluxcd.io \"fleet-copy\" not found",
    ),
    // Created with `source.extensions.fluxcd.io/reconcile: disabled`.
    (
        "artifacts/artifactgenerator-held.yaml",
        Health::Suspended,
        Some(Ready::True),
        Some("ReconciliationDisabled"),
        "",
        "Initialized with reconciliation suspended",
    ),
    (
        "artifacts/externalartifact-infra-only.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("Succeeded"),
        "latest@sha256:098d18b2",
        "Artifact is ready",
    ),
    (
        "artifacts/externalartifact-apps-only.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("Succeeded"),
        "latest@sha256:e206b826",
        "Artifact is ready",
    ),
    (
        "artifacts/externalartifact-copy-only.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("Succeeded"),
        "latest@sha256:098d18b2",
        "Artifact is ready",
    ),
    (
        "artifacts/kustomization-from-artifact.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("ReconciliationSucceeded"),
        "latest@sha256:098d18b2",
        "Applied revision: latest@sha256:098d18b2",
    ),
    (
        "artifacts/kustomization-apps-from-artifact.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("ReconciliationSucceeded"),
        "latest@sha256:e206b826",
        "Applied revision: latest@sha256:e206b826",
    ),
    (
        "artifacts/kustomization-from-copy.yaml",
        Health::Ready,
        Some(Ready::True),
        Some("ReconciliationSucceeded"),
        "latest@sha256:098d18b2",
        "Applied revision: latest@sha256:098d18b2",
    ),
    // Created while kustomize-controller ran without its ExternalArtifact feature gate: stalled
    // until the controller, restarted with it, reconciled it at start (then Ready).
    (
        "artifacts/kustomization-before-gate.yaml",
        Health::Stalled,
        Some(Ready::False),
        Some("AccessDenied"),
        "",
        "can't access 'ExternalArtifact/flux-system/infra-only', ExternalArtifact feature gate is disabled",
    ),
    // Its ExternalArtifact was never generated.
    (
        "artifacts/kustomization-from-never.yaml",
        Health::Failed,
        Some(Ready::False),
        Some("ArtifactFailed"),
        "",
        "ExternalArtifact.source.toolkit.fluxcd.io \"never-made\" not found",
    ),
];

#[test]
fn generated_artifacts_read_as_flux_get_shows_them_and_lead_to_what_made_them() {
    use fluxfleet::fleet::graph::{self, Cause, Objects};
    let dir = format!(
        "{}/tests/fixtures/real-flux/artifacts",
        env!("CARGO_MANIFEST_DIR")
    );
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = format!(
            "artifacts/{}",
            entry.unwrap().file_name().into_string().unwrap()
        );
        assert!(
            file.starts_with("artifacts/events-") || ARTIFACTS.iter().any(|e| e.0 == file),
            "{file} has no expectation"
        );
    }
    let mut objects = Objects::new();
    for &(file, health, ready, reason, revision, message) in ARTIFACTS {
        let s = summary(file);
        let said = s.message.as_deref().unwrap_or("");
        assert_eq!(
            (s.health, s.ready, s.reason.as_deref(), s.shown_revision()),
            (health, ready, reason, revision.to_string()),
            "{file}"
        );
        assert!(said.starts_with(message), "{file}: {said}");
        objects.insert(s.key.clone(), Box::new(s));
    }
    let name = |k: &fluxfleet::fleet::ObjectKey| format!("{}/{}", k.kind.as_str(), k.name);
    let up = |kind: &str, n: &str| -> Vec<String> {
        let o = objects
            .values()
            .find(|o| o.key.kind.as_str() == kind && &*o.key.name == n)
            .unwrap();
        graph::upstream(o).iter().map(name).collect()
    };
    // A Kustomization reads its ExternalArtifact, the artifact its generator, the generator
    // its sources.
    assert_eq!(
        up("Kustomization", "from-artifact"),
        ["ExternalArtifact/infra-only"]
    );
    assert_eq!(
        up("ExternalArtifact", "infra-only"),
        ["ArtifactGenerator/infra-bundle"]
    );
    assert_eq!(
        up("ArtifactGenerator", "infra-bundle"),
        ["GitRepository/fleet"]
    );
    assert_eq!(
        up("ArtifactGenerator", "from-missing-repo"),
        ["GitRepository/not-there"]
    );
    // Each failure is its own: a generator whose source does not exist, a Kustomization whose
    // artifact was never made; an artifact outlives its generator's failure and holds nothing
    // back.
    let causes = graph::causes(&objects);
    let mut said: Vec<(String, bool)> = causes
        .iter()
        .map(|(k, c)| (name(k), *c == Cause::Root))
        .collect();
    said.sort();
    assert_eq!(
        said,
        [
            ("ArtifactGenerator/copy-bundle".to_string(), true),
            ("ArtifactGenerator/from-missing-repo".to_string(), true),
            ("Kustomization/before-gate".to_string(), true),
            ("Kustomization/from-never".to_string(), true),
        ]
    );
    // What source-watcher reported of the generator that lost its source, newest first.
    let list = object("artifacts/events-flux-system.yaml");
    let items: Vec<Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["involvedObject"]["name"] == "copy-bundle")
        .cloned()
        .collect();
    let events = fluxfleet::fleet::ObjectEvent::from_list(&serde_json::json!({ "items": items }));
    let newest = &events[0];
    assert_eq!(
        (newest.from.as_str(), newest.reason.as_str(), newest.warning),
        ("source-watcher", "SourceFetchFailed", true)
    );
    assert!(
        events.iter().any(|e| e.reason == "Ready"
            && e.message
                .starts_with("ExternalArtifact/flux-system/copy-only reconciled")),
        "{events:?}"
    );
}
