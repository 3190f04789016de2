//! The report's watch: its lines, its URI, and what a hostile server can make it do.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::hostile::sample;

fn line(kind: &str, object: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"type": kind, "object": object})).unwrap()
}

fn at() -> Timestamp {
    "2026-11-23T10:00:00Z".parse().unwrap()
}

/// The resourceVersion comes from the server: a hostile one is a value in the watch's
/// query, never more of the query.
#[test]
fn the_report_s_watch_asks_for_the_report_named_flux_from_an_escaped_version() {
    let uri = watch_uri(
        "/apis/g/v1/fluxreports",
        Some("metadata.name=flux"),
        "7&watch=0#x",
    )
    .unwrap();
    assert!(uri.contains("fieldSelector=metadata.name%3Dflux"), "{uri}");
    assert!(uri.contains("allowWatchBookmarks=true"), "{uri}");
    assert!(uri.contains("resourceVersion=7%26watch%3D0%23x"), "{uri}");
    assert_eq!(uri.matches("watch=").count(), 1, "{uri}");
}

/// What each line of the report's watch says: the sample report as the operator wrote it,
/// a bookmark, a deletion, 410 Gone, and what no watch of a report sends.
#[test]
fn each_line_of_the_report_s_watch_says_what_happened() {
    let mut report = sample("fluxreport.yaml");
    report["metadata"]["resourceVersion"] = "41".into();
    match event(&line("MODIFIED", report.clone()), at()) {
        Event::Written(version, written) => {
            assert_eq!(version, "41");
            let read = Report::read(&report, None, at()).unwrap();
            assert_eq!(*written, read);
        }
        _ => panic!("a report written"),
    }
    let bookmark = serde_json::json!({"kind": "FluxReport", "metadata": {"resourceVersion": "42"}});
    assert!(matches!(event(&line("BOOKMARK", bookmark), at()), Event::Moved(v) if v == "42"));
    assert!(matches!(event(&line("DELETED", report), at()), Event::Deleted(v) if v == "41"));
    let gone = serde_json::json!({"kind": "Status", "code": 410, "reason": "Expired"});
    assert!(matches!(event(&line("ERROR", gone), at()), Event::Gone));
    let other = serde_json::json!({"kind": "Status", "code": 500});
    assert!(matches!(
        event(&line("ERROR", other), at()),
        Event::Garbage(_)
    ));
    let deployment = serde_json::json!({"kind": "Deployment", "spec": {}});
    assert!(matches!(
        event(&line("ADDED", deployment), at()),
        Event::Garbage(_)
    ));
    assert!(matches!(event(b"{not json", at()), Event::Garbage(_)));
}

/// What a scripted API server was asked, by kind of request.
#[derive(Default)]
struct Asked {
    reads: std::sync::atomic::AtomicU32,
    watches: std::sync::atomic::AtomicU32,
    instances: std::sync::atomic::AtomicU32,
}

/// An API server whose report and instance read well, and whose every watch of the report is
/// answered with `status` and `watch`'s bytes, then ended.
fn server(status: u16, watch: Vec<u8>) -> (Http, Arc<Asked>) {
    use std::sync::atomic::Ordering::Relaxed;
    let asked = Arc::new(Asked::default());
    let list = |object: serde_json::Value| {
        serde_json::to_vec(&serde_json::json!({
            "metadata": {"resourceVersion": "7"}, "items": [object]
        }))
        .unwrap()
    };
    let (report, instance) = (
        list(sample("fluxreport.yaml")),
        list(sample("fluxinstance-ready.yaml")),
    );
    let counted = asked.clone();
    let http: Http = tower::util::BoxCloneSyncService::new(tower::service_fn(
        move |request: http::Request<kube::client::Body>| {
            let uri = request.uri().to_string();
            let (status, body) = if uri.contains("fluxinstances") {
                counted.instances.fetch_add(1, Relaxed);
                (200, ResponseBody::scripted(&instance, None))
            } else if uri.contains("watch=") {
                let watches = counted.watches.fetch_add(1, Relaxed);
                // A client that asks in a loop spins without time passing: fail, not hang.
                assert!(watches < 1_000, "the watch was asked for in a loop");
                (status, ResponseBody::scripted(&watch, None))
            } else {
                counted.reads.fetch_add(1, Relaxed);
                (200, ResponseBody::scripted(&report, None))
            };
            let mut answer = http::Response::new(body);
            *answer.status_mut() = http::StatusCode::from_u16(status).unwrap();
            async move { Ok::<_, tower::BoxError>(answer) }
        },
    ));
    (http, asked)
}

/// A server that writes its report a thousand times at once: each write is passed on, with the
/// instance, but the instance is read again only a few times a minute — not a request for
/// every line the server sends.
#[tokio::test(start_paused = true)]
async fn a_report_written_without_pause_does_not_make_a_request_of_each_write() {
    use futures::StreamExt;
    use std::sync::atomic::Ordering::Relaxed;
    let mut report = sample("fluxreport.yaml");
    let mut flood = Vec::new();
    for version in 8..1_008 {
        report["metadata"]["resourceVersion"] = version.to_string().into();
        flood.extend(line("MODIFIED", report.clone()));
        flood.push(b'\n');
    }
    let (http, asked) = server(200, flood);
    let reports = watched(Arc::new(http), Duration::from_secs(3600));
    let read: Vec<_> = reports.take(1_001).collect().await;
    for report in &read {
        let report = report.as_ref().unwrap().as_ref().unwrap();
        assert!(
            report.instance.is_some(),
            "every report carries its instance"
        );
    }
    assert_eq!(asked.reads.load(Relaxed), 1);
    assert_eq!(asked.watches.load(Relaxed), 1);
    assert_eq!(
        asked.instances.load(Relaxed),
        1 + u32::from(INSTANCE_READS),
        "the first read's, then a few a minute"
    );
}

/// Servers that will not hold the report's watch — it ends at once, says 410 Gone in a line or
/// in its status, sends one line without end — are read once every interval, as before the
/// report was watched; never asked again in a loop.
#[tokio::test(start_paused = true)]
async fn a_report_watch_the_server_will_not_hold_is_read_every_interval_not_in_a_loop() {
    use futures::StreamExt;
    use std::sync::atomic::Ordering::Relaxed;
    let gone = serde_json::json!({"kind": "Status", "code": 410, "reason": "Expired"});
    let mut gone_line = line("ERROR", gone);
    gone_line.push(b'\n');
    let refusals = [
        ("ends at once", 200, Vec::new()),
        ("410 in a line", 200, gone_line),
        ("410 as its status", 410, Vec::new()),
        ("a line without end", 200, vec![b' '; 2 * LIMIT]),
        ("not JSON", 200, b"<html>\n".to_vec()),
    ];
    for (what, status, watch) in refusals {
        let every = Duration::from_secs(60);
        let (http, asked) = server(status, watch);
        let mut reports = Box::pin(watched(Arc::new(http), every));
        let start = tokio::time::Instant::now();
        let mut reads = 0;
        while start.elapsed() < every * 10 {
            if let Some(Ok(Some(_))) = reports.next().await {
                reads += 1;
            }
        }
        assert!(
            reads >= 10,
            "{what}: the report is still read, {reads} times"
        );
        let (asked_reads, watches) = (asked.reads.load(Relaxed), asked.watches.load(Relaxed));
        assert!(
            asked_reads <= 11,
            "{what}: read {asked_reads} times in ten minutes"
        );
        assert!(
            watches <= 11,
            "{what}: watched {watches} times in ten minutes"
        );
    }
}
