//! ExternalArtifacts and ArtifactGenerators as source-watcher wrote them: read as `flux get all`
//! shows them, each leading to what made it.

use fluxfleet::fleet::{Health, Ready};
use serde_json::Value;

use super::{Expected, object, summary};

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
    use fluxfleet::fleet::graph::{self, Cause, ClusterObjects};
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
    let mut objects = ClusterObjects::new();
    for &(file, health, ready, reason, revision, message) in ARTIFACTS {
        let s = summary(file);
        let said = s.message.as_deref().unwrap_or("");
        assert_eq!(
            (s.health, s.ready, s.reason.as_deref(), s.shown_revision()),
            (health, ready, reason, revision.to_string()),
            "{file}"
        );
        assert!(said.starts_with(message), "{file}: {said}");
        objects.insert(s);
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
