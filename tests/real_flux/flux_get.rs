//! Each object the controllers wrote reads as `flux get` shows it: health, READY, reason,
//! REVISION and the start of the message, and every fixture has its expectation.

use fluxfleet::fleet::{Health, Ready};

use super::{Expected, summary};

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
