//! `--version`: the build and the Flux APIs it reads.

use super::fluxfleet;

#[test]
fn the_version_names_the_build_and_the_flux_apis_it_reads() {
    let out = fluxfleet(&["--version"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!("fluxfleet {}\n", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    let line = |kind: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(kind))
            .unwrap_or_else(|| panic!("{kind} in {text}"))
            .to_string()
    };
    assert!(
        line("HelmRelease").ends_with("helm.toolkit.fluxcd.io              v2 v2beta2 v2beta1")
    );
    assert!(line("Kustomization").contains("kustomize.toolkit.fluxcd.io"));
    assert!(line("Alert").ends_with("v1beta3 v1beta2 v1beta1"));
    assert!(text.contains("Flux v2.0 to v2.9"), "{text}");
}
