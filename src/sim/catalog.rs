//! The objects a simulated cluster runs: a bootstrap repository and Kustomization, layered
//! Kustomizations with `dependsOn`, Helm apps with their generated HelmCharts, OCI and Bucket
//! sources, and team tenants — the shapes of a real `flux bootstrap`-ed fleet repository.

use serde_json::{Value, json};

use crate::facts::FluxKind;

/// A Helm application: repository, chart and the namespace it is released into.
struct HelmApp {
    name: &'static str,
    repo: &'static str,
    url: &'static str,
    namespace: &'static str,
    versions: [&'static str; 3],
}

const HELM_APPS: &[HelmApp] = &[
    HelmApp {
        name: "ingress-nginx",
        repo: "ingress-nginx",
        url: "https://kubernetes.github.io/ingress-nginx",
        namespace: "ingress-nginx",
        versions: ["4.12.1", "4.12.2", "4.13.0"],
    },
    HelmApp {
        name: "cert-manager",
        repo: "jetstack",
        url: "https://charts.jetstack.io",
        namespace: "cert-manager",
        versions: ["v1.17.2", "v1.18.0", "v1.18.1"],
    },
    HelmApp {
        name: "podinfo",
        repo: "podinfo",
        url: "https://stefanprodan.github.io/podinfo",
        namespace: "apps",
        versions: ["6.7.1", "6.8.0", "6.9.0"],
    },
    HelmApp {
        name: "kube-prometheus-stack",
        repo: "prometheus-community",
        url: "https://prometheus-community.github.io/helm-charts",
        namespace: "monitoring",
        versions: ["72.6.2", "73.1.0", "74.0.0"],
    },
    HelmApp {
        name: "metrics-server",
        repo: "metrics-server",
        url: "https://kubernetes-sigs.github.io/metrics-server",
        namespace: "kube-system",
        versions: ["3.12.2", "3.13.0", "3.13.1"],
    },
    HelmApp {
        name: "external-dns",
        repo: "external-dns",
        url: "https://kubernetes-sigs.github.io/external-dns",
        namespace: "external-dns",
        versions: ["1.16.1", "1.17.0", "1.18.0"],
    },
    HelmApp {
        name: "loki",
        repo: "grafana",
        url: "https://grafana.github.io/helm-charts",
        namespace: "monitoring",
        versions: ["6.29.0", "6.30.1", "6.31.0"],
    },
    HelmApp {
        name: "kyverno",
        repo: "kyverno",
        url: "https://kyverno.github.io/kyverno",
        namespace: "kyverno",
        versions: ["3.4.1", "3.4.2", "3.5.0"],
    },
    HelmApp {
        name: "sealed-secrets",
        repo: "sealed-secrets",
        url: "https://bitnami-labs.github.io/sealed-secrets",
        namespace: "kube-system",
        versions: ["2.17.2", "2.17.3", "2.18.0"],
    },
];

const TEAMS: &[&str] = &[
    "payments",
    "checkout",
    "search",
    "identity",
    "catalog",
    "billing",
    "orders",
    "analytics",
];

/// One object to create: its kind and its JSON without status. Generation and metadata are
/// filled in by the generator.
pub struct Planned {
    pub kind: FluxKind,
    pub object: Value,
}

fn obj(kind: FluxKind, ns: &str, name: &str, spec: Value) -> Planned {
    Planned {
        kind,
        object: json!({"apiVersion": "", "kind": kind.as_str(), "metadata": {"name": name, "namespace": ns}, "spec": spec}),
    }
}

fn owned_by_ks(mut p: Planned, ks: &str) -> Planned {
    p.object["metadata"]["labels"] = json!({
        "kustomize.toolkit.fluxcd.io/name": ks,
        "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
    });
    p
}

fn kustomization(name: &str, path: &str, source: (&str, &str), depends: Option<&str>) -> Planned {
    let mut spec = json!({
        "interval": "10m0s", "retryInterval": "2m0s", "timeout": "5m0s", "path": path,
        "prune": true, "wait": true, "sourceRef": {"kind": source.0, "name": source.1},
    });
    if let Some(dep) = depends {
        spec["dependsOn"] = json!([{"name": dep}]);
    }
    owned_by_ks(
        obj(FluxKind::Kustomization, "flux-system", name, spec),
        "flux-system",
    )
}

fn helm_app(app: &HelmApp, repo_exists: bool) -> Vec<Planned> {
    let mut out = Vec::new();
    if !repo_exists {
        out.push(owned_by_ks(
            obj(
                FluxKind::HelmRepository,
                "flux-system",
                app.repo,
                json!({"interval": "1h0m0s", "url": app.url}),
            ),
            "infra-controllers",
        ));
    }
    let mut chart = obj(
        FluxKind::HelmChart,
        "flux-system",
        &format!("{}-{}", app.namespace, app.name),
        json!({
            "chart": app.name, "version": "*", "interval": "12h0m0s", "reconcileStrategy": "ChartVersion",
            "sourceRef": {"kind": "HelmRepository", "name": app.repo},
        }),
    );
    chart.object["metadata"]["labels"] = json!({
        "helm.toolkit.fluxcd.io/name": app.name, "helm.toolkit.fluxcd.io/namespace": app.namespace,
    });
    out.push(chart);
    out.push(owned_by_ks(obj(FluxKind::HelmRelease, app.namespace, app.name, json!({
        "interval": "30m0s", "releaseName": app.name,
        "chart": {"spec": {"chart": app.name, "version": "*", "interval": "12h0m0s",
                  "sourceRef": {"kind": "HelmRepository", "name": app.repo, "namespace": "flux-system"}}},
        "install": {"remediation": {"retries": 3}},
        "upgrade": {"remediation": {"retries": 3, "remediateLastFailure": true}},
        "driftDetection": {"mode": "enabled"},
        // Real releases carry values; clients must not keep them (DESIGN: strip spec.values).
        "values": {"replicaCount": 2, "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                   "podAnnotations": {"fluxfleet.dev/sim": "true"}, "nodeSelector": {"kubernetes.io/os": "linux"}},
    })), "infra-controllers"));
    out
}

/// Returns the counter's value, then increments it.
fn bump(counters: &mut [usize; 4], slot: usize) -> usize {
    counters[slot] += 1;
    counters[slot] - 1
}

/// `""` for the first of a kind, then `-2`, `-3` …
fn suffix_for(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!("-{}", n + 1)
    }
}

#[derive(Clone, Copy)]
enum Unit {
    Helm(usize),
    Oci,
    Redis,
    Bucket,
    Team,
}

/// The planned objects of one cluster, in creation order, exactly `count` of them.
pub fn plan(cluster: &str, workspace: &str, count: usize) -> Vec<Planned> {
    let mut out = bootstrap(cluster, workspace);
    // The first round interleaves Helm apps with the other source kinds so that even a small
    // cluster has every kind; later rounds add tenants, OCI and Bucket sources.
    let first = [
        Unit::Helm(0),
        Unit::Helm(1),
        Unit::Oci,
        Unit::Helm(2),
        Unit::Bucket,
        Unit::Helm(3),
        Unit::Redis,
        Unit::Team,
        Unit::Helm(4),
        Unit::Helm(5),
        Unit::Helm(6),
        Unit::Helm(7),
        Unit::Helm(8),
    ];
    let later = [
        Unit::Team,
        Unit::Oci,
        Unit::Team,
        Unit::Redis,
        Unit::Team,
        Unit::Bucket,
    ];
    let mut repos: Vec<&str> = Vec::new();
    let mut counters = [0usize; 4];
    for unit in first.iter().chain(later.iter().cycle()) {
        if out.len() >= count {
            break;
        }
        match *unit {
            Unit::Helm(i) => {
                let app = &HELM_APPS[i];
                out.extend(helm_app(app, repos.contains(&app.repo)));
                repos.push(app.repo);
            }
            Unit::Oci => out.extend(oci_app(&suffix_for(bump(&mut counters, 0)))),
            Unit::Redis => out.extend(redis(&suffix_for(bump(&mut counters, 1)))),
            Unit::Bucket => out.extend(bucket(workspace, &suffix_for(bump(&mut counters, 2)))),
            Unit::Team => out.extend(team(bump(&mut counters, 3))),
        }
    }
    out.truncate(count);
    out
}

/// What `flux bootstrap` leaves and every cluster has: the fleet repository, the cluster's own
/// Kustomization, and infrastructure → configs → apps, each depending on the one before.
fn bootstrap(cluster: &str, workspace: &str) -> Vec<Planned> {
    vec![
        obj(
            FluxKind::GitRepository,
            "flux-system",
            "flux-system",
            json!({
                "interval": "1m0s", "ref": {"branch": "main"}, "secretRef": {"name": "flux-system"},
                "timeout": "60s", "url": "https://github.com/example-org/fleet-infra",
            }),
        ),
        kustomization(
            "flux-system",
            &format!("./clusters/{workspace}/{cluster}"),
            ("GitRepository", "flux-system"),
            None,
        ),
        kustomization(
            "infra-controllers",
            "./infrastructure/controllers",
            ("GitRepository", "flux-system"),
            None,
        ),
        kustomization(
            "infra-configs",
            "./infrastructure/configs",
            ("GitRepository", "flux-system"),
            Some("infra-controllers"),
        ),
        kustomization(
            "apps",
            &format!("./apps/{workspace}"),
            ("GitRepository", "flux-system"),
            Some("infra-configs"),
        ),
    ]
}

/// Manifests from an OCI artifact, applied after the apps.
fn oci_app(suffix: &str) -> Vec<Planned> {
    let mut out = Vec::new();
    let name = format!("podinfo-manifests{suffix}");
    out.push(owned_by_ks(obj(FluxKind::OciRepository, "flux-system", &name, json!({
            "interval": "5m0s", "url": "oci://ghcr.io/stefanprodan/manifests/podinfo", "ref": {"semver": ">=6.0.0"},
        })), "flux-system"));
    out.push(kustomization(
        &format!("podinfo-oci{suffix}"),
        "./",
        ("OCIRepository", &name),
        Some("apps"),
    ));
    out
}

/// A Helm chart from an OCI repository, released in the `data` namespace.
fn redis(suffix: &str) -> Vec<Planned> {
    let mut out = Vec::new();
    let name = format!("redis{suffix}");
    out.push(owned_by_ks(obj(FluxKind::OciRepository, "flux-system", &name, json!({
            "interval": "12h0m0s", "layerSelector": {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"},
            "url": "oci://registry-1.docker.io/bitnamicharts/redis", "ref": {"semver": ">=21.0.0"},
        })), "flux-system"));
    out.push(owned_by_ks(obj(FluxKind::HelmRelease, "data", &name, json!({
            "interval": "10m0s", "chartRef": {"kind": "OCIRepository", "name": name, "namespace": "flux-system"},
            "install": {"timeout": "5m0s", "remediation": {"retries": 3}},
            "values": {"architecture": "replication", "auth": {"enabled": true}},
        })), "apps"));
    out
}

/// Terraform outputs from a bucket, applied as the cluster's variables.
fn bucket(workspace: &str, suffix: &str) -> Vec<Planned> {
    let mut out = Vec::new();
    let name = format!("terraform-outputs{suffix}");
    out.push(obj(FluxKind::Bucket, "flux-system", &name, json!({
            "interval": "5m0s", "provider": "aws", "bucketName": format!("{workspace}-terraform-outputs{suffix}"),
            "endpoint": "s3.amazonaws.com", "region": "eu-west-1",
        })));
    out.push(kustomization(
        &format!("cluster-vars{suffix}"),
        "./",
        ("Bucket", &name),
        None,
    ));
    out
}

/// The `n`th tenant: a team's repository and its Kustomization, after the apps.
fn team(n: usize) -> Vec<Planned> {
    let mut out = Vec::new();
    let team = TEAMS[n % TEAMS.len()];
    let name = if n < TEAMS.len() {
        team.to_string()
    } else {
        format!("{team}-{}", n / TEAMS.len() + 1)
    };
    out.push(owned_by_ks(obj(FluxKind::GitRepository, "flux-system", &name, json!({
            "interval": "5m0s", "ref": {"branch": "main"}, "secretRef": {"name": format!("{team}-git-token")},
            "url": format!("https://github.com/example-org/{team}-apps"),
        })), "apps"));
    out.push(kustomization(
        &name,
        "./deploy/production",
        ("GitRepository", &name),
        Some("apps"),
    ));
    out
}

/// The repository URL an app's chart is served from, by HelmChart name `<ns>-<app>`.
pub fn chart_repository(helm_chart: &str) -> Option<&'static str> {
    HELM_APPS
        .iter()
        .find(|a| format!("{}-{}", a.namespace, a.name) == helm_chart)
        .map(|a| a.url)
}

/// The chart versions an app can be at (oldest first), by HelmChart name `<ns>-<app>`.
pub fn chart_versions(helm_chart: &str) -> Option<&'static [&'static str; 3]> {
    HELM_APPS
        .iter()
        .find(|a| format!("{}-{}", a.namespace, a.name) == helm_chart)
        .map(|a| &a.versions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_exactly_the_requested_count_with_unique_names() {
        for count in [1, 7, 30, 80] {
            let p = plan("c1", "ws", count);
            assert_eq!(p.len(), count);
            let mut keys: Vec<String> = p
                .iter()
                .map(|o| {
                    format!(
                        "{}/{}/{}",
                        o.kind, o.object["metadata"]["namespace"], o.object["metadata"]["name"]
                    )
                })
                .collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), count, "duplicate object in a plan of {count}");
        }
    }

    #[test]
    fn thirty_objects_mix_sources_and_appliers() {
        let p = plan("c1", "ws", 30);
        for kind in [
            FluxKind::GitRepository,
            FluxKind::OciRepository,
            FluxKind::HelmRepository,
            FluxKind::HelmChart,
            FluxKind::Bucket,
            FluxKind::Kustomization,
            FluxKind::HelmRelease,
        ] {
            assert!(p.iter().any(|o| o.kind == kind), "{kind} missing");
        }
    }
}
