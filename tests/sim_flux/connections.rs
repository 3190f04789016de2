//! Reaching the simulated clusters: a workload cluster through its Cluster API kubeconfig Secret,
//! and one HTTP/2 connection per cluster carrying all its requests.

use super::*;

#[tokio::test]
async fn a_workload_cluster_is_reachable_through_its_management_secret() {
    let sim = start().await;
    let mgmt = client(&sim.handle.files.management, fluxfleet_sim::MANAGEMENT).await;
    let capi = resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters");
    let clusters = api(&mgmt, &capi, None)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(clusters.items.len(), sim.handle.cluster_names().len());
    let first = &clusters.items[0];
    let (ns, name) = (
        first.metadata.namespace.clone().unwrap(),
        first.metadata.name.clone().unwrap(),
    );
    assert_eq!(
        first.metadata.labels.as_ref().unwrap()["cluster.x-k8s.io/cluster-name"],
        name
    );
    // v1beta1 is served too, converted.
    let old = api(
        &mgmt,
        &resource("cluster.x-k8s.io", "v1beta1", "Cluster", "clusters"),
        Some(&ns),
    )
    .get(&name)
    .await
    .unwrap();
    assert_eq!(old.data["status"]["phase"], "Provisioned");
    assert_eq!(old.data["status"]["controlPlaneReady"], true);

    let secret_api: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(mgmt.clone(), &ns);
    let list = secret_api
        .list(&ListParams::default().labels(&format!("cluster.x-k8s.io/cluster-name={name}")))
        .await
        .unwrap();
    let secret = list
        .items
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some(&format!("{name}-kubeconfig")))
        .expect("the kubeconfig secret");
    assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    let bytes = &secret.data.as_ref().unwrap()["value"].0;
    let kc = kube::config::Kubeconfig::from_yaml(std::str::from_utf8(bytes).unwrap()).unwrap();
    let workload = client_from(kc, &name).await;
    let ks = api(&workload, &kustomizations(), Some("flux-system"))
        .get("flux-system")
        .await
        .unwrap();
    assert_eq!(ks.data["spec"]["path"], format!("./clusters/{ns}/{name}"));
    // The viewer may not read secrets.
    let viewer_kc = kube::config::Kubeconfig::read_from(&sim.handle.files.viewer).unwrap();
    let viewer = client_from(viewer_kc, &name).await;
    let err = kube::Api::<k8s_openapi::api::core::v1::Secret>::all(viewer)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(403));
    sim.handle.shutdown().await;
}

#[tokio::test]
async fn http2_multiplexes_a_clusters_requests_over_one_connection() {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::rt::TokioIo;
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};

    let sim = start().await;
    let name = sim.handle.cluster_names()[0].clone();
    let kc = kube::config::Kubeconfig::read_from(&sim.handle.files.fleet).unwrap();
    let entry = kc
        .clusters
        .iter()
        .find(|c| c.name == name)
        .unwrap()
        .cluster
        .clone()
        .unwrap();
    let ca_pem = base64::engine::general_purpose::STANDARD
        .decode(entry.certificate_authority_data.unwrap())
        .unwrap();
    let token = kc
        .auth_infos
        .iter()
        .find(|a| a.name == format!("{name}-admin"))
        .unwrap()
        .auth_info
        .clone()
        .unwrap()
        .token
        .unwrap();
    let token = secrecy::ExposeSecret::expose_secret(&token).to_string();

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(&ca_pem).unwrap())
        .unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let tcp = tokio::net::TcpStream::connect(sim.handle.addr)
        .await
        .unwrap();
    let stream = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls))
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(
        stream.get_ref().1.alpn_protocol(),
        Some(&b"h2"[..]),
        "the server picks h2"
    );
    let (sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);

    let base = format!(
        "https://127.0.0.1:{}/clusters/{name}",
        sim.handle.addr.port()
    );
    let request = |path: &str| {
        http::Request::get(format!("{base}{path}"))
            .header("authorization", format!("Bearer {token}"))
            .body(Empty::<bytes::Bytes>::new())
            .unwrap()
    };
    // Seven watches (one per kind) and a list, all at once, on one connection.
    let mut watches = Vec::new();
    for (group, version, _, plural) in FLUX_KINDS {
        let mut s = sender.clone();
        let resp = s
            .send_request(request(&format!(
                "/apis/{group}/{version}/{plural}?watch=1&timeoutSeconds=30"
            )))
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        watches.push(resp);
    }
    let mut s = sender.clone();
    let list = s
        .send_request(request(
            "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations",
        ))
        .await
        .unwrap();
    let body = list.into_body().collect().await.unwrap().to_bytes();
    assert!(
        serde_json::from_slice::<Value>(&body).unwrap()["items"]
            .as_array()
            .is_some()
    );

    let stats = sim.handle.stats();
    assert_eq!(
        stats["clusters"][&name]["connections"], 1,
        "one connection for the cluster: {stats}"
    );
    assert_eq!(stats["clusters"][&name]["openWatches"], 7);
    assert_eq!(stats["h2ConnectionsOpen"], 1);
    assert_eq!(stats["h2OpenStreams"], 7);
    drop(watches);
    sim.handle.shutdown().await;
}
