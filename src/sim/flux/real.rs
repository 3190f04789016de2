//! The simulator's failing statuses beside the real controllers' (`tests/fixtures/real-flux`:
//! source-controller v1.9.1, kustomize-controller v1.9.4, helm-controller v1.6.3): given the
//! real object's spec, the simulator writes the same conditions with the same reasons, the same
//! observed generation, and messages of the same shape — the same words, with only the numbers
//! and what a status cannot know (the files in a Git repository, the workload a health check
//! waited for) told apart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;

use super::status::render_status;
use super::{Context, Failure, Intent};
use crate::facts::{FluxKind, FluxRelease, Health};

/// A real object: the controller's status, and the object without it as the simulator gets it.
fn real(file: &str) -> (Value, Value) {
    let path = format!(
        "{}/../../tests/fixtures/real-flux/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut object: Value = serde_saphyr::from_str(&text).unwrap();
    let status = object.as_object_mut().unwrap().remove("status").unwrap();
    (object, status)
}

/// Every run of digits as one `0`: durations, temporary directories, generations.
fn shape(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('0') {
                out.push('0');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// (type, status, reason, message shape) of each condition, sorted by type, with what a status
/// cannot know put as the simulator puts it (`unknowable`).
fn conditions(
    status: &Value,
    unknowable: &[(&str, &str)],
) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or("").to_string();
            let message = unknowable
                .iter()
                .fold(text("message"), |m, (real, ours)| m.replace(real, ours));
            (
                text("type"),
                text("status"),
                text("reason"),
                shape(&message),
            )
        })
        .collect();
    out.sort();
    out
}

struct Case {
    file: &'static str,
    kind: FluxKind,
    health: Health,
    failure: Failure,
    /// The revision the object was reconciling.
    revision: &'static str,
    /// (in the real message, in the simulator's): what a status cannot know.
    unknowable: &'static [(&'static str, &'static str)],
}

const CASES: &[Case] = &[
    // A resource kustomization.yaml lists that is not in the repository.
    Case {
        file: "kustomization-bad-build.yaml",
        kind: FluxKind::Kustomization,
        health: Health::Failed,
        failure: Failure::BuildFailed,
        revision: "main@sha1:354a8afe043ffe777b443ec9a10112494ae3dcee",
        unknowable: &[("missing.yaml", "patches.yaml")],
    },
    // A Deployment nothing runs, waited for until the Kustomization's timeout.
    Case {
        file: "kustomization-apps.yaml",
        kind: FluxKind::Kustomization,
        health: Health::Failed,
        failure: Failure::HealthCheck,
        revision: "main@sha1:2de2a43bc5ca17076173fd7e5d6ff66ed4f673c1",
        unknowable: &[("Deployment/default/web", "Deployment/apps/apps")],
    },
    // Held back by a dependency that is not ready.
    Case {
        file: "kustomization-after-broken.yaml",
        kind: FluxKind::Kustomization,
        health: Health::Failed,
        failure: Failure::DependencyNotReady,
        revision: "",
        unknowable: &[],
    },
    // A chart version the repository lists but cannot serve (its file answers 404).
    Case {
        file: "helmchart-flux-system-pull-error.yaml",
        kind: FluxKind::HelmChart,
        health: Health::Failed,
        failure: Failure::ChartPull,
        revision: "0.2.0",
        unknowable: &[(
            "http://127.0.0.1:28080/charts/",
            "https://charts.example.com/",
        )],
    },
    // Out of install retries, its Deployment never ready within the release's timeout: the
    // chart's Deployment is named after the release, the simulator's after the HelmRelease.
    Case {
        file: "helmrelease-hello-app.yaml",
        kind: FluxKind::HelmRelease,
        health: Health::Stalled,
        failure: Failure::RetriesExceeded,
        revision: "0.1.0",
        unknowable: &[("default-hello-app-app", "hello-app")],
    },
    // A Git server refusing without credentials (HTTP 401), and one rate-limiting (429).
    Case {
        file: "gitrepository-private-noauth.yaml",
        kind: FluxKind::GitRepository,
        health: Health::Failed,
        failure: Failure::GitAuth,
        revision: "",
        unknowable: &[],
    },
    Case {
        file: "gitrepository-limited.yaml",
        kind: FluxKind::GitRepository,
        health: Health::Failed,
        failure: Failure::Outage(super::outage::Outage::RateLimit),
        revision: "",
        unknowable: &[],
    },
    // No chart version matches the constraint: stalled until the spec changes.
    Case {
        file: "helmchart-flux-system-wrong-version.yaml",
        kind: FluxKind::HelmChart,
        health: Health::Stalled,
        failure: Failure::ChartReference,
        revision: "",
        unknowable: &[],
    },
];

#[test]
fn failing_statuses_are_written_as_the_real_controllers_write_them() {
    for case in CASES {
        let (object, theirs) = real(case.file);
        let ctx = Context {
            kind: case.kind,
            revision: case.revision,
            now: "2026-12-02T03:16:20Z",
            handled: None,
            flux: FluxRelease::LATEST,
        };
        let intent = Intent {
            health: case.health,
            failure: Some(case.failure),
        };
        let ours = render_status(&object, intent, &ctx);
        let expected = conditions(&theirs, case.unknowable);
        assert_eq!(conditions(&ours, &[]), expected, "{}", case.file);
        assert_eq!(
            ours["observedGeneration"], theirs["observedGeneration"],
            "{}",
            case.file
        );
    }
}
