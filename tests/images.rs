//! Deployed as a team runs it: the image `config/deploy/image.sh` builds from the binary under
//! test, run by podman as the manifests run it — a read-only root, uid 65532, no `HOME`, the
//! kubeconfigs and the certificate mounted read-only, `/tmp` and the manifest's own volumes the
//! only writable places, with the manifests' own args and environment. A collector publishes the
//! simulated fleet to a real nats-server, answers its probes and metrics, and on `podman stop`
//! (SIGTERM) withdraws its announcement and ends well within the grace period while a second
//! collector container takes its clusters over, nothing lost. The team's MCP server serves
//! HTTPS, takes a real OpenID provider's tokens, acts on a cluster as the person whose token it
//! is, and refuses a request without one, saying where to get it.
//!
//! These need buildah, podman and runc (`.ci/test` installs Debian's packages); without them
//! they fail saying so.

use crate::common;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::nats::NatsServer;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const IMAGE: &str = "localhost/fluxfleet:tests";

/// Far more than any deadline below: a container not there by then never would be.
const NEVER: Duration = Duration::from_secs(120);

fn need(tool: &str) {
    let found = Command::new(tool).arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        panic!(
            "this test needs {tool}, and none is installed: run `.ci/test` (it installs Debian's \
             packages buildah, podman and runc with apt), or `apt-get install buildah podman runc`"
        );
    }
}

/// The image, built once per run from the binary under test by the script users run.
async fn image() -> &'static str {
    static BUILT: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    BUILT
        .get_or_init(|| async {
            for tool in ["buildah", "podman", "runc"] {
                need(tool);
            }
            // The image this replaces, if any, is not kept beside it.
            let _ = Command::new("podman").args(["rmi", "-f", IMAGE]).output();
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/deploy/image.sh");
            let out = tokio::process::Command::new(script)
                .args(["--binary", env!("CARGO_BIN_EXE_fluxfleet"), "--tag", IMAGE])
                .output()
                .await
                .unwrap();
            assert!(
                out.status.success(),
                "config/deploy/image.sh: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), IMAGE);
            let config = podman(&["image", "inspect", IMAGE, "--format", "{{json .Config}}"]);
            let config: serde_json::Value = serde_json::from_str(&config).unwrap();
            assert_eq!(config["User"], "65532:65532");
            assert_eq!(config["Entrypoint"], json!(["/usr/local/bin/fluxfleet"]));
            the_containerfile_says_the_same(&config);
        })
        .await;
    IMAGE
}

/// The registry-based Containerfile makes the image the script made: its last stage's user,
/// entrypoint, command and environment are the built image's, and it copies the binary where
/// the script put it.
fn the_containerfile_says_the_same(config: &serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/deploy/Containerfile");
    let text = std::fs::read_to_string(path).unwrap();
    let last = text.rsplit("\nFROM ").next().unwrap();
    let said = |word: &str| -> Vec<&str> {
        last.lines()
            .filter_map(|l| l.strip_prefix(word).map(str::trim))
            .collect()
    };
    assert_eq!(said("USER "), [config["User"].as_str().unwrap()]);
    let entrypoint: serde_json::Value = serde_json::from_str(said("ENTRYPOINT ")[0]).unwrap();
    assert_eq!(entrypoint, config["Entrypoint"]);
    let cmd: serde_json::Value = serde_json::from_str(said("CMD ")[0]).unwrap();
    assert_eq!(cmd, config["Cmd"]);
    let env = config["Env"].as_array().unwrap();
    for e in said("ENV ") {
        assert!(
            env.iter().any(|v| v == e),
            "{e} is not in the built image's {env:?}"
        );
    }
    assert!(
        said("COPY ")
            .iter()
            .any(|c| c.ends_with(" /usr/local/bin/fluxfleet")),
        "{last}"
    );
}

