use super::*;

/// A dead path to a server is found by the kernel in 40 s: the sockets the dialer makes
/// carry the keep-alive and the user timeout, not the system's defaults (2 h, then 9
/// probes 75 s apart).
#[tokio::test]
async fn the_dialer_finds_a_dead_path_through_tcp_keepalive() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri: Uri = format!("http://{}", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    let tcp = tower::Service::call(&mut dialer(Duration::from_secs(5)), uri)
        .await
        .unwrap()
        .into_inner();
    let socket = socket2::SockRef::from(&tcp);
    assert!(socket.keepalive().unwrap());
    assert_eq!(
        socket.tcp_keepalive_time().unwrap(),
        Duration::from_secs(30)
    );
    assert_eq!(
        socket.tcp_keepalive_interval().unwrap(),
        Duration::from_secs(5)
    );
    assert_eq!(socket.tcp_keepalive_retries().unwrap(), 2);
    #[cfg(target_os = "linux")]
    assert_eq!(
        socket.tcp_user_timeout().unwrap(),
        Some(Duration::from_secs(40))
    );
}

/// Every request says it is fluxfleet's, and one that already says who sent it keeps that.
#[test]
fn requests_say_they_are_fluxfleets() {
    let request = |agent: Option<&'static str>| {
        let mut r = http::Request::get("/version");
        if let Some(agent) = agent {
            r = r.header(http::header::USER_AGENT, agent);
        }
        with_user_agent(r.body(kube::client::Body::empty()).unwrap())
    };
    let agent = |r: &http::Request<kube::client::Body>| {
        r.headers()[http::header::USER_AGENT]
            .to_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        agent(&request(None)),
        format!("fluxfleet/{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(agent(&request(Some("a-plugin/1"))), "a-plugin/1");
}

#[test]
fn aes_128_gcm_comes_first_and_no_suite_is_lost() {
    let ours: Vec<_> = crypto_provider()
        .cipher_suites
        .iter()
        .map(|s| s.suite())
        .collect();
    assert_eq!(ours[0], rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    let mut theirs: Vec<_> = rustls::crypto::ring::default_provider()
        .cipher_suites
        .iter()
        .map(|s| s.suite())
        .collect();
    let mut sorted = ours.clone();
    sorted.sort_by_key(|s| u16::from(*s));
    theirs.sort_by_key(|s| u16::from(*s));
    assert_eq!(sorted, theirs);
    // TLS 1.3 suites before TLS 1.2 ones.
    let first_12 = ours
        .iter()
        .position(|s| format!("{s:?}").starts_with("TLS_ECDHE"))
        .unwrap();
    assert!(
        ours[..first_12]
            .iter()
            .all(|s| format!("{s:?}").starts_with("TLS13"))
    );
}

/// A cluster's connection pool keeps its dialer: a proxy's, rare, is boxed.
#[test]
fn a_dialer_is_two_words() {
    assert_eq!(std::mem::size_of::<Dial>(), 16);
}
