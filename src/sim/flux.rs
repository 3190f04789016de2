//! Writes Flux status blocks the way the controllers do (FACTS §3.1, the samples): Ready as the
//! summary, Reconciling/ProgressingWithRetry while retrying, Stalled when terminal, the previous
//! artifact or applied revision kept on failure.

use serde_json::{Value, json};

pub mod outage;
#[cfg(test)]
mod real;
pub mod records;
pub mod status;

use crate::facts::{FluxKind, FluxRelease, Health};

/// What the simulator means an object to be (the ground truth), beside what it serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intent {
    /// The health the object's status is written to show when not suspended.
    pub health: Health,
    /// Why it fails, when it does.
    pub failure: Option<Failure>,
}

/// Why an object fails; decides reason and message. Messages depend on the object, never on the
/// cluster, so that the same failure on many clusters reads the same (and groups in triage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    GitAuth,
    OciPull,
    HelmIndex,
    /// A chart the repository lists but cannot serve (`ChartPullError`, retried).
    ChartPull,
    /// No chart version matches `spec.version` (`InvalidChartReference`, stalled).
    ChartReference,
    BucketDenied,
    BuildFailed,
    HealthCheck,
    DependencyNotReady,
    InvalidCel,
    InstallFailed,
    RetriesExceeded,
    UpgradeRolledBack,
    Generic,
    /// The host its URL names fails for every cluster that uses it.
    Outage(outage::Outage),
}

impl Failure {
    /// The failures a kind can show when retrying, and the one it shows when stalled.
    pub fn for_kind(kind: FluxKind) -> (&'static [Failure], Failure) {
        match kind {
            FluxKind::GitRepository => (&[Failure::GitAuth], Failure::Generic),
            FluxKind::OciRepository => (&[Failure::OciPull], Failure::Generic),
            FluxKind::HelmRepository => (&[Failure::HelmIndex], Failure::Generic),
            FluxKind::HelmChart => (&[Failure::ChartPull], Failure::ChartReference),
            FluxKind::Bucket => (&[Failure::BucketDenied], Failure::Generic),
            FluxKind::Kustomization => (
                &[
                    Failure::BuildFailed,
                    Failure::HealthCheck,
                    Failure::HealthCheck,
                ],
                Failure::InvalidCel,
            ),
            FluxKind::HelmRelease => (
                &[Failure::InstallFailed, Failure::UpgradeRolledBack],
                Failure::RetriesExceeded,
            ),
            _ => (&[Failure::Generic], Failure::Generic),
        }
    }
}

/// What the renderer needs to know about the object beside its JSON.
pub struct Context<'a> {
    pub kind: FluxKind,
    /// The revision the object should reach (its artifact for sources, its source's artifact for
    /// appliers).
    pub revision: &'a str,
    /// RFC 3339 time of this change.
    pub now: &'a str,
    /// `reconcile.fluxcd.io/requestedAt` being handled, if any.
    pub handled: Option<&'a str>,
    /// The cluster's Flux release: Kustomizations keep `status.history` from v2.7 on.
    pub flux: FluxRelease,
}

/// Reconciling=True and Ready=Unknown, both reason Progressing: a reconcile under way.
fn progressing(
    conditions: &mut Vec<Value>,
    reconciling: &str,
    ready: &str,
    generation: i64,
    time: &str,
) {
    conditions.push(cond(
        "Reconciling",
        "True",
        "Progressing",
        reconciling,
        generation,
        time,
    ));
    conditions.push(cond(
        "Ready",
        "Unknown",
        "Progressing",
        ready,
        generation,
        time,
    ));
}

fn cond(
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    generation: i64,
    time: &str,
) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message,
           "observedGeneration": generation, "lastTransitionTime": time})
}

/// Keeps the lastTransitionTime of a condition whose status did not change.
pub(super) fn carry_transition_times(old: &Value, new: &mut [Value]) {
    let Some(old) = old.pointer("/status/conditions").and_then(Value::as_array) else {
        return;
    };
    for c in new {
        if let Some(prev) = old
            .iter()
            .find(|p| p["type"] == c["type"] && p["status"] == c["status"])
        {
            c["lastTransitionTime"] = prev["lastTransitionTime"].clone();
        }
    }
}

