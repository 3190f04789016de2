//! `fluxfleet collect --metrics-addr … --health-addr …` as Kubernetes and Prometheus use it:
//! its probes answer, it is ready only once it has published, its metrics parse as Prometheus'
//! text format and count what `get --summary` counts from the bus, and readiness fails
//! (liveness does not) when NATS is gone. A follower started before it waits, saying so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::bus::until;
use common::nats::NatsServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A GET (or another method) over a fresh connection: the status code and the body.
async fn request(method: &str, at: &str, path: &str) -> Result<(u16, String), String> {
    let mut stream = tokio::net::TcpStream::connect(at)
        .await
        .map_err(|e| e.to_string())?;
    let ask = format!("{method} {path} HTTP/1.1\r\nHost: {at}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(ask.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    let code = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("not an HTTP answer: {answer:?}"))?;
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

/// A sample's name and labels, and its value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Prometheus' text format, read strictly: every sample of a declared family, labels quoted.
fn parse(text: &str) -> Result<Vec<Sample>, String> {
    let mut families = Vec::new();
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or(line)?;
            if !["gauge", "counter", "histogram"].contains(&kind) {
                return Err(format!("unknown type: {line}"));
            }
            families.push(name.to_string());
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').ok_or(line)?;
        let value: f64 = value.parse().map_err(|_| format!("value: {line}"))?;
        let (name, labels) = match series.split_once('{') {
            None => (series, ""),
            Some((name, rest)) => (name, rest.strip_suffix('}').ok_or(line)?),
        };
        if !families.iter().any(|f| name.starts_with(f.as_str())) {
            return Err(format!("no TYPE before {line}"));
        }
        let mut map = BTreeMap::new();
        // Values here hold no comma or escaped quote (the unit tests cover escaping).
        for pair in labels.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').ok_or(line)?;
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .ok_or(line)?;
            map.insert(k.to_string(), v.to_string());
        }
        samples.push((name.to_string(), map, value));
    }
    Ok(samples)
}

/// `metric`'s samples summed by the values of `by` (workspace, then another label).
fn by(samples: &[Sample], metric: &str, other: &str) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for (name, labels, value) in samples {
        if name == metric && *value > 0.0 {
            let key = (labels["workspace"].clone(), labels[other].clone());
            *out.entry(key).or_insert(0) += *value as u64;
        }
    }
    out
}

/// The value of a metric with one sample.
fn sample(samples: &[Sample], metric: &str) -> Option<f64> {
    samples.iter().find(|(n, _, _)| n == metric).map(|s| s.2)
}

/// `/metrics` at `at`, parsed.
async fn scraped(at: &str) -> Result<Vec<Sample>, String> {
    let (_, text) = request("GET", at, "/metrics").await?;
    parse(&text).map_err(|e| format!("{e}\n{text}"))
}

fn utf8(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `get --summary -o json`'s workspaces as the same maps: objects by health, clusters by state.
type Counts = BTreeMap<(String, String), u64>;

fn summary_counts(summary: &serde_json::Value) -> (Counts, Counts) {
    let mut objects = BTreeMap::new();
    let mut clusters = BTreeMap::new();
    for w in summary["workspaces"].as_array().unwrap() {
        let name = w["workspace"].as_str().unwrap().to_string();
        for (into, field) in [(&mut objects, "objects"), (&mut clusters, "states")] {
            for (key, n) in w[field].as_object().unwrap() {
                let n = n.as_u64().unwrap();
                if n > 0 {
                    into.insert((name.clone(), key.clone()), n);
                }
            }
        }
    }
    (objects, clusters)
}

/// A loopback address no one listens on.
fn free_address() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}")
}