/// podman's answer; fails the test on an error.
fn podman(args: &[&str]) -> String {
    let out = Command::new("podman").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "podman {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A container of the image, removed when dropped.
struct Container {
    name: String,
    /// What is mounted at `/tmp`: where it may write, read after.
    tmp: tempfile::TempDir,
    /// The other writable volumes of its manifest, by where they are mounted.
    volumes: Vec<(String, tempfile::TempDir)>,
}

/// A directory uid 65532 may write in, as an `emptyDir` or a volume with `fsGroup` is.
fn writable_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

impl Container {
    /// Runs `args` as the manifests run them, with `mounts` (host directory, where) read-only.
    fn run(name: &str, mounts: &[(&Path, &str)], args: &[String]) -> Container {
        Container::run_as(name, mounts, &Deployed::default(), args)
    }

    /// [`Container::run`], with the writable volumes and the environment of its manifest.
    fn run_as(
        name: &str,
        mounts: &[(&Path, &str)],
        deployed: &Deployed,
        args: &[String],
    ) -> Container {
        let name = format!("fluxfleet-test-{name}-{}", std::process::id());
        let _ = Command::new("podman").args(["rm", "-f", &name]).output();
        let tmp = writable_dir();
        let volumes: Vec<(String, tempfile::TempDir)> = deployed
            .writable
            .iter()
            .map(|at| (at.clone(), writable_dir()))
            .collect();
        let mut run: Vec<String> = [
            "run",
            "-d",
            "--name",
            &name,
            "--runtime",
            "runc",
            "--cgroup-manager",
            "cgroupfs",
            "--ulimit",
            "nofile=16384:16384",
            "--ulimit",
            "nproc=4096:4096",
            "--network",
            "host",
            "--read-only",
            "--read-only-tmpfs=false",
            "--unsetenv",
            "HOME",
            "--env",
            "FLUXFLEET_LOG=info",
        ]
        .map(String::from)
        .into();
        run.push("-v".into());
        run.push(format!("{}:/tmp", tmp.path().display()));
        for (at, dir) in &volumes {
            run.push("-v".into());
            run.push(format!("{}:{at}", dir.path().display()));
        }
        for (name, value) in &deployed.env {
            run.push("--env".into());
            run.push(format!("{name}={value}"));
        }
        for (from, to) in mounts {
            run.push("-v".into());
            run.push(format!("{}:{to}:ro", from.display()));
        }
        run.push(IMAGE.into());
        run.extend(args.iter().cloned());
        let words: Vec<&str> = run.iter().map(String::as_str).collect();
        podman(&words);
        Container { name, tmp, volumes }
    }

    fn logs(&self) -> String {
        let out = Command::new("podman")
            .args(["logs", &self.name])
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    fn inspect(&self, format: &str) -> String {
        podman(&["inspect", &self.name, "--format", format])
            .trim()
            .to_string()
    }

    /// What it wrote where it may write.
    fn written(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                }
                out.push(path);
            }
        }
        let mut out = Vec::new();
        walk(self.tmp.path(), &mut out);
        out
    }

    /// The volume mounted writable at `at`, as the host sees it.
    fn volume(&self, at: &str) -> &Path {
        let (_, dir) = self
            .volumes
            .iter()
            .find(|(mounted, _)| mounted == at)
            .unwrap_or_else(|| panic!("no writable volume at {at}"));
        dir.path()
    }
}

/// What a manifest gives its container besides args: the environment it sets (values only)
/// and where its writable volumes other than `/tmp` are mounted.
#[derive(Default)]
struct Deployed {
    env: Vec<(String, String)>,
    writable: Vec<String>,
}

impl Deployed {
    fn of(manifest: &str) -> Deployed {
        let (docs, _) = common::manifest(manifest, "unused");
        let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        let env = container["env"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| {
                Some((
                    e["name"].as_str()?.to_string(),
                    e["value"].as_str()?.to_string(),
                ))
            })
            .collect();
        let writable = container["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["readOnly"] != true && m["mountPath"] != "/tmp")
            .map(|m| m["mountPath"].as_str().unwrap().to_string())
            .collect();
        Deployed { env, writable }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("podman")
            .args(["rm", "-f", "-t", "0", &self.name])
            .output();
    }
}

/// A copy of `from` that uid 65532 can read, as a Secret mounted with `defaultMode: 0440` and
/// `fsGroup` is.
fn readable_copy(from: &Path) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let path = e.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o444)).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(from, dir.path());
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A manifest's args with some flags given other values (`--flag=` prefix → whole argument).
fn args_of(manifest: &str, pod: &str, replaced: &[(&str, String)]) -> Vec<String> {
    let (_, mut args) = common::manifest(manifest, pod);
    args.remove(0);
    for (flag, to) in replaced {
        let at = args
            .iter()
            .position(|a| a.starts_with(&format!("{flag}=")))
            .unwrap_or_else(|| panic!("{manifest} gives {flag}"));
        args[at] = format!("{flag}={to}");
    }
    args
}

/// The status code of a plain GET, or None when nothing answers.
async fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let ask = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    s.write_all(ask.as_bytes()).await.ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.ok()?;
    let code = answer.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, answer))
}

fn options(nats: &NatsServer, bucket: &str) -> fluxfleet::bus::Options {
    fluxfleet::bus::Options {
        url: nats.url.clone(),
        bucket: bucket.into(),
        ..Default::default()
    }
}

