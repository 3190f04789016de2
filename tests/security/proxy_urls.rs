//! The `proxy-url` of a kubeconfig, as kubectl users write it: SOCKS5 and HTTP CONNECT proxies
//! get what the URL says (credentials included), an `https://` proxy nothing in clear text.

use super::{fluxfleet, load, one_cluster, state};

/// A proxy that records what reaches it: the SOCKS5 request or the CONNECT head, then relays.
mod proxies {
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    pub type Seen = Arc<Mutex<Vec<String>>>;

    /// Listens on a free port and hands every connection, with the log, to `handle`.
    async fn serve<F, Fut>(handle: F) -> (String, Seen)
    where
        F: Fn(TcpStream, Seen) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Option<()>> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen: Seen = Arc::default();
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((c, _)) = listener.accept().await {
                tokio::spawn(handle(c, log.clone()));
            }
        });
        (addr, seen)
    }

    async fn string(c: &mut TcpStream) -> Option<String> {
        let mut n = [0u8; 1];
        c.read_exact(&mut n).await.ok()?;
        let mut v = vec![0u8; n[0] as usize];
        c.read_exact(&mut v).await.ok()?;
        Some(String::from_utf8_lossy(&v).into_owned())
    }

    /// SOCKS5 with user/password authentication (RFC 1928, 1929).
    pub async fn socks5() -> (String, Seen) {
        serve(|mut c, log| async move {
            let mut head = [0u8; 2];
            c.read_exact(&mut head).await.ok()?;
            let mut methods = vec![0u8; head[1] as usize];
            c.read_exact(&mut methods).await.ok()?;
            if !methods.contains(&2) {
                log.lock().unwrap().push("no user/password offered".into());
                c.write_all(&[5, 0xff]).await.ok()?;
                return None;
            }
            c.write_all(&[5, 2]).await.ok()?;
            let mut ver = [0u8; 1];
            c.read_exact(&mut ver).await.ok()?;
            let user = string(&mut c).await?;
            let pass = string(&mut c).await?;
            c.write_all(&[1, 0]).await.ok()?;
            let mut req = [0u8; 4];
            c.read_exact(&mut req).await.ok()?;
            let host = match req[3] {
                3 => string(&mut c).await?,
                1 => {
                    let mut ip = [0u8; 4];
                    c.read_exact(&mut ip).await.ok()?;
                    format!("ip:{}", std::net::Ipv4Addr::from(ip))
                }
                _ => return None,
            };
            let mut port = [0u8; 2];
            c.read_exact(&mut port).await.ok()?;
            let port = u16::from_be_bytes(port);
            log.lock()
                .unwrap()
                .push(format!("{user}:{pass}@{host}:{port}"));
            let target = format!("{}:{port}", host.trim_start_matches("ip:"));
            let mut up = TcpStream::connect(target).await.ok()?;
            c.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await.ok()?;
            let _ = tokio::io::copy_bidirectional(&mut c, &mut up).await;
            Some(())
        })
        .await
    }

    /// HTTP CONNECT, recording the Proxy-Authorization header.
    pub async fn connect() -> (String, Seen) {
        serve(|mut c, log| async move {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                c.read_exact(&mut byte).await.ok()?;
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let auth = head
                .lines()
                .find_map(|l| {
                    l.strip_prefix("proxy-authorization: ")
                        .or_else(|| l.strip_prefix("Proxy-Authorization: "))
                })
                .unwrap_or("none")
                .to_string();
            log.lock().unwrap().push(auth);
            let target = head.split_whitespace().nth(1)?.to_string();
            let mut up = TcpStream::connect(target).await.ok()?;
            c.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .ok()?;
            let _ = tokio::io::copy_bidirectional(&mut c, &mut up).await;
            Some(())
        })
        .await
    }

    /// Counts connections and never answers: whatever a client sends it in clear text is seen.
    pub async fn silent() -> (String, Seen) {
        serve(|mut c, log| async move {
            let mut buf = vec![0u8; 4096];
            let n = c.read(&mut buf).await.unwrap_or(0);
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            Some(())
        })
        .await
    }
}

/// Proxies as kubectl users write them: `socks5h://` is SOCKS5 with the name resolved by the
/// proxy, credentials in the URL reach the proxy, an `https://` proxy is refused rather than
/// spoken to in clear text; an `http://` server with a token is a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_get_what_the_url_says_and_nothing_in_clear_text() {
    use fluxfleet::config::Config;
    use fluxfleet::fleet::Phase;
    use fluxfleet::session::Session;
    use std::time::Duration;

    let (sim, server, ca, token) = one_cluster().await;
    // By name, so that a SOCKS5 proxy that resolves names is asked for the name.
    let server = server.replace("127.0.0.1", "localhost");
    let (socks, socks_seen) = proxies::socks5().await;
    let (connect, connect_seen) = proxies::connect().await;
    let (silent, silent_seen) = proxies::silent().await;
    let proxied = [
        ("socks", format!("socks5h://bob:p%40ss@{socks}")),
        ("connect", format!("http://alice:s3cret@{connect}")),
        ("tls-proxy", format!("https://carol:hunter2@{silent}")),
    ];
    let mut kubeconfig = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, proxy) in &proxied {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n    proxy-url: {proxy}\n"
        ));
    }
    kubeconfig.push_str(&format!(
        "users:\n- name: u\n  user:\n    token: {token}\ncontexts:\n"
    ));
    for (name, _) in &proxied {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  context: {{cluster: {name}, user: u}}\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("proxied.kubeconfig");
    std::fs::write(&path, &kubeconfig).unwrap();
    let config = Config::defaults();
    let inv = load(path, &config);
    assert_eq!(inv.problems, []);
    let mut live = Session::kube(&inv, &config.engine);
    live.settle(Duration::from_secs(20)).await;
    let state = |name: &str| state(&live, name);
    assert_eq!(state("socks").0, Phase::Live, "{:?}", state("socks"));
    let seen = socks_seen.lock().unwrap().clone();
    assert!(
        !seen.is_empty() && seen.iter().all(|s| s.starts_with("bob:p@ss@localhost:")),
        "{seen:?}"
    );
    assert_eq!(state("connect").0, Phase::Live, "{:?}", state("connect"));
    let seen = connect_seen.lock().unwrap().clone();
    use base64::Engine as _;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("alice:s3cret")
    );
    assert!(
        !seen.is_empty() && seen.iter().all(|s| *s == basic),
        "{seen:?}"
    );
    let (phase, error) = state("tls-proxy");
    assert_eq!(phase, Phase::Invalid, "{error}");
    assert!(error.contains("https:// proxy is not supported"), "{error}");
    assert!(!error.contains("hunter2"));
    assert_eq!(
        *silent_seen.lock().unwrap(),
        Vec::<String>::new(),
        "nothing sent to it"
    );
    live.shutdown().await;

    // An http:// server with a token: used, with a warning on stderr (not an inventory problem).
    let plain = dir.path().join("plain.kubeconfig");
    std::fs::write(
        &plain,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:1\"}}\n\
                 users:\n- name: u\n  user: {{token: {token}}}\ncontexts:\n- name: plain\n  context: {{cluster: c, user: u}}\n"),
    )
    .unwrap();
    let out = fluxfleet(
        &["inventory", "--kubeconfig", &plain.display().to_string()],
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("is http://: its credentials are sent in clear text"),
        "{stderr}"
    );
    assert!(!stderr.contains(&token));
    sim.handle.shutdown().await;
}
