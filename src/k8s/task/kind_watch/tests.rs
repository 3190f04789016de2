//! A kind's watch: its states stepped without a network (list, watch, resume, relist on 410
//! Gone, back off), hostile lines, lines cut across frames, resuming a broken watch at once, and
//! backing off from a server that breaks every watch.

use super::state::{QUICK_RESUMES, Watching};
use super::*;
use crate::hostile::sample;
use crate::k8s::wire::api::Reason;

/// The state of a watch of Kustomizations holding at most `max_objects`.
fn watching(max_objects: usize) -> Watching {
    Watching::new(
        FluxKind::Kustomization,
        (100, max_objects),
        Lists::Paged,
        Duration::from_secs(30),
        1,
    )
}

/// A watch line of `kind` for the sample `file`, at resourceVersion `rv`.
fn line(kind: &str, file: &str, rv: &str) -> Came {
    let mut object = sample(file);
    object["metadata"]["resourceVersion"] = serde_json::json!(rv);
    let text = serde_json::json!({"type": kind, "object": object}).to_string();
    Came::Line(Bytes::from(text))
}

/// An ERROR line carrying a Status with `code`.
fn error_line(code: u16, reason: &str) -> Came {
    let status =
        serde_json::json!({"kind": "Status", "code": code, "reason": reason, "message": "m"});
    let text = serde_json::json!({"type": "ERROR", "object": status}).to_string();
    Came::Line(Bytes::from(text))
}

/// A list of `n` Kustomizations at resourceVersion `rv`.
fn listed(n: usize, rv: &str) -> Came {
    let text = sample("kustomization-ready.yaml").to_string();
    let object: crate::fleet::object::Object<'_> = serde_json::from_str(&text).unwrap();
    let ks = super::super::summarize::summarize(FluxKind::Kustomization, Some(&object));
    let rows = (0..n).filter_map(|_| ks.clone()).collect();
    Came::Listed(Ok((rows, rv.to_string())))
}

fn from(rv: &str) -> Stand {
    Stand::From { rv: rv.into() }
}

