//! A real `nats-server` with JetStream for the tests that need one, on a port of its own choice
//! on loopback, its store in a temporary directory; killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct NatsServer {
    child: Child,
    pub url: String,
    _store: tempfile::TempDir,
}

/// Where the server is: on PATH, or where Debian's package puts it.
fn program() -> Option<std::path::PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("nats-server"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let debian = std::path::PathBuf::from("/usr/sbin/nats-server");
        debian.is_file().then_some(debian)
    })
}

/// Starts nats-server with `args` and waits until it says it is ready: the child, and where it
/// listens for clients. What it says after is read, so that it never blocks, and dropped —
/// or shown on stderr when `FLUXFLEET_TEST_NATS_LOG` is set.
fn ready(program: &std::path::Path, args: &[String]) -> (Child, Option<String>) {
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nats-server starts");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let mut address = None;
    let mut said = Vec::new();
    let mut is_ready = false;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(at) = line.split("Listening for client connections on ").nth(1) {
            address = Some(at.trim().to_string());
        }
        if line.contains("Server is ready") {
            is_ready = true;
            break;
        }
        said.push(line);
    }
    assert!(
        is_ready,
        "nats-server {args:?} stopped:\n{}",
        said.join("\n")
    );
    // The rest is read and dropped, or shown when asked (debugging a test).
    let shown = std::env::var_os("FLUXFLEET_TEST_NATS_LOG").is_some();
    let tag = args
        .iter()
        .skip_while(|a| *a != "--server_name")
        .nth(1)
        .cloned()
        .unwrap_or_else(|| "nats".into());
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if shown {
                eprintln!("{tag}: {line}");
            }
        }
    });
    (child, address)
}

impl NatsServer {
    /// Starts one; fails the test, saying how to install it, when there is none.
    pub fn start() -> NatsServer {
        NatsServer::start_with(&[])
    }

    /// Starts one with more arguments (`--user`, `--pass` …).
    pub fn start_with(extra: &[&str]) -> NatsServer {
        let Some(program) = program() else {
            panic!(
                "this test needs nats-server (2.9 or later) with JetStream, and none is installed: \
                 run `.ci/test` (it installs Debian's package nats-server with apt), or install \
                 it yourself (`apt-get install nats-server`, `brew install nats-server`, or \
                 https://github.com/nats-io/nats-server/releases)"
            );
        };
        let store = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = ["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"]
            .map(String::from)
            .into();
        args.push(store.path().display().to_string());
        args.extend(extra.iter().map(|a| a.to_string()));
        let (child, address) = ready(&program, &args);
        let address = address.expect("nats-server says where it listens");
        NatsServer {
            child,
            url: format!("nats://{address}"),
            _store: store,
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JetStream cluster of nats-servers on loopback, each with its own port and store; a node can
/// be stopped (killed) and started again on the same port and store. Stopped when dropped.
pub struct NatsCluster {
    nodes: Vec<Node>,
    /// Every node's client URL, comma-separated, as `--nats` takes them.
    pub url: String,
}

struct Node {
    child: Option<Child>,
    args: Vec<String>,
    _store: tempfile::TempDir,
}

/// `n` ports free on loopback now (held together while they are chosen, so they differ).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    held.iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

impl Node {
    fn start(&mut self) {
        let Some(program) = program() else {
            panic!("this test needs nats-server (2.9 or later): run `.ci/test`, which installs it");
        };
        let (child, _) = ready(&program, &self.args);
        self.child = Some(child);
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl NatsCluster {
    /// Starts `n` nodes routed to each other, and returns once the cluster has a JetStream
    /// leader (streams can be made).
    pub async fn start(n: usize) -> NatsCluster {
        let cluster = NatsCluster::start_some(n, n);
        cluster.until_jetstream().await;
        cluster
    }

    /// A cluster of `n` nodes of which only the first `up` are started (the others with
    /// [`NatsCluster::restart`]): with fewer than a majority up, no JetStream leader can be
    /// elected — a cluster still electing its leader, for as long as the test wants.
    pub fn start_some(n: usize, up: usize) -> NatsCluster {
        let ports = free_ports(2 * n);
        let (clients, routes) = ports.split_at(n);
        let all_routes = routes
            .iter()
            .map(|p| format!("nats://127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut nodes = Vec::new();
        for i in 0..n {
            let store = tempfile::tempdir().unwrap();
            let args = vec![
                "-js".to_string(),
                "-a".into(),
                "127.0.0.1".into(),
                "-p".into(),
                clients[i].to_string(),
                "-sd".into(),
                store.path().display().to_string(),
                "--server_name".into(),
                format!("n{}", i + 1),
                "--cluster_name".into(),
                "fluxfleet".into(),
                "--cluster".into(),
                format!("nats://127.0.0.1:{}", routes[i]),
                "--routes".into(),
                all_routes.clone(),
            ];
            let mut node = Node {
                child: None,
                args,
                _store: store,
            };
            if i < up {
                node.start();
            }
            nodes.push(node);
        }
        let url = clients
            .iter()
            .map(|p| format!("nats://127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        NatsCluster { nodes, url }
    }

    /// Waits (bounded) until JetStream answers: a meta leader has been elected. (Not the
    /// account query: servers before 2.10 answer it in a shape the client cannot read.)
    pub async fn until_jetstream(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let first = self.url.split(',').next().unwrap().to_string();
            let why = match async_nats::connect(first).await {
                // A stream made and removed: only a cluster with a JetStream leader does it.
                Ok(client) => {
                    let js = async_nats::jetstream::new(client);
                    let probe = async_nats::jetstream::stream::Config {
                        name: "probe".into(),
                        subjects: vec!["probe.>".into()],
                        ..Default::default()
                    };
                    match js.get_or_create_stream(probe).await {
                        Ok(_) => {
                            let _ = js.delete_stream("probe").await;
                            return;
                        }
                        Err(e) => e.to_string(),
                    }
                }
                Err(e) => e.to_string(),
            };
            assert!(
                std::time::Instant::now() < deadline,
                "no JetStream leader: {why}"
            );
            // Polling interval, not synchronisation: the query above decides.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// Kills node `i` (0-based) without a word, as a machine lost.
    pub fn stop(&mut self, i: usize) {
        self.nodes[i].stop();
    }

    /// Starts node `i` again, on its port and with its store.
    pub fn restart(&mut self, i: usize) {
        self.nodes[i].start();
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.stop();
        }
    }
}

/// The state bucket, the collectors' bucket and the history of bucket "fleet".
pub const STREAMS: [&str; 3] = ["KV_fleet", "KV_fleet-collectors", "fleet-history"];

/// Waits (bounded) until every store has all its replicas current: a node that came back has
/// caught up.
pub async fn until_current(options: &fluxfleet::bus::Options) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let client = fluxfleet::bus::connect(options, "test").await.unwrap();
    let js = async_nats::jetstream::new(client);
    loop {
        let mut behind = Vec::new();
        for stream in STREAMS {
            let info = match js.get_stream(stream).await {
                Ok(s) => s.get_info().await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            let current = info.as_ref().is_ok_and(|i| {
                i.cluster.as_ref().is_some_and(|c| {
                    c.leader.is_some()
                        && c.replicas.len() == 2
                        && c.replicas.iter().all(|p| p.current)
                })
            });
            if !current {
                behind.push(stream);
            }
        }
        if behind.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not replicated: {behind:?}"
        );
        // Polling interval, not synchronisation: the stream information decides.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
