//! A real `nats-server` with JetStream for the tests that need one, on a port of its own choice
//! on loopback, its store in a temporary directory; killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

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
        let mut child = Command::new(program)
            .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
            .arg(store.path())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nats-server starts");
        // It says where it listens once it is ready.
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut address = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(at) = line.split("Listening for client connections on ").nth(1) {
                address = Some(at.trim().to_string());
            }
            if line.contains("Server is ready") {
                break;
            }
        }
        let address = address.expect("nats-server says where it listens");
        // Keep reading what it says, so that it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
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
