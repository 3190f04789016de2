//! Objects as the real Flux controllers wrote them (`tests/fixtures/real-flux`: source-controller
//! v1.9.1, kustomize-controller v1.9.4, helm-controller v1.6.3 and notification-controller v1.9.3
//! reconciling on a kube-apiserver v1.35.4, with kube-controller-manager, kube-scheduler and kwok
//! running the workloads for the later ones, source-watcher v2.2.1 for `artifacts/`; captured
//! 2026-12-02; how, in docs/real-flux.md): what fluxfleet makes of each — health, reason,
//! READY, REVISION and message as `flux get` prints them, and what each depends on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fluxfleet::fleet::{FluxSummary, Health, Ready};
use serde_json::Value;

mod artifacts;
mod events;
mod flux_get;
mod operator;
mod root_causes;
mod runs;

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
