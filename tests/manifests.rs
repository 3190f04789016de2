//! The deployment manifests (`config/deploy/*.yaml`, and the Flux example in `flux/`) checked
//! against the binary they run: every document parses as the Kubernetes kind it claims, with no
//! field that kind does not have; every container's `args` parse as that subcommand's (a flag
//! renamed in the binary fails here), with the lines marked `creds` uncommented too; every port
//! a probe or a Service names is one the args open; every path the args name is on a mount;
//! memory is what docs/collectors.md measured for the fleet the manifest is sized for; and the
//! Flux example is valid against Flux's own CRDs and applies the directory it names.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// How long a command takes to stop at most when not told (`--shutdown-timeout`).
const SHUTDOWN_TIMEOUT: &str = fluxfleet::cli::SHUTDOWN_TIMEOUT;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The manifests applied to each cluster of the fleet rather than where fluxfleet runs.
const ON_EACH_CLUSTER: &[&str] = &["mcp-fleet-rbac.yaml"];

/// The manifests a team applies: the Kubernetes ones, by file name.
fn manifests() -> BTreeMap<String, String> {
    let dir = root().join("config/deploy");
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".yaml") && name != "kustomization.yaml" {
            found.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    assert!(found.contains_key("collectors.yaml") && found.contains_key("mcp.yaml"));
    found
}

