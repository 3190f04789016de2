//! A kind listed by streaming: the initial events gathered until the annotated BOOKMARK and told
//! as one list with the watch already open; and each way back to pages — a server that refuses
//! the parameters, one that sends a plain bookmark first (a proxy dropped them), one that never
//! marks the end in time, one that keeps ending the stream before it — while failures that are
//! not about streaming are retried as streaming lists.

use super::state::{END_DUE, QUICK_RESUMES, QUIET_DUE, Watching};
use super::*;
use crate::hostile::sample;

fn streaming(max_objects: usize) -> Watching {
    Watching::new(
        FluxKind::Kustomization,
        (100, max_objects),
        Lists::Streaming,
        Duration::from_secs(30),
        1,
    )
}

/// A watch line of `kind` for a Kustomization named `name`, at resourceVersion `rv`.
fn event(kind: &str, name: &str, rv: &str) -> Came {
    let mut object = sample("kustomization-ready.yaml");
    object["metadata"]["name"] = serde_json::json!(name);
    object["metadata"]["resourceVersion"] = serde_json::json!(rv);
    let text = serde_json::json!({"type": kind, "object": object}).to_string();
    Came::Line(Bytes::from(text))
}

/// A BOOKMARK at `rv`, annotated as the end of the initial events or not.
fn bookmark(rv: &str, end: bool) -> Came {
    let mut meta = serde_json::json!({"resourceVersion": rv});
    if end {
        meta["annotations"] = serde_json::json!({"k8s.io/initial-events-end": "true"});
    }
    let object = serde_json::json!({"kind": "Kustomization", "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "metadata": meta});
    let text = serde_json::json!({"type": "BOOKMARK", "object": object}).to_string();
    Came::Line(Bytes::from(text))
}

fn refusal(code: u16, reason: &str) -> Came {
    let status = kube::core::Status {
        code,
        reason: reason.into(),
        message: "m".into(),
        ..kube::core::Status::default()
    };
    Came::Streamed(Err(Trouble::status(&status)))
}

fn open(rv: &str, since: Instant) -> Stand {
    Stand::Open {
        rv: rv.into(),
        since,
    }
}

#[test]
fn the_initial_events_are_one_list_told_at_their_end_and_the_watch_goes_on() {
    let mut w = streaming(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    assert!(w.streams(), "a new watch streams its list");
    assert!(w.advance(Came::Streamed(Ok(())), t0, wall).is_none());
    assert_eq!(
        w.end_due(),
        Some(t0 + QUIET_DUE),
        "the first line is due soon"
    );
    for (name, rv) in [("a", "7"), ("b", "8"), ("c", "9")] {
        let step = w.advance(event("ADDED", name, rv), t0, wall);
        assert!(step.is_none(), "gathered, not told one by one: {step:?}");
    }
    match w.advance(bookmark("12", true), t0, wall) {
        Some(Step::Listed(rows, Lists::Streaming)) => {
            let names: Vec<&str> = rows.iter().map(|r| &*r.key.name).collect();
            assert_eq!(names, ["a", "b", "c"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.stand(), &open("12", t0), "the same watch stays open");
    assert_eq!(w.end_due(), None);
    // From here it is a watch like any other.
    let step = w.advance(event("MODIFIED", "b", "13"), t0, wall);
    assert!(matches!(step, Some(Step::Applied(_))), "{step:?}");
    let step = w.advance(event("DELETED", "a", "14"), t0, wall);
    assert!(matches!(step, Some(Step::Deleted(_))), "{step:?}");
    assert!(w.advance(Came::Ended, t0, wall).is_none());
    assert_eq!(
        w.stand(),
        &Stand::From { rv: "14".into() },
        "resumed where it stopped, not streamed again"
    );
}

#[test]
fn changes_among_the_initial_events_are_applied_before_the_list_is_told() {
    let mut w = streaming(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(Came::Streamed(Ok(())), t0, wall);
    w.advance(event("ADDED", "a", "1"), t0, wall);
    w.advance(event("ADDED", "b", "2"), t0, wall);
    w.advance(event("MODIFIED", "a", "3"), t0, wall);
    w.advance(event("DELETED", "b", "4"), t0, wall);
    match w.advance(bookmark("5", true), t0, wall) {
        Some(Step::Listed(rows, Lists::Streaming)) => {
            assert_eq!(rows.len(), 1);
            assert_eq!(&*rows[0].key.name, "a");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_server_that_refuses_the_parameters_is_listed_in_pages_at_once() {
    for (code, reason) in [(422, "Invalid"), (400, "BadRequest")] {
        let mut w = streaming(100);
        let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
        let step = w.advance(refusal(code, reason), t0, wall);
        assert!(step.is_none(), "{code}: not a failure to tell: {step:?}");
        assert!(!w.streams(), "{code}");
        assert_eq!(w.stand(), &Stand::Unlisted);
        assert_eq!(w.take_wait(), None, "{code}: listed in pages now");
        let text = sample("kustomization-ready.yaml").to_string();
        let object: crate::fleet::object::Object<'_> = serde_json::from_str(&text).unwrap();
        let ks = super::super::summarize::summarize(FluxKind::Kustomization, Some(&object));
        let step = w.advance(
            Came::Listed(Ok((ks.into_iter().collect(), "3".into()))),
            t0,
            wall,
        );
        assert!(
            matches!(step, Some(Step::Listed(_, Lists::Refused))),
            "{code}: the list says why it was paged: {step:?}"
        );
    }
}

#[test]
fn other_refusals_are_failures_retried_as_streaming_lists() {
    for (code, reason) in [(403, "Forbidden"), (503, "ServiceUnavailable"), (500, "")] {
        let mut w = streaming(100);
        let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
        let step = w.advance(refusal(code, reason), t0, wall);
        assert!(
            matches!(step, Some(Step::Failed { .. })),
            "{code}: {step:?}"
        );
        assert!(w.take_wait().is_some(), "{code}: backed off");
        assert!(w.streams(), "{code}: still streamed next time");
        assert_eq!(w.stand(), &Stand::Unlisted);
    }
}

#[test]
fn an_error_among_the_initial_events_is_listed_in_pages() {
    // kube-apiserver v1.35 with its watch cache on an etcd before 3.4.31 takes the watch (200),
    // then sends this as its first event.
    let mut w = streaming(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(Came::Streamed(Ok(())), t0, wall);
    let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": "RequestWatchProgress is disabled", "reason": "InternalError", "code": 500});
    let error = serde_json::json!({"type": "ERROR", "object": status}).to_string();
    let step = w.advance(Came::Line(Bytes::from(error)), t0, wall);
    assert!(step.is_none(), "not a failure to tell: {step:?}");
    assert!(!w.streams());
    assert_eq!(w.stand(), &Stand::Unlisted);
    assert_eq!(w.take_wait(), None, "listed in pages at once");
    let step = w.advance(Came::Listed(Ok((Vec::new(), "3".into()))), t0, wall);
    assert!(
        matches!(step, Some(Step::Listed(_, Lists::Refused))),
        "{step:?}"
    );
}

#[test]
fn a_plain_bookmark_before_the_end_means_the_parameters_were_dropped() {
    let mut w = streaming(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(Came::Streamed(Ok(())), t0, wall);
    w.advance(event("ADDED", "a", "1"), t0, wall);
    assert!(w.advance(bookmark("2", false), t0, wall).is_none());
    assert!(!w.streams());
    assert_eq!(w.stand(), &Stand::Unlisted, "listed again, in pages");
    assert_eq!(w.end_due(), None, "what was gathered is let go");
}

#[test]
fn initial_events_never_marked_ended_in_time_are_listed_in_pages() {
    let mut w = streaming(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(Came::Streamed(Ok(())), t0, wall);
    w.advance(event("ADDED", "a", "1"), t0, wall);
    assert!(w.advance(Came::Unmarked, t0 + END_DUE, wall).is_none());
    assert!(!w.streams());
    assert_eq!(w.stand(), &Stand::Unlisted);
    let step = w.advance(Came::Listed(Ok((Vec::new(), "3".into()))), t0, wall);
    assert!(
        matches!(step, Some(Step::Listed(_, Lists::Unmarked))),
        "{step:?}"
    );
}

#[test]
fn initial_events_that_keep_coming_may_take_as_long_as_a_list_request() {
    let mut w = streaming(10_000);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(Came::Streamed(Ok(())), t0, wall);
    let mut at = t0;
    for i in 0..20 {
        at += Duration::from_secs(5);
        w.advance(event("ADDED", &format!("ks-{i}"), "1"), at, wall);
        let due = w.end_due().unwrap();
        assert_eq!(due, (at + QUIET_DUE).min(t0 + END_DUE), "line {i}");
    }
    assert_eq!(
        w.end_due(),
        Some(t0 + END_DUE),
        "never past a list request's time"
    );
}

#[test]
fn a_stream_cut_before_its_end_streams_again_and_pages_when_it_keeps_being_cut() {
    let mut w = streaming(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    // Broken (reset, connection lost): nothing gathered is kept; streamed again at once.
    w.advance(Came::Streamed(Ok(())), t0, wall);
    w.advance(event("ADDED", "a", "1"), t0, wall);
    let broke = Trouble::Failed(crate::k8s::wire::errors::Failure::new(
        Phase::Unreachable,
        "reset",
    ));
    w.advance(Came::Broke(broke), t0, wall);
    assert_eq!(w.stand(), &Stand::Unlisted);
    assert_eq!(w.end_due(), None);
    assert!(w.streams());
    // 410 Gone among the initial events: streamed again, at once.
    w.advance(Came::Streamed(Ok(())), t0, wall);
    let status =
        serde_json::json!({"kind": "Status", "code": 410, "reason": "Expired", "message": "m"});
    let gone = serde_json::json!({"type": "ERROR", "object": status}).to_string();
    assert!(w.advance(Came::Line(Bytes::from(gone)), t0, wall).is_none());
    assert_eq!((w.stand(), w.streams()), (&Stand::Unlisted, true));
    // Ended by the server before the end, again and again within seconds: pages.
    let mut w = streaming(100);
    for i in 0..=QUICK_RESUMES {
        assert!(w.streams(), "attempt {i}");
        w.advance(Came::Streamed(Ok(())), t0, wall);
        w.advance(Came::Ended, t0, wall);
        assert_eq!(w.stand(), &Stand::Unlisted);
    }
    assert!(!w.streams(), "ended before its end every time");
}

#[test]
fn more_initial_events_than_a_kind_may_hold_fail_and_stream_again_later() {
    let mut w = streaming(2);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(Came::Streamed(Ok(())), t0, wall);
    w.advance(event("ADDED", "a", "1"), t0, wall);
    w.advance(event("ADDED", "b", "2"), t0, wall);
    match w.advance(event("ADDED", "c", "3"), t0, wall) {
        Some(Step::Failed { failure, .. }) => {
            assert!(
                failure.message.contains("more than 2 objects"),
                "{}",
                failure.message
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.stand(), &Stand::Unlisted);
    assert_eq!(w.end_due(), None, "nothing gathered is held");
    assert!(w.take_wait().is_some());
    assert!(w.streams());
}

#[test]
fn hostile_bookmarks_never_end_the_initial_events_by_mistake() {
    for line in [
        r#"{"type":"BOOKMARK","object":{"metadata":{"annotations":{"k8s.io/initial-events-end":"false"}}}}"#,
        r#"{"type":"BOOKMARK","object":{"metadata":{"annotations":{"k8s.io/initial-events-end":true}}}}"#,
        r#"{"type":"BOOKMARK","object":{"metadata":{"annotations":["k8s.io/initial-events-end"]}}}"#,
        r#"{"type":"BOOKMARK","object":"k8s.io/initial-events-end"}"#,
    ] {
        let mut w = streaming(100);
        let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
        w.advance(Came::Streamed(Ok(())), t0, wall);
        let step = w.advance(Came::Line(Bytes::from(line)), t0, wall);
        assert!(!matches!(step, Some(Step::Listed(..))), "{line}: {step:?}");
    }
}
