//! Kubeconfig forms kubectl accepts, each connecting to the simulator or failing with the meaning
//! kubectl gives it, shown as the right state: a credential problem reads as one, never as a
//! network failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use fluxfleet::fleet::Phase;

/// A one-cluster simulator and that cluster's name, server URL, CA data and admin token.
async fn one_cluster() -> (common::Sim, String, String, String, String) {
    let sim = common::start_with(|c| {
        c.clusters = 1;
        c.workspaces = 1;
    })
    .await;
    let name = sim.handle.cluster_names()[0].clone();
    let (server, ca, token) = common::admin(&sim, &name);
    (sim, name, server, ca, token)
}

/// A kubeconfig with one context per form, each with its own cluster and user section.
fn kubeconfig<'a>(
    server: &str,
    forms: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
) -> String {
    let (mut clusters, mut users, mut contexts) = (String::new(), String::new(), String::new());
    for (context, cluster, user) in forms {
        clusters.push_str(&format!(
            "- name: {context}\n  cluster:\n    server: {server}\n    {cluster}\n"
        ));
        users.push_str(&format!("- name: {context}\n  user:\n    {user}\n"));
        contexts.push_str(&format!(
            "- name: {context}\n  context: {{cluster: {context}, user: {context}}}\n"
        ));
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n{users}contexts:\n{contexts}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_forms_connect_as_kubectl_connects_and_a_bad_one_is_a_credential_problem() {
    let (sim, _, server, ca, token) = one_cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, text: String| std::fs::write(dir.path().join(file), text).unwrap();
    // What `echo $TOKEN > file` writes, what an editor leaves, and the bare token.
    write("newline.token", format!("{token}\n"));
    write("spaces.token", format!("  {token} \r\n"));
    write("bare.token", token.clone());
    write("two-lines.token", format!("{token}\nsecond\n"));
    write("empty.token", "\n".into());
    // (context, user section, the state kubectl's meaning gives it)
    let forms: [(&str, String, Phase); 7] = [
        ("token", format!("token: {token}"), Phase::Live),
        (
            "file-newline",
            "tokenFile: newline.token".into(),
            Phase::Live,
        ),
        ("file-spaces", "tokenFile: spaces.token".into(), Phase::Live),
        ("file-bare", "tokenFile: bare.token".into(), Phase::Live),
        (
            "file-two-lines",
            "tokenFile: two-lines.token".into(),
            Phase::Invalid,
        ),
        (
            "file-empty",
            "tokenFile: empty.token".into(),
            Phase::Invalid,
        ),
        (
            "file-missing",
            "tokenFile: missing.token".into(),
            Phase::Invalid,
        ),
    ];
    let ca_data = format!("certificate-authority-data: {ca}");
    let kubeconfig = kubeconfig(
        &server,
        forms
            .iter()
            .map(|(context, user, _)| (*context, ca_data.as_str(), user.as_str())),
    );
    // Relative token files are read from the kubeconfig's own directory.
    let path = dir.path().join("forms.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let live = common::settled(&path).await;
    for (context, _, phase) in &forms {
        let c = live.index.cluster_named(context).unwrap();
        let error = c.connection.error.as_deref().unwrap_or_default();
        assert_eq!(c.connection.phase, *phase, "{context}: {error}");
        if *phase == Phase::Invalid {
            assert!(error.starts_with("tokenFile "), "{context}: {error}");
            assert!(
                !error.contains(&token),
                "{context}: the token is never shown"
            );
        }
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/keys/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// `pem`'s certificate re-encoded as Go's crypto/x509 refuses it: `outer` rewrites the DER of
/// the outer SEQUENCE (a 0x82 two-byte length).
fn loosened(pem: &str, outer: impl Fn(&[u8]) -> Vec<u8>) -> String {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    assert_eq!(der[..2], [0x30, 0x82]);
    let encoded = base64::engine::general_purpose::STANDARD.encode(outer(&der));
    format!("-----BEGIN CERTIFICATE-----\n{encoded}\n-----END CERTIFICATE-----\n")
}

fn b64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_and_tls_forms_connect_as_kubectl_connects() {
    use fluxfleet_sim::{CertVersion, Role};
    let (sim, name, server, ca, token) = one_cluster().await;
    let name = &name;
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, text: &str| std::fs::write(dir.path().join(file), text).unwrap();
    let issue = |key: &str, version| {
        sim.handle
            .client_certificate(name, Role::Admin, &fixture(key), version)
            .unwrap()
    };
    let ec_v3 = issue("ec.pkcs8.pem", CertVersion::V3);
    let rsa_v3 = issue("rsa.pkcs8.pem", CertVersion::V3);
    let ec_v1 = issue("ec.pkcs8.pem", CertVersion::V1);
    let rsa_v1 = issue("rsa.pkcs8.pem", CertVersion::V1);
    // A certificate the cluster never issued: TLS passes, nobody is authenticated.
    let stranger = {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["stranger".to_string()]).unwrap();
        (params.self_signed(&key).unwrap().pem(), key.serialize_pem())
    };
    write("ca.crt", sim.handle.ca_pem());
    write("ec.crt", &ec_v3);
    write("rsa.crt", &rsa_v3);
    write("rsa-v1.crt", &rsa_v1);
    for key in [
        "ec.pkcs8.pem",
        "ec.params-and-sec1.pem",
        "rsa.pkcs1.pem",
        "rsa.pkcs8.pem",
    ] {
        write(key, &fixture(key));
    }
    let ca_data = format!("certificate-authority-data: {ca}");
    // (context, cluster section beyond the server, user section, the state kubectl's meaning gives it)
    let forms: Vec<(&str, String, String, Phase)> = vec![
        // TLS: how the server is trusted and named.
        (
            "ca-file",
            "certificate-authority: ca.crt".into(),
            format!("token: {token}"),
            Phase::Live,
        ),
        (
            "ca-file-missing",
            "certificate-authority: missing.crt".into(),
            format!("token: {token}"),
            Phase::Invalid,
        ),
        (
            "insecure",
            "insecure-skip-tls-verify: true".into(),
            format!("token: {token}"),
            Phase::Live,
        ),
        (
            "no-ca",
            String::new(),
            format!("token: {token}"),
            Phase::TlsError,
        ),
        (
            "server-name",
            format!("{ca_data}\n    tls-server-name: localhost"),
            format!("token: {token}"),
            Phase::Live,
        ),
        (
            "server-name-wrong",
            format!("{ca_data}\n    tls-server-name: wrong.example"),
            format!("token: {token}"),
            Phase::TlsError,
        ),
        // Client certificates: files (relative) and data, RSA and EC, PKCS#1, SEC1, PKCS#8.
        (
            "ec-pkcs8-files",
            ca_data.clone(),
            "client-certificate: ec.crt\n    client-key: ec.pkcs8.pem".into(),
            Phase::Live,
        ),
        (
            "ec-sec1-data",
            ca_data.clone(),
            format!(
                "client-certificate-data: {}\n    client-key-data: {}",
                b64(&ec_v3),
                b64(&fixture("ec.sec1.pem"))
            ),
            Phase::Live,
        ),
        (
            "ec-params-and-sec1",
            ca_data.clone(),
            "client-certificate: ec.crt\n    client-key: ec.params-and-sec1.pem".into(),
            Phase::Live,
        ),
        (
            "rsa-pkcs1-files",
            ca_data.clone(),
            "client-certificate: rsa.crt\n    client-key: rsa.pkcs1.pem".into(),
            Phase::Live,
        ),
        (
            "rsa-pkcs8-data",
            ca_data.clone(),
            format!(
                "client-certificate-data: {}\n    client-key-data: {}",
                b64(&rsa_v3),
                b64(&fixture("rsa.pkcs8.pem"))
            ),
            Phase::Live,
        ),
        // X.509 v1: no extensions (webpki refuses these; kubectl does not).
        (
            "ec-v1",
            ca_data.clone(),
            format!(
                "client-certificate-data: {}\n    client-key-data: {}",
                b64(&ec_v1),
                b64(&fixture("ec.sec1.pem"))
            ),
            Phase::Live,
        ),
        (
            "rsa-v1",
            ca_data.clone(),
            "client-certificate: rsa-v1.crt\n    client-key: rsa.pkcs1.pem".into(),
            Phase::Live,
        ),
        // DER that Go's x509 calls malformed: a length not in its shortest form, and a byte
        // after the certificate.
        (
            "der-long-length",
            ca_data.clone(),
            format!(
                "client-certificate-data: {}\n    client-key-data: {}",
                b64(&loosened(&ec_v3, |der| [&[0x30, 0x83, 0][..], &der[2..]].concat())),
                b64(&fixture("ec.sec1.pem"))
            ),
            Phase::Invalid,
        ),
        (
            "der-trailing",
            ca_data.clone(),
            format!(
                "client-certificate-data: {}\n    client-key-data: {}",
                b64(&loosened(&ec_v3, |der| [der, &[0][..]].concat())),
                b64(&fixture("ec.sec1.pem"))
            ),
            Phase::Invalid,
        ),
        // Credential problems read as credential problems.
        (
            "key-of-another",
            ca_data.clone(),
            "client-certificate: ec.crt\n    client-key: rsa.pkcs8.pem".into(),
            Phase::Invalid,
        ),
        (
            "no-key",
            ca_data.clone(),
            "client-certificate: ec.crt".into(),
            Phase::Invalid,
        ),
        (
            "key-file-missing",
            ca_data.clone(),
            "client-certificate: ec.crt\n    client-key: missing.pem".into(),
            Phase::Invalid,
        ),
        (
            "stranger",
            ca_data.clone(),
            format!(
                "client-certificate-data: {}\n    client-key-data: {}",
                b64(&stranger.0),
                b64(&stranger.1)
            ),
            Phase::Unauthorized,
        ),
        // auth-provider oidc: the id-token is the bearer token.
        (
            "oidc",
            ca_data.clone(),
            format!(
                "auth-provider:\n      name: oidc\n      config:\n        id-token: {token}\n        idp-issuer-url: https://issuer.invalid"
            ),
            Phase::Live,
        ),
    ];
    let kubeconfig = kubeconfig(
        &server,
        forms
            .iter()
            .map(|(context, cluster, user, _)| (*context, cluster.as_str(), user.as_str())),
    );
    let path = dir.path().join("forms.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let live = common::settled(&path).await;
    let mut wrong = Vec::new();
    for (context, _, _, phase) in &forms {
        let c = live.index.cluster_named(context).unwrap();
        let error = c.connection.error.as_deref().unwrap_or_default();
        if c.connection.phase != *phase {
            wrong.push(format!(
                "{context}: {:?}, expected {phase:?}: {error}",
                c.connection.phase
            ));
        }
        assert!(
            !error.contains("PRIVATE KEY") && !error.contains(&token),
            "{context}: no secret in {error}"
        );
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    for (context, why) in [
        ("der-long-length", "shortest form"),
        ("der-trailing", "bytes after the certificate"),
    ] {
        let c = live.index.cluster_named(context).unwrap();
        let error = c.connection.error.as_deref().unwrap_or_default();
        assert!(
            error.contains("client certificate: malformed DER") && error.contains(why),
            "{context}: {error}"
        );
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}
