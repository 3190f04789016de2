//! The rules on messages Flux's controllers wrote, as users reported them (the issue each came
//! from beside it; names of people's repositories kept where they were public), and on what
//! must never be an incident.

use proptest::prelude::*;

use super::*;

fn cause(message: &str) -> Option<(ErrorClass, String)> {
    shared_cause(message).map(|s| (s.class, s.endpoint))
}

fn is(class: ErrorClass, endpoint: &str) -> Option<(ErrorClass, String)> {
    Some((class, endpoint.to_string()))
}

#[test]
fn dns_failures_name_the_host_looked_up_not_the_resolver() {
    // fluxcd/flux2#1494: the cluster's resolver named, and a UDP pair.
    assert_eq!(
        cause(
            "unable to clone 'ssh://git@github.com/my_org/fleet-infra', error: dial tcp: lookup \
             github.com on 10.100.0.10:53: read udp 192.168.78.214:47218->10.100.0.10:53: i/o timeout"
        ),
        is(ErrorClass::Dns, "github.com")
    );
    // fluxcd/flux2#4200: a lookup that times out is DNS, not a timeout.
    assert_eq!(
        cause(
            "failed to checkout and determine revision: unable to clone \
             'https://github.com/stefanprodan/podinfo': Get \"https://github.com/stefanprodan/\
             podinfo/info/refs?service=git-upload-pack\": dial tcp: lookup github.com: i/o timeout"
        ),
        is(ErrorClass::Dns, "github.com")
    );
    // fluxcd/source-controller#192: "server misbehaving".
    assert_eq!(
        cause(
            "failed to download repository index: Get \"https://charts.bitnami.com/bitnami/index.yaml\": \
             dial tcp: lookup charts.bitnami.com on 10.43.0.10:53: server misbehaving"
        ),
        is(ErrorClass::Dns, "charts.bitnami.com")
    );
    // The simulator's HelmRepository failure, as source-controller words it.
    assert_eq!(
        cause(
            "failed to fetch Helm repository index: failed to cache index to temporary file: Get \
             \"https://charts.Example.com/index.yaml\": dial tcp: lookup charts.example.com: no such host"
        ),
        is(ErrorClass::Dns, "charts.example.com")
    );
}

#[test]
fn http_answers_name_the_host_that_gave_them() {
    // fluxcd/source-controller#1180: a Helm index refused.
    assert_eq!(
        cause(
            "failed to fetch Helm repository index: failed to cache index to temporary file: failed \
             to fetch https://istio-release.storage.googleapis.com/charts/index.yaml : 403 Forbidden"
        ),
        is(ErrorClass::Auth, "istio-release.storage.googleapis.com")
    );
    // fluxcd/flux2#1713: quay.io rate limiting, an HTML body after it.
    assert_eq!(
        cause(
            "GET https://quay.io/v2/astronomer/someimage/tags/list?n=50&next_page=REDACTED: \
             unexpected status code 429 Too Many Requests: <html>\r\n<head><title>429 Too Many \
             Requests</title></head>"
        ),
        is(ErrorClass::RateLimit, "quay.io")
    );
    // Docker Hub's pull limit: the URL after the error is advice, not the endpoint.
    assert_eq!(
        cause(
            "failed to pull artifact from 'oci://docker.io/acme/app': GET \
             https://index.docker.io/v2/acme/app/manifests/latest: TOOMANYREQUESTS: You have \
             reached your pull rate limit. You may increase the limit by authenticating and \
             upgrading: https://www.docker.com/increase-rate-limit"
        ),
        is(ErrorClass::RateLimit, "index.docker.io")
    );
    // ECR refusing a pull.
    assert_eq!(
        cause(
            "GET https://123456789012.dkr.ecr.eu-west-2.amazonaws.com/v2/app/manifests/latest: \
             unexpected status code 401 Unauthorized: Not Authorized"
        ),
        is(
            ErrorClass::Auth,
            "123456789012.dkr.ecr.eu-west-2.amazonaws.com"
        )
    );
    // A chart repository down (the form of l7mp/stunner-helm#64's 404, answering 503).
    assert_eq!(
        cause(
            "failed to fetch Helm repository index: failed to cache index to temporary file: \
             failed to fetch https://charts.example.org/stable/index.yaml : 503 Service Unavailable"
        ),
        is(ErrorClass::ServerError, "charts.example.org")
    );
    // "504 Gateway Timeout" is the server's answer, not a timeout of ours.
    assert_eq!(
        cause("failed to fetch https://charts.example.org/index.yaml : 504 Gateway Timeout"),
        is(ErrorClass::ServerError, "charts.example.org")
    );
}

