//! The simulated fleet behaves like Flux: what it serves means what its ground truth says, and
//! its controller handles reconcile, suspend, resume, force and reset as FACTS §2 describes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use common::truth::seen as meant;
use std::time::Duration;

use base64::Engine;
use common::*;
use fluxfleet::fleet::{FluxKind, Health, health_of};
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::{Value, json};

mod changes;
mod connections;
mod requests;
mod statuses;

const FLUX_KINDS: [(&str, &str, &str, &str); 7] = [
    (
        "source.toolkit.fluxcd.io",
        "v1",
        "GitRepository",
        "gitrepositories",
    ),
    (
        "source.toolkit.fluxcd.io",
        "v1",
        "OCIRepository",
        "ocirepositories",
    ),
    (
        "source.toolkit.fluxcd.io",
        "v1",
        "HelmRepository",
        "helmrepositories",
    ),
    ("source.toolkit.fluxcd.io", "v1", "HelmChart", "helmcharts"),
    ("source.toolkit.fluxcd.io", "v1", "Bucket", "buckets"),
    (
        "kustomize.toolkit.fluxcd.io",
        "v1",
        "Kustomization",
        "kustomizations",
    ),
    (
        "helm.toolkit.fluxcd.io",
        "v2",
        "HelmRelease",
        "helmreleases",
    ),
];

fn status_str<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    v.pointer(path).and_then(Value::as_str)
}
