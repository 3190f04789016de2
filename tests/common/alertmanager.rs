//! A real Alertmanager (Debian's `prometheus-alertmanager`) for the tests that need one, on a
//! free port on loopback, its storage in a temporary directory, clustering off; killed when
//! dropped.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Alertmanager {
    child: Child,
    pub url: String,
    port: u16,
    _dir: tempfile::TempDir,
}

/// Where it is: on PATH (either name), or where Debian's package puts it.
fn program() -> Option<std::path::PathBuf> {
    let names = ["prometheus-alertmanager", "alertmanager"];
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .flat_map(|d| names.map(|n| d.join(n)))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let debian = std::path::PathBuf::from("/usr/bin/prometheus-alertmanager");
        debian.is_file().then_some(debian)
    })
}

/// Routes every alert to a receiver that sends nothing: the tests read the API.
const CONFIG: &str = "route:\n  receiver: nowhere\n  group_wait: 1s\n  group_interval: 1s\n\
receivers:\n  - name: nowhere\n";

impl Alertmanager {
    /// Starts one and waits until it is ready; fails the test, saying how to install it, when
    /// there is none.
    pub fn start() -> Alertmanager {
        let Some(program) = program() else {
            panic!(
                "this test needs Alertmanager (0.25 or later), and none is installed: run \
                 `.ci/test` (it installs Debian's package prometheus-alertmanager with apt), or \
                 install it yourself (`apt-get install prometheus-alertmanager`, `brew install \
                 alertmanager`, or https://github.com/prometheus/alertmanager/releases)"
            );
        };
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("alertmanager.yml");
        std::fs::write(&config, CONFIG).unwrap();
        // A free port: Alertmanager does not say which one it took when given 0.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(program)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("alertmanager starts");
        let am = Alertmanager {
            child,
            url: format!("http://127.0.0.1:{port}"),
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while am.get("/-/ready").is_none_or(|(status, _)| status != 200) {
            assert!(Instant::now() < deadline, "alertmanager did not get ready");
            // Polling interval, not synchronisation: the readiness check decides.
            std::thread::sleep(Duration::from_millis(50));
        }
        am
    }

    /// A GET's status and body (HTTP/1.0: no chunks to undo).
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .ok()?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok()?;
        let (head, body) = answer.split_once("\r\n\r\n")?;
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        Some((status, body.to_string()))
    }

    /// The alerts it holds active now (resolved ones it no longer lists).
    pub fn alerts(&self) -> Vec<serde_json::Value> {
        let (status, body) = self.get("/api/v2/alerts").expect("alertmanager answers");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `fluxfleet` as a script beside Alertmanager runs it, blocking, with `home` for its data
/// (the journal, the alert loop's state) — never the developer's own config, bus or kubeconfig.
pub fn fluxfleet(home: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_fluxfleet"));
    command
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env("HOME", home)
        .env_remove("KUBECONFIG")
        .env_remove("FLUXFLEET_NATS")
        .stdin(std::process::Stdio::null());
    command
}