/// The optional lines marked `# creds` made real: `# - --nats-creds=…   # creds` → `- --nats-creds=…`.
fn with_creds(text: &str) -> String {
    text.lines()
        .map(|line| match line.trim_end().strip_suffix("# creds") {
            Some(kept) => {
                let indent = kept.len() - kept.trim_start().len();
                let body = kept
                    .trim_start()
                    .strip_prefix("# ")
                    .unwrap_or(kept.trim_start());
                format!("{}{}", &kept[..indent], body.trim_end())
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn documents(text: &str) -> Vec<Value> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).unwrap();
    docs.into_iter().filter(|d| !d.is_null()).collect()
}

/// Where `typed` (the kind read and written back) lost a field of `raw`: a field the kind does
/// not have, which Kubernetes would drop or refuse.
fn dropped(raw: &Value, typed: &Value, at: &str, out: &mut Vec<String>) {
    match (raw, typed) {
        (Value::Object(r), Value::Object(t)) => {
            for (k, v) in r {
                match t.get(k) {
                    Some(tv) => dropped(v, tv, &format!("{at}.{k}"), out),
                    None => out.push(format!("{at}.{k}")),
                }
            }
        }
        (Value::Array(r), Value::Array(t)) => {
            for (i, (rv, tv)) in r.iter().zip(t).enumerate() {
                dropped(rv, tv, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// `doc` read as the Kubernetes kind it says it is, and every field of it known to that kind.
fn typed(doc: &Value) -> Result<(), String> {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{
        Namespace, PersistentVolumeClaim, Secret, Service, ServiceAccount,
    };
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    fn check<T: serde::de::DeserializeOwned + serde::Serialize>(doc: &Value) -> Result<(), String> {
        let read: T = serde_json::from_value(doc.clone()).map_err(|e| e.to_string())?;
        let back = serde_json::to_value(&read).unwrap();
        let mut lost = Vec::new();
        dropped(doc, &back, "", &mut lost);
        match lost.is_empty() {
            true => Ok(()),
            false => Err(format!("fields the kind has not: {lost:?}")),
        }
    }
    match (doc["apiVersion"].as_str(), doc["kind"].as_str()) {
        (Some("v1"), Some("Namespace")) => check::<Namespace>(doc),
        (Some("v1"), Some("Service")) => check::<Service>(doc),
        (Some("v1"), Some("ServiceAccount")) => check::<ServiceAccount>(doc),
        (Some("v1"), Some("Secret")) => check::<Secret>(doc),
        (Some("v1"), Some("PersistentVolumeClaim")) => check::<PersistentVolumeClaim>(doc),
        (Some("apps/v1"), Some("Deployment")) => check::<Deployment>(doc),
        (Some("rbac.authorization.k8s.io/v1"), Some("ClusterRole")) => check::<ClusterRole>(doc),
        (Some("rbac.authorization.k8s.io/v1"), Some("ClusterRoleBinding")) => {
            check::<ClusterRoleBinding>(doc)
        }
        other => Err(format!("a kind this test does not know: {other:?}")),
    }
}

/// A container's args with `$(VAR)` replaced as the kubelet does, from its `env`.
fn expanded(container: &Value) -> Vec<String> {
    let env: BTreeMap<String, String> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            // A value from the downward API: a pod's name is a name.
            let value = e["value"]
                .as_str()
                .unwrap_or("fluxfleet-collector-5d8f9-abcde");
            (name, value.to_string())
        })
        .collect();
    container["args"]
        .as_array()
        .expect("the container names its args")
        .iter()
        .map(|a| {
            let mut a = a.as_str().unwrap().to_string();
            for (k, v) in &env {
                a = a.replace(&format!("$({k})"), v);
            }
            assert!(!a.contains("$("), "an unset variable in {a}");
            a
        })
        .collect()
}

/// The value of `--flag=VALUE` or `--flag VALUE` in `args`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let eq = format!("{name}=");
    args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix(&eq).or_else(|| {
            (a == name)
                .then(|| args.get(i + 1).map(String::as_str))
                .flatten()
        })
    })
}

/// The ports the args open: each listening flag's port.
fn opened(args: &[String]) -> BTreeSet<u16> {
    ["--listen", "--metrics-addr", "--health-addr"]
        .iter()
        .filter_map(|f| flag(args, f))
        .map(|addr| addr.rsplit(':').next().unwrap().parse().unwrap())
        .collect()
}

/// Memory as Kubernetes writes it, in MiB.
fn mib(quantity: &str) -> u64 {
    let (n, unit) = quantity.split_at(quantity.find(|c: char| c.is_alphabetic()).unwrap());
    let n: u64 = n.parse().unwrap();
    match unit {
        "Mi" => n,
        "Gi" => n * 1024,
        other => panic!("a unit this test does not read: {other}"),
    }
}

/// docs/collectors.md's sizing table: (command, clusters) → the peak measured, in MiB.
fn measured() -> BTreeMap<(String, u64), u64> {
    let text = std::fs::read_to_string(root().join("docs/collectors.md")).unwrap();
    let start = text
        .find("### Sizing")
        .expect("docs/collectors.md has a Sizing section");
    let mut found = BTreeMap::new();
    for line in text[start..].lines().skip(1) {
        if line.starts_with('#') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 5 || !cells[1].starts_with("`fluxfleet ") {
            continue;
        }
        let command = cells[1]
            .trim_matches('`')
            .split_whitespace()
            .nth(1)
            .unwrap();
        let number = |cell: &str| -> u64 {
            let digits: String = cell
                .trim_matches('*')
                .split_whitespace()
                .next()
                .unwrap()
                .replace(',', "");
            digits
                .parse()
                .unwrap_or_else(|_| panic!("a number in {cell:?}"))
        };
        found.insert((command.to_string(), number(cells[2])), number(cells[3]));
    }
    assert!(!found.is_empty(), "the Sizing table lists measured figures");
    found
}

/// The fleet a container's resources are sized for: "sized for N clusters" in the comment
/// above its `resources`.
fn sized_for(text: &str, container: &str) -> u64 {
    let at = text
        .find(&format!("- name: {container}"))
        .unwrap_or_else(|| panic!("container {container}"));
    let rest = &text[at..];
    let resources = rest.find("resources:").expect("resources");
    let comment = &rest[resources..];
    let said = comment
        .find("sized for ")
        .map(|i| &comment[i + "sized for ".len()..])
        .unwrap_or_else(|| panic!("{container}: the comment says what fleet it is sized for"));
    said.split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

/// Every document of one manifest file checked, as written and with its `creds` lines on.
fn check(file: &str, text: &str, measured: &BTreeMap<(String, u64), u64>) {
    for (variant, text) in [
        ("as written", text.to_string()),
        ("with creds", with_creds(text)),
    ] {
        for doc in documents(&text) {
            let what = format!(
                "{file} ({variant}): {} {}",
                doc["kind"], doc["metadata"]["name"]
            );
            typed(&doc).unwrap_or_else(|e| panic!("{what}: {e}"));
            if doc["kind"] == "Deployment" {
                deployment(&doc, &text, measured, &what);
            }
        }
    }
}

#[test]
fn every_manifest_is_the_kind_it_claims_and_runs_what_the_binary_takes() {
    let measured = measured();
    for (file, text) in manifests() {
        check(&file, &text, &measured);
    }
}

/// A Deployment's containers: args that parse, ports that are opened, paths that are
/// mounted, memory as measured.
fn deployment(doc: &Value, text: &str, measured: &BTreeMap<(String, u64), u64>, what: &str) {
    let pod = &doc["spec"]["template"]["spec"];
    let volumes: BTreeSet<&str> = pod["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(pod["securityContext"]["runAsUser"], 65532, "{what}");
    // Told to stop, it has stopped before the kubelet's SIGKILL.
    let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap_or(30);
    for c in pod["containers"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let what = format!("{what}, container {name}");
        let args = expanded(c);
        let mut words = vec!["fluxfleet".to_string()];
        words.extend(args.iter().cloned());
        if let Err(e) = fluxfleet::cli::Cli::parse_words(&words) {
            panic!("{what}: its args do not parse as the binary's: {e}");
        }
        assert_eq!(
            c["securityContext"]["readOnlyRootFilesystem"], true,
            "{what}"
        );
        let stopping = flag(&args, "--shutdown-timeout").unwrap_or(SHUTDOWN_TIMEOUT);
        let stopping: u64 = stopping.strip_suffix('s').unwrap().parse().unwrap();
        assert!(
            stopping < grace,
            "{what}: stops within {stopping}s, killed after {grace}s"
        );

        // Ports: what the probes and the Service name is what the args open.
        let opened = opened(&args);
        let ports: BTreeMap<&str, u16> = c["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let n = p["containerPort"].as_u64().unwrap() as u16;
                assert!(
                    opened.contains(&n),
                    "{what}: port {n} is opened by no flag ({args:?})"
                );
                (p["name"].as_str().unwrap(), n)
            })
            .collect();
        assert_eq!(
            ports.values().copied().collect::<BTreeSet<_>>(),
            opened,
            "{what}: every port the args open is declared"
        );
        for probe in ["livenessProbe", "readinessProbe"] {
            let port = &c[probe]["httpGet"]["port"];
            let n = match port {
                Value::String(named) => *ports
                    .get(named.as_str())
                    .unwrap_or_else(|| panic!("{what}: {probe} names no port {named}")),
                Value::Number(n) => n.as_u64().unwrap() as u16,
                other => panic!("{what}: {probe} port {other}"),
            };
            assert_eq!(
                Some(n),
                flag(&args, "--health-addr").map(|a| a
                    .rsplit(':')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()),
                "{what}: {probe} asks the port of --health-addr"
            );
            let path = c[probe]["httpGet"]["path"].as_str().unwrap();
            assert!(
                ["/healthz", "/readyz"].contains(&path),
                "{what}: {probe} {path}"
            );
        }

        // Paths: every file or directory the args name is on a mount of a declared volume.
        let mounts: Vec<(&str, &str, bool)> = c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let volume = m["name"].as_str().unwrap();
                assert!(
                    volumes.contains(volume),
                    "{what}: mount of undeclared volume {volume}"
                );
                let read_only = m["readOnly"].as_bool().unwrap_or(false);
                (m["mountPath"].as_str().unwrap(), volume, read_only)
            })
            .collect();
        for arg in &args {
            let Some((_, value)) = arg.split_once('=') else {
                continue;
            };
            if !value.starts_with('/') {
                continue;
            }
            let on = mounts
                .iter()
                .find(|(at, ..)| Path::new(value).starts_with(at))
                .unwrap_or_else(|| panic!("{what}: {arg} names a path on no mount"));
            assert!(on.2, "{what}: {arg} is read from a writable mount");
        }
        assert!(
            mounts.iter().any(|(at, _, ro)| *at == "/tmp" && !ro),
            "{what}: the one writable place"
        );

        // Memory: at least what was measured for the fleet it is sized for.
        let command = &args[0];
        let fleet = sized_for(text, name);
        let peak = measured.get(&(command.clone(), fleet)).unwrap_or_else(|| {
            panic!(
                "{what}: docs/collectors.md measured no `fluxfleet {command}` at {fleet} clusters"
            )
        });
        let limit = mib(c["resources"]["limits"]["memory"].as_str().unwrap());
        let request = mib(c["resources"]["requests"]["memory"].as_str().unwrap());
        assert!(
            limit >= *peak,
            "{what}: a limit of {limit} MiB under the {peak} MiB measured"
        );
        assert!(request <= limit, "{what}");
    }
}

#[test]
fn a_renamed_flag_a_stray_port_or_an_unmounted_path_fails_the_check() {
    let measured = measured();
    let refused = |file: &str, from: &str, to: &str| -> String {
        let text = manifests()[file].replace(from, to);
        assert_ne!(text, manifests()[file], "{from} is in {file}");
        let failed = std::panic::catch_unwind(|| check(file, &text, &measured))
            .expect_err("the check fails");
        failed.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    // (file, what is changed, into what, what the failure says)
    let mistakes = [
        // The flag as the binary named it before, or a typo: refused by name.
        (
            "collectors.yaml",
            "--kubeconfig-dir=",
            "--kubeconfig-directory=",
            "--kubeconfig-directory",
        ),
        (
            "mcp.yaml",
            "--impersonate-prefix=oidc:",
            "--impersonation-prefix=oidc:",
            "--impersonation-prefix",
        ),
        // A probe on a port nothing opens.
        (
            "collectors.yaml",
            "--health-addr=:9440",
            "--health-addr=:9441",
            "port 9440 is opened by no flag",
        ),
        // Kubeconfigs where nothing is mounted.
        (
            "mcp.yaml",
            "--kubeconfig-dir=/fleet",
            "--kubeconfig-dir=/kubeconfigs",
            "on no mount",
        ),
        // A grace period shorter than the time it takes to stop.
        (
            "collectors.yaml",
            "terminationGracePeriodSeconds: 30",
            "terminationGracePeriodSeconds: 15",
            "killed after 15s",
        ),
        // Less memory than measured.
        (
            "collectors.yaml",
            "memory: 1Gi",
            "memory: 128Mi",
            "measured",
        ),
    ];
    for (file, from, to, says) in mistakes {
        let said = refused(file, from, to);
        assert!(said.contains(says), "{file}, {from} -> {to}: {said}");
    }
}

mod flux;
mod rbac;