fn digest_of(seed: &str) -> String {
    // A stable, fake sha256 derived from the text (FNV-1a expanded to 64 hex digits).
    let mut out = String::with_capacity(64);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for round in 0u8..4 {
        for b in seed.bytes().chain([round]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

pub fn sha256_of(seed: &str) -> String {
    format!("sha256:{}", digest_of(seed))
}

fn meta_str<'a>(obj: &'a Value, path: &str) -> &'a str {
    obj.pointer(path).and_then(Value::as_str).unwrap_or("")
}

/// Reason and message of a failure for this object.
pub fn failure_text(f: Failure, obj: &Value, ctx: &Context) -> (&'static str, String) {
    let name = meta_str(obj, "/metadata/name");
    let ns = meta_str(obj, "/metadata/namespace");
    let url = meta_str(obj, "/spec/url");
    let chart = chart_name(obj);
    match f {
        Failure::Outage(o) => outage::text(o, ctx.kind, obj),
        // source-controller v1.9.1's words: go-git's for an HTTP 401 (an empty reason after
        // it), the SSH handshake's for a key the host refuses.
        Failure::GitAuth if url.starts_with("ssh://") => (
            "GitOperationFailed",
            format!(
                "failed to checkout and determine revision: unable to clone '{url}': ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain"
            ),
        ),
        Failure::GitAuth => (
            "GitOperationFailed",
            format!(
                "failed to checkout and determine revision: unable to clone '{url}': authentication required: "
            ),
        ),
        Failure::OciPull => (
            "OCIArtifactPullFailed",
            format!(
                "failed to pull artifact from '{url}': GET https://ghcr.io/v2/{name}/manifests/latest: MANIFEST_UNKNOWN: manifest unknown"
            ),
        ),
        Failure::HelmIndex => (
            "IndexationFailed",
            format!(
                "failed to fetch Helm repository index: failed to cache index to temporary file: Get \"{url}/index.yaml\": dial tcp: lookup {}: no such host",
                url.trim_start_matches("https://")
                    .split('/')
                    .next()
                    .unwrap_or("")
            ),
        ),
        // As source-controller v1.9 words them (tests/fixtures/real-flux).
        Failure::ChartPull => (
            "ChartPullError",
            format!(
                "chart pull error: failed to download chart for remote reference: failed to fetch {}/{chart}-{}.tgz : 404 Not Found",
                crate::catalog::chart_repository(name).unwrap_or("https://charts.example.com"),
                ctx.revision
            ),
        ),
        Failure::ChartReference => (
            "InvalidChartReference",
            format!(
                "invalid chart reference: failed to get chart version for remote reference: no '{chart}' chart with version matching '{}' found",
                meta_str(obj, "/spec/version")
            ),
        ),
        Failure::BucketDenied => (
            "BucketOperationFailed",
            format!(
                "failed to confirm existence of '{}' bucket: Access Denied",
                meta_str(obj, "/spec/bucketName")
            ),
        ),
        // A resource kustomization.yaml lists and the artifact lacks, in kustomize-controller
        // v1.9's words: the build's temporary directory, the path, the missing file three times.
        Failure::BuildFailed => {
            let dir = format!(
                "/tmp/kustomization-{}/{}",
                u32::from_str_radix(&digest_of(name)[..8], 16).unwrap_or(0),
                meta_str(obj, "/spec/path").trim_start_matches("./")
            );
            let missing = format!("{dir}/{MISSING_RESOURCE}");
            (
                "BuildFailed",
                format!(
                    "kustomize build failed: accumulating resources: accumulation err='accumulating resources from '{MISSING_RESOURCE}': open {missing}: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on '{missing}' : lstat {missing}: no such file or directory"
                ),
            )
        }
        Failure::HealthCheck => {
            let (kind, status) = match workload_kind(name) {
                "Job" => ("Job", "Failed"),
                other => (other, "InProgress"),
            };
            (
                "HealthCheckFailed",
                format!(
                    "health check failed after {}: timeout waiting for: [{kind}/{}/{name} status: '{status}']",
                    go_duration(timeout_of(obj), ".031942"),
                    workload_namespace(name),
                ),
            )
        }
        Failure::DependencyNotReady => {
            let dep = obj
                .pointer("/spec/dependsOn/0/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            (
                "DependencyNotReady",
                format!("dependency '{ns}/{dep}' is not ready"),
            )
        }
        Failure::InvalidCel => (
            "InvalidCELExpression",
            format!(
                "failed to parse health check expression for {}: undeclared reference to 'stat'",
                name
            ),
        ),
        // helm-controller v1.6 (Helm 4) waits with kstatus and says what it waited for.
        Failure::InstallFailed | Failure::RetriesExceeded => (
            "InstallFailed",
            format!(
                "Helm install failed for release {} with chart {chart}@{}: {}",
                release_of(obj),
                ctx.revision,
                release_wait(obj)
            ),
        ),
        Failure::UpgradeRolledBack => (
            "RollbackSucceeded",
            format!(
                "Helm rollback to previous release {}.v2 with chart {chart}@{} succeeded",
                release_of(obj),
                ctx.revision
            ),
        ),
        Failure::Generic => (
            "ReconciliationFailed",
            format!("{} {ns}/{name} reconciliation failed", ctx.kind),
        ),
    }
}

/// The resource a failing build's kustomization.yaml names and its artifact lacks.
const MISSING_RESOURCE: &str = "patches.yaml";

/// A Kustomization's timeout in seconds, as kustomize-controller takes it: `spec.timeout`, else
/// its interval less 30 s, never under 30 s.
pub fn timeout_of(obj: &Value) -> u64 {
    let seconds = |path: &str| {
        obj.pointer(path)
            .and_then(Value::as_str)
            .and_then(parse_duration)
    };
    seconds("/spec/timeout")
        .or_else(|| seconds("/spec/interval").map(|i| i.saturating_sub(30)))
        .unwrap_or(270)
        .max(30)
}

/// Seconds of a Go duration in whole hours, minutes and seconds (`1h0m0s`, `4m30s`, `40s`).
pub fn parse_duration(text: &str) -> Option<u64> {
    let (mut total, mut number) = (0u64, String::new());
    for c in text.chars() {
        match c {
            '0'..='9' => number.push(c),
            'h' | 'm' | 's' => {
                let n: u64 = number.parse().ok()?;
                total += n * match c {
                    'h' => 3600,
                    'm' => 60,
                    _ => 1,
                };
                number.clear();
            }
            _ => return None,
        }
    }
    number.is_empty().then_some(total)
}

/// `seconds` as Go prints a duration (`4m30s`), `fraction` (`.031942`, or empty) on the seconds.
pub fn go_duration(seconds: u64, fraction: &str) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match (h, m) {
        (0, 0) => format!("{s}{fraction}s"),
        (0, _) => format!("{m}m{s}{fraction}s"),
        _ => format!("{h}h{m}m{s}{fraction}s"),
    }
}