fn fluxfleet(kubeconfigs: &std::path::Path, url: &str) -> tokio::process::Command {
    let mut cmd = common::bus::command(kubeconfigs);
    cmd.args(["--nats", url]);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collectors_probes_and_metrics_say_what_get_summary_says() {
    let nats = NatsServer::start();
    let sim = common::start_with(|c| {
        c.clusters = 12;
        c.workspaces = 3;
        c.objects = 10;
    })
    .await;
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let at = free_address();
    let within = Duration::from_secs(60);

    // Following the bus before any collector has published: it waits, and says for what.
    use tokio::io::AsyncBufReadExt;
    let mut follower = fluxfleet(&kubeconfigs, &nats.url)
        .args(["get", "ks", "--watch", "-o", "ndjson"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = tokio::io::BufReader::new(follower.stderr.take().unwrap()).lines();
    let first = tokio::time::timeout(within, said.next_line())
        .await
        .expect("the follower says what it waits for")
        .unwrap()
        .unwrap_or_default();
    assert!(
        first.starts_with("waiting: ") && first.contains("has a collector published"),
        "{first}"
    );
    assert!(
        follower.try_wait().unwrap().is_none(),
        "it waits, not exits"
    );

    let mut collector = fluxfleet(&kubeconfigs, &nats.url)
        .args([
            "collect",
            "--id",
            "c1",
            "--ttl",
            "5s",
            "--ring-metrics-every",
            "1s",
        ])
        .args(["--metrics-addr", &at, "--health-addr", &at])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let options = fluxfleet::bus::Options {
        url: nats.url.clone(),
        bucket: "fleet".into(),
        ..Default::default()
    };
    until("the collector is ready", within, || async {
        match request("GET", &at, "/readyz").await {
            Ok((200, _)) => None,
            other => Some(format!("{other:?}")),
        }
    })
    .await;
    // Ready means published: the bus holds its clusters' states by then.
    let published = common::bus::collectors(&options).await;
    assert!(
        published.values().any(|s| s.collector == "c1"),
        "ready before publishing: {published:?}\n{:?}",
        request("GET", &at, "/metrics").await
    );

    // The follower has its first objects, as NDJSON, once they are published.
    let mut lines = tokio::io::BufReader::new(follower.stdout.take().unwrap()).lines();
    let object = tokio::time::timeout(within, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let line: serde_json::Value = serde_json::from_str(&line).unwrap();
            if line["type"] == "object" {
                return line;
            }
        }
        panic!("the follower ended without an object");
    })
    .await
    .expect("the follower prints once the fleet is published");
    assert_eq!(object["kind"], "Kustomization", "{object}");
    follower.kill().await.unwrap();
    assert_eq!(request("GET", &at, "/healthz").await.unwrap().0, 200);
    assert_eq!(request("GET", &at, "/nothing").await.unwrap().0, 404);
    assert_eq!(request("POST", &at, "/metrics").await.unwrap().0, 405);

    // Once the fleet is published, the metrics count what a reader counts.
    until("the metrics equal get --summary", within, || async {
        let (code, text) = match request("GET", &at, "/metrics").await {
            Ok(answer) => answer,
            Err(e) => return Some(e),
        };
        assert_eq!(code, 200);
        let samples = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let objects = by(&samples, "fluxfleet_collector_objects", "health");
        let clusters = by(&samples, "fluxfleet_collector_cluster_connections", "state");
        let out = fluxfleet(&kubeconfigs, &nats.url)
            .args(["get", "--summary", "-o", "json", "--timeout", "10s"])
            .output()
            .await
            .unwrap();
        let summary: serde_json::Value = match serde_json::from_slice(&out.stdout) {
            Ok(summary) => summary,
            Err(e) => return Some(format!("get --summary: {e}: {}", utf8(&out.stderr))),
        };
        let want = summary_counts(&summary);
        let owned = sample(&samples, "fluxfleet_collector_owned_clusters");
        let published = sample(&samples, "fluxfleet_collector_published_total");
        if owned != Some(12.0) || published < Some(12.0 * 10.0) {
            return Some(format!("owns {owned:?} of 12, published {published:?}"));
        }
        ((objects.clone(), clusters.clone()) != want)
            .then(|| format!("metrics {objects:?} {clusters:?}; get --summary {want:?}"))
    })
    .await;
    let text = request("GET", &at, "/metrics").await.unwrap().1;
    let samples = parse(&text).unwrap();
    let healths = by(&samples, "fluxfleet_collector_objects", "health");
    assert!(
        healths.keys().any(|(_, h)| h == "failed" || h == "stalled"),
        "the fleet's failures are counted: {healths:?}"
    );
    let published = sample(&samples, "fluxfleet_collector_published_total");
    let lagged = sample(&samples, "fluxfleet_collector_publish_lag_seconds_count");
    assert_eq!(
        lagged, published,
        "every acknowledged publish has its lag\n{text}"
    );
    // The history stream's size and its cap (`--history-max-bytes`, 1GiB by default).
    until("the history's size is in the metrics", within, || async {
        let samples = match scraped(&at).await {
            Ok(samples) => samples,
            Err(e) => return Some(e),
        };
        let bytes = sample(&samples, "fluxfleet_collector_history_bytes");
        let messages = sample(&samples, "fluxfleet_collector_history_messages");
        let cap = sample(&samples, "fluxfleet_collector_history_max_bytes");
        let said = bytes.is_some_and(|b| b > 0.0)
            && messages.is_some_and(|m| m > 0.0)
            && cap == Some(1_073_741_824.0);
        (!said).then(|| format!("bytes {bytes:?}, messages {messages:?}, cap {cap:?}"))
    })
    .await;

    // Ring metrics: a workspace promoted, its ring's revisions and lead times reach /metrics,
    // one sample set per ring.
    let ring = common::copies_of(&sim, ("Kustomization", "flux-system", "flux-system"))[0]
        .1
        .clone();
    assert!(sim.handle.promote(&ring));
    let ring_metrics = |at: String| {
        let ring = ring.clone();
        async move {
            let samples = match scraped(&at).await {
                Ok(samples) => samples,
                Err(e) => return Some(e),
            };
            let of = |metric: &str| {
                samples
                    .iter()
                    .filter(|(n, l, _)| n == metric && l["ring"] == ring)
                    .map(|s| s.2)
                    .collect::<Vec<f64>>()
            };
            let revisions = of("fluxfleet_collector_ring_revisions");
            let leads = of("fluxfleet_collector_ring_lead_seconds");
            let said = revisions.first().is_some_and(|n| *n >= 1.0) && !leads.is_empty();
            (!said).then(|| format!("revisions {revisions:?}, lead times {leads:?}"))
        }
    };
    until("the promoted ring in the ring metrics", within, || {
        ring_metrics(at.clone())
    })
    .await;

    // A second collector: the first (by id) works the ring metrics out, the other exports
    // none — until the first stops, and it takes over.
    let at2 = free_address();
    let mut second = fluxfleet(&kubeconfigs, &nats.url)
        .args(["collect", "--id", "c2", "--ttl", "5s"])
        .args(["--ring-metrics-every", "1s"])
        .args(["--metrics-addr", &at2, "--health-addr", &at2])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    until("the second collector is ready", within, || async {
        match request("GET", &at2, "/readyz").await {
            Ok((200, _)) => None,
            other => Some(format!("{other:?}")),
        }
    })
    .await;
    let samples = scraped(&at2).await.unwrap();
    let rings: Vec<&Sample> = samples
        .iter()
        .filter(|(n, _, _)| n.starts_with("fluxfleet_collector_ring_"))
        .collect();
    assert!(rings.is_empty(), "c1 works them out, not c2: {rings:?}");
    common::terminate(collector.id());
    assert!(collector.wait().await.unwrap().success());
    until("the second collector's ring metrics", within, || {
        ring_metrics(at2.clone())
    })
    .await;

    // NATS gone: not ready, still alive (a restart would not bring the bus back).
    drop(nats);
    until("not ready without NATS", within, || async {
        match request("GET", &at2, "/readyz").await {
            Ok((503, why)) if why.contains("NATS") => None,
            other => Some(format!("{other:?}")),
        }
    })
    .await;
    assert_eq!(request("GET", &at2, "/healthz").await.unwrap().0, 200);
    second.kill().await.unwrap();
    sim.handle.shutdown().await;
}