#[test]
fn a_watch_lists_opens_follows_and_resumes_where_it_stopped() {
    let mut w = watching(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    assert_eq!(w.stand(), &Stand::Unlisted, "a new watch lists first");
    match w.advance(listed(3, "10"), t0, wall) {
        Some(Step::Listed(rows, Lists::Paged)) => assert_eq!(rows.len(), 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        w.stand(),
        &from("10"),
        "then watches from the list's version"
    );
    assert!(matches!(
        w.advance(Came::Opened(Ok(())), t0, wall),
        Some(Step::Watching)
    ));
    assert_eq!(
        w.stand(),
        &Stand::Open {
            rv: "10".into(),
            since: t0
        }
    );
    let step = w.advance(line("MODIFIED", "kustomization-ready.yaml", "11"), t0, wall);
    assert!(matches!(step, Some(Step::Applied(_))), "{step:?}");
    // A bookmark tells nothing, but moves where the watch resumes from.
    let step = w.advance(line("BOOKMARK", "kustomization-ready.yaml", "15"), t0, wall);
    assert!(step.is_none(), "{step:?}");
    let step = w.advance(line("DELETED", "kustomization-ready.yaml", "16"), t0, wall);
    assert!(matches!(step, Some(Step::Deleted(_))), "{step:?}");
    // The server ends the watch (its timeout): re-opened from the last version, at once.
    assert!(w.advance(Came::Ended, t0, wall).is_none());
    assert_eq!(w.stand(), &from("16"));
    assert_eq!(w.take_wait(), None, "no pause");
}

#[test]
fn gone_relists_at_once_and_other_refusals_back_off_where_the_watch_stood() {
    let mut w = watching(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(listed(1, "5"), t0, wall);
    w.advance(Came::Opened(Ok(())), t0, wall);
    // 410 Gone in the watch: the version is too old; list again, now, telling nothing.
    assert!(w.advance(error_line(410, "Expired"), t0, wall).is_none());
    assert_eq!(w.stand(), &Stand::Unlisted);
    assert_eq!(w.take_wait(), None);
    // A forbidden list: told with its reason, retried after a pause, still to list.
    let forbidden = Trouble::status(&kube::core::Status {
        code: 403,
        reason: "Forbidden".into(),
        message: "no".into(),
        ..kube::core::Status::default()
    });
    match w.advance(Came::Listed(Err(forbidden)), t0, wall) {
        Some(Step::Failed {
            reason, retry_at, ..
        }) => {
            assert_eq!(reason, Some(Reason::Forbidden));
            let wait = w.take_wait().expect("a pause before the retry");
            assert_eq!(retry_at, wall + wait, "the retry is said for when it comes");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.stand(), &Stand::Unlisted);
    // A watch refused after the list: retried from the list's version, not relisted.
    w.advance(listed(1, "7"), t0, wall);
    let step = w.advance(Came::Opened(Err(Trouble::garbage("no"))), t0, wall);
    assert!(matches!(step, Some(Step::Failed { .. })), "{step:?}");
    assert_eq!(w.stand(), &from("7"));
    // A line no watch sends: the watch is closed, and reopened where it stood after a pause.
    w.take_wait();
    w.advance(Came::Opened(Ok(())), t0, wall);
    let step = w.advance(line("PATCHED", "kustomization-ready.yaml", "8"), t0, wall);
    assert!(matches!(step, Some(Step::Failed { .. })), "{step:?}");
    // Its version is where the server stood: the watch resumes after it.
    assert_eq!(w.stand(), &from("8"));
    assert!(w.take_wait().is_some());
}

/// A refusal with HTTP status `code`, and the `Retry-After` its answer carried.
fn refused(code: u16, reason: &str, retry_after: Option<Duration>) -> Came {
    let status = kube::core::Status {
        code,
        reason: reason.into(),
        message: "m".into(),
        ..kube::core::Status::default()
    };
    Came::Listed(Err(Trouble::refused(&status, retry_after)))
}

#[test]
fn a_throttled_list_is_asked_again_when_the_server_says_and_other_failures_back_off() {
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    // API Priority and Fairness turning every list away for a while: each retry comes when the
    // server said (a second, jittered up to a quarter), the tenth as soon as the first.
    let mut w = watching(100);
    for attempt in 0..10 {
        let step = w.advance(
            refused(429, "TooManyRequests", Some(Duration::from_secs(1))),
            t0,
            wall,
        );
        assert!(
            matches!(
                step,
                Some(Step::Failed {
                    reason: Some(Reason::TooManyRequests { .. }),
                    ..
                })
            ),
            "{step:?}"
        );
        let wait = w.take_wait().unwrap();
        assert!(
            wait >= Duration::from_secs(1) && wait < Duration::from_millis(1250),
            "attempt {attempt}: {wait:?}"
        );
        assert_eq!(w.stand(), &Stand::Unlisted);
    }
    // Once it has room, the list goes through.
    assert!(matches!(
        w.advance(listed(2, "9"), t0, wall),
        Some(Step::Listed(..))
    ));
    // A server failing without saying when is asked ever more slowly (up to the maximum).
    let mut w = watching(100);
    let waits: Vec<Duration> = (0..8)
        .map(|_| {
            w.advance(refused(503, "ServiceUnavailable", None), t0, wall);
            w.take_wait().unwrap()
        })
        .collect();
    assert!(waits[4] > waits[0] * 8, "{waits:?}");
    assert!(waits[7] <= Duration::from_secs(30), "{waits:?}");
}

#[test]
fn more_objects_than_a_cluster_may_hold_is_refused_and_listed_again() {
    let mut w = watching(2);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(listed(2, "1"), t0, wall);
    w.advance(Came::Opened(Ok(())), t0, wall);
    match w.advance(line("ADDED", "kustomization-ready.yaml", "2"), t0, wall) {
        Some(Step::Failed { failure, .. }) => {
            assert!(
                failure.message.contains("engine.max_objects is 2"),
                "{}",
                failure.message
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        w.stand(),
        &Stand::Unlisted,
        "the count starts again from a list"
    );
}

#[test]
fn a_broken_watch_resumes_at_once_until_it_breaks_too_often() {
    let mut w = watching(100);
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    w.advance(listed(0, "1"), t0, wall);
    let broke = || Came::Broke(Trouble::garbage("reset"));
    for i in 0..u64::from(QUICK_RESUMES) {
        let at = t0 + Duration::from_secs(i);
        w.advance(Came::Opened(Ok(())), at, wall);
        let step = w.advance(broke(), at + Duration::from_millis(10), wall);
        assert!(matches!(step, Some(Step::Restarted)), "cut {i}: {step:?}");
        assert_eq!(w.take_wait(), None);
    }
    let at = t0 + Duration::from_secs(10);
    w.advance(Came::Opened(Ok(())), at, wall);
    match w.advance(broke(), at + Duration::from_millis(10), wall) {
        Some(Step::Failed { failure, .. }) => {
            assert_eq!(failure.phase, Phase::ServerError);
            assert!(
                failure.message.contains("this minute"),
                "{}",
                failure.message
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        w.stand(),
        &from("1"),
        "resumed from where it stood, after a pause"
    );
    assert!(w.take_wait().is_some());
}

/// A watch of Kustomizations v1 through `http`.
fn kustomizations(http: Http, max_backoff: Duration, seed: u64) -> KindWatch {
    KindWatch::new(
        Arc::new(http),
        FluxKind::Kustomization,
        "v1".into(),
        (100, 10_000),
        Lists::Paged,
        max_backoff,
        seed,
    )
}

#[test]
fn hostile_watch_lines_are_errors_or_events_never_panics() {
    let mut watch = watching(10_000);
    let object = sample("kustomization-health-check-failed.yaml");
    let status = serde_json::json!({"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"});
    let (mut answered, mut refused) = (0, 0);
    for (kind, object) in [("ADDED", &object), ("DELETED", &object), ("ERROR", &status)] {
        let line = serde_json::json!({"type": kind, "object": object}).to_string();
        for hostile in crate::hostile::mutations(line.as_bytes(), 1500) {
            match watch.event(&hostile) {
                Ok(_) => answered += 1,
                Err(trouble) => {
                    refused += 1;
                    let said = trouble.into_failure().message;
                    assert!(!said.trim().is_empty(), "an error says what is wrong");
                }
            }
        }
    }
    // Most mutations break the JSON; some leave an event that must still be read.
    assert!(
        answered > 100 && refused > 1000,
        "{answered} read, {refused} refused"
    );
}

fn feed(frames: &[&str]) -> Vec<String> {
    let mut lines: Lines = Lines::default();
    let mut out = Vec::new();
    for frame in frames {
        lines.push(Bytes::from(frame.to_string()));
        while let Some(line) = lines.next().unwrap() {
            out.push(String::from_utf8(line.to_vec()).unwrap());
        }
    }
    out
}

#[test]
fn lines_are_whole_however_the_frames_cut_them() {
    assert_eq!(
        feed(&["{\"a\":1}\n{\"b\":2}\n"]),
        ["{\"a\":1}", "{\"b\":2}"]
    );
    assert_eq!(
        feed(&["{\"a\"", ":1}\n{\"b", "\":2}", "\n"]),
        ["{\"a\":1}", "{\"b\":2}"]
    );
    assert_eq!(feed(&["\n", "  \n{}\n\n"]), ["{}"]);
    // A line still waiting for its end is not returned.
    assert_eq!(feed(&["{\"a\":1}\n{\"unfinished"]), ["{\"a\":1}"]);
}

#[test]
fn nothing_is_kept_once_a_line_is_complete() {
    let mut lines: Lines = Lines::default();
    lines.push(Bytes::from_static(b"{\"a\""));
    assert_eq!(lines.next(), Ok(None));
    lines.push(Bytes::from_static(b":1}\n"));
    assert_eq!(lines.next().unwrap().as_deref(), Some(&b"{\"a\":1}"[..]));
    assert_eq!(lines.partial.capacity(), 0);
    assert!(lines.frame.is_empty());
}

#[test]
fn an_endless_line_is_refused() {
    let mut lines: Lines = Lines::default();
    let big = Bytes::from(vec![b'x'; MAX_LINE / 2 + 1]);
    lines.push(big.clone());
    assert_eq!(lines.next(), Ok(None));
    lines.push(big);
    assert_eq!(lines.next(), Err(TooLong));
}

#[test]
fn a_watch_that_ran_a_while_is_resumed_at_once_however_often_it_breaks() {
    let mut watch = watching(100);
    let start = Instant::now();
    // Cut every 6 s, for ten minutes: each one a working watch.
    for i in 0..100u32 {
        let opened = start + Duration::from_secs(6) * i;
        assert_eq!(
            watch.resume_at_once(Some(opened), opened + RAN_LONG_ENOUGH),
            Ok(()),
            "cut {i}"
        );
    }
}

#[test]
fn watches_cut_within_seconds_are_resumed_at_once_a_few_times_a_minute() {
    let mut watch = watching(100);
    let start = Instant::now();
    let cut = |watch: &mut Watching, at: Duration| {
        watch.resume_at_once(Some(start + at), start + at + Duration::from_millis(100))
    };
    for i in 0..u64::from(QUICK_RESUMES) {
        assert_eq!(cut(&mut watch, Duration::from_secs(i)), Ok(()));
    }
    assert_eq!(
        cut(&mut watch, Duration::from_secs(10)),
        Err(QUICK_RESUMES),
        "the fourth in a minute backs off"
    );
    assert_eq!(cut(&mut watch, Duration::from_secs(59)), Err(QUICK_RESUMES));
    // A new minute, new quick resumes.
    assert_eq!(cut(&mut watch, Duration::from_secs(61)), Ok(()));
    // One that ran long enough is resumed at once even with none left.
    for i in 0..u64::from(QUICK_RESUMES) {
        let _ = cut(&mut watch, Duration::from_secs(62 + i));
    }
    assert_eq!(
        watch.resume_at_once(
            Some(start + Duration::from_secs(70)),
            start + Duration::from_secs(76)
        ),
        Ok(())
    );
}

/// A server that lists fine, then accepts every watch, sends one event and breaks it at once:
/// a few breaks are resumed at once (`Restarted`, the kind stays live), then the watch is
/// healthy for moments only, so it backs off ever longer (0.5 s, 1 s, 2 s … up to
/// `max_backoff`) instead of re-opening every half second forever. client-go's reflector does
/// the same: its backoff (0.8 s doubling to 30 s) resets only after two minutes without one.
#[tokio::test(start_paused = true)]
async fn a_server_that_breaks_every_watch_is_retried_ever_more_slowly() {
    let event = {
        let object = sample("kustomization-health-check-failed.yaml");
        format!(
            "{}\n",
            serde_json::json!({"type": "MODIFIED", "object": object})
        )
    };
    let http: Http = tower::util::BoxCloneSyncService::new(tower::service_fn(
        move |request: http::Request<kube::client::Body>| {
            let watching = request.uri().query().unwrap_or_default().contains("watch=");
            let body = if watching {
                ResponseBody::scripted(event.as_bytes(), Some("the server broke the watch"))
            } else {
                ResponseBody::scripted(br#"{"metadata":{"resourceVersion":"1"},"items":[]}"#, None)
            };
            async move { Ok::<_, tower::BoxError>(http::Response::new(body)) }
        },
    ));
    let max = Duration::from_secs(16);
    let mut watch = kustomizations(http, max, 3);
    let mut failed_at = Vec::new();
    let mut restarted = Vec::new();
    while failed_at.len() < 9 {
        match watch.next().await {
            Step::Failed { failure, .. } => {
                assert!(
                    failure.message.contains("the server broke the watch"),
                    "{}",
                    failure.message
                );
                assert_eq!(
                    failure.phase,
                    Phase::ServerError,
                    "the server answers; it will not hold a watch"
                );
                failed_at.push(tokio::time::Instant::now());
            }
            Step::Restarted => restarted.push(failed_at.len()),
            _ => {}
        }
    }
    // Three resumed at once before the first failure; none until a minute had passed.
    assert_eq!(&restarted[..3], [0, 0, 0], "{restarted:?}");
    assert!(restarted[3..].iter().all(|&n| n >= 8), "{restarted:?}");
    let gaps: Vec<Duration> = failed_at.windows(2).map(|w| w[1] - w[0]).collect();
    for (gap, base) in gaps
        .iter()
        .zip([500, 1000, 2000, 4000, 8000, 16_000, 16_000, 16_000])
    {
        let base = Duration::from_millis(base);
        assert!(*gap >= base * 3 / 4 && *gap <= base, "{gaps:?}");
    }
}

/// A fleet of 10,000 clusters holds 70,000 of these for hours, each waiting for its next line:
/// what listing, opening and pausing take is boxed while they last (a kind's watch was 272 bytes
/// inside a boxed stream of 376 and a task node of its own; it is 296 in place).
#[test]
#[cfg(target_pointer_width = "64")]
fn a_kinds_watch_keeps_no_more_than_waiting_for_a_line_takes() {
    assert!(std::mem::size_of::<KindWatch>() <= 296);
    assert!(std::mem::size_of::<Option<Waiting>>() <= 24);
}