/// The namespace a Kustomization named `name` deploys its workload into.
pub fn workload_namespace(name: &str) -> &str {
    match name {
        "infra-controllers" | "infra-configs" => "kube-system",
        "apps" => "apps",
        other => other,
    }
}

/// The kind of the one workload a Kustomization named `name` deploys: the configs are applied
/// by a Job, everything else runs as a Deployment.
pub fn workload_kind(name: &str) -> &'static str {
    if name.ends_with("-configs") {
        "Job"
    } else {
        "Deployment"
    }
}

/// The API group of a workload kind.
pub fn workload_group(kind: &str) -> &'static str {
    if kind == "Job" { "batch" } else { "apps" }
}

/// A HelmRelease's Helm release as helm-controller names it: `<namespace>/<name>`, where both
/// are the target namespace's and `<targetNamespace>-<name>` when it has one (unless
/// `spec.releaseName` says otherwise).
pub fn release_of(obj: &Value) -> String {
    let name = meta_str(obj, "/metadata/name");
    let target = meta_str(obj, "/spec/targetNamespace");
    let namespace = if target.is_empty() {
        meta_str(obj, "/metadata/namespace")
    } else {
        target
    };
    match (meta_str(obj, "/spec/releaseName"), target) {
        (given, _) if !given.is_empty() => format!("{namespace}/{given}"),
        (_, "") => format!("{namespace}/{name}"),
        (_, target) => format!("{namespace}/{target}-{name}"),
    }
}

/// What Helm 4 says when its wait for a release's Deployment ends without it ready (the
/// simulator's release runs one Deployment named after the HelmRelease, in its namespace).
pub fn release_wait(obj: &Value) -> String {
    let release = release_of(obj);
    let namespace = release.split('/').next().unwrap_or_default();
    format!(
        "timeout waiting for: [Deployment/{namespace}/{} status: 'InProgress']",
        meta_str(obj, "/metadata/name")
    )
}

fn chart_name(obj: &Value) -> &str {
    obj.pointer("/spec/chart/spec/chart")
        .or_else(|| obj.pointer("/spec/chart"))
        .and_then(Value::as_str)
        .or_else(|| obj.pointer("/spec/chartRef/name").and_then(Value::as_str))
        .unwrap_or("")
}