#[test]
fn a_token_service_is_the_endpoint_when_credentials_cannot_be_had() {
    // fluxcd/pkg#734: ECR's credentials from STS, refused; "StatusCode: 0" is no answer.
    assert_eq!(
        cause(
            "failed to get credential from awS: operation error ECR: GetAuthorizationToken, \
             exceeded maximum number of attempts, 3, failed to sign request: failed to retrieve \
             credentials: failed to refresh cached credentials, failed to retrieve credentials, \
             operation error STS: AssumeRoleWithWebIdentity, exceeded maximum number of attempts, \
             3, https response error StatusCode: 0, Request ID:, request send failed, Post \
             \"https://sts.eu-west-1.amazonaws.com/\": Forbidden"
        ),
        is(ErrorClass::Auth, "sts.eu-west-1.amazonaws.com")
    );
    assert_eq!(
        cause(
            "operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 503, \
             RequestID: 1f2e, Post \"https://sts.us-east-1.amazonaws.com/\": ServiceUnavailable"
        ),
        is(ErrorClass::ServerError, "sts.us-east-1.amazonaws.com")
    );
}

#[test]
fn timeouts_connections_and_tls_name_the_host_not_its_address() {
    // fluxcd/flux2#1370.
    assert_eq!(
        cause(
            "failed to download repository index: Get \"https://helm.influxdata.com/index.yaml\": \
             context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        ),
        is(ErrorClass::Timeout, "helm.influxdata.com")
    );
    // fluxcd/flux2#4647.
    assert_eq!(
        cause(
            "unable to clone 'https://gitlab.domain/group/repository.git': Get \
             \"https://gitlab.domain/group/repository.git/info/refs?service=git-upload-pack\": \
             context deadline exceeded"
        ),
        is(ErrorClass::Timeout, "gitlab.domain")
    );
    // fluxcd/source-controller#1154: a reset named by addresses, the host by its URL.
    assert_eq!(
        cause(
            "failed to checkout and determine revision: unable to clone \
             'https://github.com/acme/fleet': read tcp 10.244.0.12:41234->140.82.121.4:443: read: \
             connection reset by peer"
        ),
        is(ErrorClass::Connection, "github.com")
    );
    // fluxcd/flux2#1385: no route; the port kept, not the scheme's own.
    assert_eq!(
        cause(
            "failed to checkout and determine revision: unable to clone \
             'ssh://git@gitea.example.org:2222/acme/fleet': dial tcp 203.0.113.7:2222: connect: \
             no route to host"
        ),
        is(ErrorClass::Connection, "gitea.example.org:2222")
    );
    // fluxcd/flux2#2568: a corporate Git host's certificate.
    assert_eq!(
        cause(
            "kustomize build failed: accumulating resources: accumulation err='accumulating \
             resources from 'https://gitlab.lab.okd.local/blog?ref=config': Get \
             \"https://gitlab.lab.okd.local/blog?ref=config\": x509: certificate signed by unknown \
             authority': git cmd = '/usr/bin/git fetch --depth=1 origin config': exit status 128"
        ),
        is(ErrorClass::Tls, "gitlab.lab.okd.local")
    );
    // "TLS handshake timeout" is a timeout.
    assert_eq!(
        cause("Get \"https://registry.example.com:5000/v2/\": net/http: TLS handshake timeout"),
        is(ErrorClass::Timeout, "registry.example.com:5000")
    );
    // The simulator's GitRepository failure: the key refused.
    assert_eq!(
        cause(
            "failed to checkout and determine revision: unable to clone \
             'ssh://git@github.com/acme/fleet': ssh: handshake failed: ssh: unable to \
             authenticate, attempted methods [none publickey], no supported methods remain"
        ),
        is(ErrorClass::Auth, "github.com")
    );
}

#[test]
fn the_clusters_own_services_and_failures_of_its_own_are_no_incident() {
    for message in [
        // A health check: no endpoint.
        "health check failed after 5m0.031942s: timeout waiting for: [Deployment/apps/podinfo \
         status: 'InProgress']",
        // The cluster's own API refusing.
        "Deployment/apps/podinfo dry-run failed (Forbidden): deployments.apps \"podinfo\" is \
         forbidden: User \"system:serviceaccount:apps:flux\" cannot patch resource \"deployments\"",
        // Its own source-controller.
        "failed to download artifact from http://source-controller.flux-system.svc.cluster.local./\
         kustomization/flux-system/apps/abc.tar.gz, error: Get \"http://source-controller.\
         flux-system.svc.cluster.local./kustomization/flux-system/apps/abc.tar.gz\": dial tcp \
         10.96.12.34:80: connect: connection refused",
        // fluxcd/source-controller#393: a short name is the cluster's.
        "POST http://notification-controller/ giving up after 5 attempt(s): Post \
         \"http://notification-controller/\": context deadline exceeded (Client.Timeout exceeded \
         while awaiting headers)",
        // Every cluster has a 10.96.0.1: its own API server.
        "Get \"https://10.96.0.1:443/api?timeout=32s\": dial tcp 10.96.0.1:443: i/o timeout",
        // Helm waiting on the cluster.
        "Helm install failed for release apps/podinfo with chart podinfo@6.5.0: context deadline \
         exceeded",
        // fluxcd/flux2#746: no host named.
        "failed to download repository index: stream error: stream ID 1; INTERNAL_ERROR",
        // A missing index or manifest is the object's own mistake, not an outage.
        "failed to fetch https://github.com/temporalio/helm-charts/index.yaml : 404 Not Found",
        "failed to pull artifact from 'oci://ghcr.io/acme/app': GET \
         https://ghcr.io/v2/acme/app/manifests/latest: MANIFEST_UNKNOWN: manifest unknown",
        "",
    ] {
        assert_eq!(cause(message), None, "{message}");
    }
}

#[test]
fn only_the_start_of_a_message_is_read_and_hosts_are_bounded() {
    let far = format!(
        "{} Get \"https://late.example.com/\": i/o timeout",
        "é".repeat(SCANNED)
    );
    assert_eq!(cause(&far), None);
    let long = format!(
        "Get \"https://{}.example.com/\": i/o timeout",
        "a".repeat(300)
    );
    assert_eq!(cause(&long), None, "a host longer than DNS allows");
    assert_eq!(
        cause("Get \"https://[2001:db8::1]:8443/v2/\": i/o timeout"),
        is(ErrorClass::Timeout, "[2001:db8::1]:8443")
    );
    assert_eq!(cause("Get \"https://[::1]:8443/v2/\": i/o timeout"), None);
}

#[test]
fn every_rule_has_markers_in_lowercase() {
    for rule in RULES {
        assert!(!rule.markers.is_empty(), "{}", rule.class);
        for m in rule.markers {
            assert_eq!(*m, m.to_ascii_lowercase(), "{}", rule.class);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any text: nothing panics, and an endpoint found is a host's characters only, bounded.
    #[test]
    fn any_message_gives_a_bounded_host_or_none(
        parts in proptest::collection::vec(prop_oneof![
            Just("https://".to_string()),
            Just("lookup ".to_string()),
            Just("dial tcp ".to_string()),
            Just("->".to_string()),
            Just(": i/o timeout".to_string()),
            Just("status code 503".to_string()),
            Just("[".to_string()),
            Just("]:".to_string()),
            "[a-z0-9.:@/\\-]{0,12}",
            any::<String>(),
        ], 0..12)
    ) {
        let message: String = parts.concat();
        if let Some(s) = shared_cause(&message) {
            prop_assert!(!s.endpoint.is_empty());
            prop_assert!(s.endpoint.len() <= HOST + 8);
            prop_assert!(s
                .endpoint
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_:[]".contains(c)));
            prop_assert!(!own(&s.endpoint));
        }
    }
}