async fn announced(options: &fluxfleet::bus::Options) -> BTreeSet<String> {
    let Ok(client) = fluxfleet::bus::connect(options, "test").await else {
        return BTreeSet::new();
    };
    let Ok(stores) = fluxfleet::bus::open(client, options, None).await else {
        return BTreeSet::new();
    };
    fluxfleet::bus::collectors_alive(&stores.collectors)
        .await
        .unwrap_or_default()
}

/// A collector container with collectors.yaml's args: its bus, id and ports given, its ttl
/// short enough for a takeover within the test.
fn collector(nats: &NatsServer, kubeconfigs: &Path, id: &str) -> (Container, u16, u16) {
    let (health, metrics) = (free_port(), free_port());
    let args = args_of(
        "collectors.yaml",
        id,
        &[
            ("--nats", nats.url.clone()),
            ("--ttl", "6s".into()),
            ("--health-addr", format!("127.0.0.1:{health}")),
            ("--metrics-addr", format!("127.0.0.1:{metrics}")),
        ],
    );
    let container = Container::run(id, &[(kubeconfigs, "/fleet")], &args);
    (container, health, metrics)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_container_publishes_the_fleet_and_hands_it_over_when_stopped() {
    let _turn = common::bus::one_at_a_time().await;
    image().await;
    let nats = NatsServer::start();
    let sim = common::start().await;
    let names: BTreeSet<String> = sim.handle.cluster_names().into_iter().collect();
    let kubeconfigs = readable_copy(&sim.dir.path().join("kubeconfigs"));
    let options = options(&nats, "fluxfleet");

    // The layout: the binary, the CA bundle and who uid 65532 is.
    let mounted = podman(&["image", "mount", IMAGE]);
    let root = Path::new(mounted.trim());
    for file in [
        "usr/local/bin/fluxfleet",
        "etc/ssl/certs/ca-certificates.crt",
        "etc/passwd",
    ] {
        assert!(root.join(file).is_file(), "{file} in the image");
    }
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).unwrap();
    assert!(passwd.contains(":65532:65532:"), "{passwd}");
    podman(&["image", "unmount", IMAGE]);

    let (first, health, metrics) = collector(&nats, kubeconfigs.path(), "collector-a");
    assert_eq!(first.inspect("{{.Config.User}}"), "65532:65532");
    // No home: podman gives the passwd entry's, a directory that does not exist.
    let env = first.inspect("{{json .Config.Env}}");
    let home = env.split('"').find(|v| v.starts_with("HOME="));
    assert!(matches!(home, None | Some("HOME=/nonexistent")), "{env}");
    common::bus::until_truth(
        "the container publishes the fleet",
        &options,
        &sim,
        &names,
        NEVER,
    )
    .await;
    // The probes and metrics answer, as the kubelet and Prometheus ask them.
    common::bus::until("the collector is ready", NEVER, || async {
        match get(health, "/readyz").await {
            Some((200, _)) => None,
            other => Some(format!("/readyz: {other:?}\n{}", first.logs())),
        }
    })
    .await;
    assert_eq!(get(health, "/healthz").await.map(|a| a.0), Some(200));
    let (code, said) = get(metrics, "/metrics").await.unwrap();
    assert_eq!(code, 200, "{said}");
    assert!(said.contains("fluxfleet_"), "{said}");

    // A second collector shares the fleet; the first told to stop hands its share over.
    let (second, ..) = collector(&nats, kubeconfigs.path(), "collector-b");
    common::bus::until("both are announced", NEVER, || async {
        let alive = announced(&options).await;
        (alive.len() < 2).then(|| format!("announced: {alive:?}"))
    })
    .await;
    let out = Command::new("podman")
        .args(["stop", "-t", "30", &first.name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Ended by itself on SIGTERM (0), not killed at the end of the grace period (137).
    assert_eq!(
        first.inspect("{{.State.ExitCode}}"),
        "0",
        "{}",
        first.logs()
    );
    let logs = first.logs();
    assert!(logs.contains("SIGTERM"), "{logs}");
    assert!(!logs.contains("panicked"), "{logs}");
    // Withdrawn at once, not when its announcement would have lapsed.
    let alive = announced(&options).await;
    assert_eq!(alive, BTreeSet::from(["collector-b".to_string()]));
    common::bus::until(
        "the second collector holds every cluster",
        NEVER,
        || async {
            let states = common::bus::collectors(&options).await;
            let theirs = states
                .values()
                .filter(|s| s.collector == "collector-b")
                .count();
            (theirs < names.len()).then(|| format!("{theirs} of {} taken over", names.len()))
        },
    )
    .await;
    common::bus::until_truth("nothing is lost", &options, &sim, &names, NEVER).await;
    // It wrote nothing, even where it may.
    assert_eq!(first.written(), Vec::<PathBuf>::new());
    assert_eq!(second.written(), Vec::<PathBuf>::new());
}

mod mcp;
