//! A kind's watch: hostile lines, lines cut across frames, resuming a broken watch at once, and
//! backing off from a server that breaks every watch.

use super::*;
use crate::hostile::sample;

/// A watch of Kustomizations v1 through `http`.
fn kustomizations(http: Http, max_backoff: Duration, seed: u64) -> KindWatch {
    KindWatch::new(
        Arc::new(http),
        FluxKind::Kustomization,
        "v1",
        100,
        10_000,
        max_backoff,
        seed,
    )
}

#[test]
fn hostile_watch_lines_are_errors_or_events_never_panics() {
    let mut watch = kustomizations(offline(), Duration::from_secs(1), 1);
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

fn offline() -> Http {
    tower::util::BoxCloneSyncService::new(tower::service_fn(
        |_: http::Request<kube::client::Body>| async {
            Err::<http::Response<ResponseBody>, tower::BoxError>("offline".into())
        },
    ))
}

#[test]
fn a_watch_that_ran_a_while_is_resumed_at_once_however_often_it_breaks() {
    let mut watch = kustomizations(offline(), Duration::from_secs(30), 1);
    let start = Instant::now();
    // Cut every 6 s, for ten minutes: each one a working watch.
    for i in 0..100u32 {
        let opened = start + Duration::from_secs(6) * i;
        watch.opened = Some(opened);
        assert_eq!(
            watch.resume_at_once(opened + RAN_LONG_ENOUGH),
            Ok(()),
            "cut {i}"
        );
    }
}

#[test]
fn watches_cut_within_seconds_are_resumed_at_once_a_few_times_a_minute() {
    let mut watch = kustomizations(offline(), Duration::from_secs(30), 1);
    let start = Instant::now();
    let cut = |watch: &mut KindWatch, at: Duration| {
        watch.opened = Some(start + at);
        watch.resume_at_once(start + at + Duration::from_millis(100))
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
    watch.opened = Some(start + Duration::from_secs(70));
    assert_eq!(
        watch.resume_at_once(start + Duration::from_secs(76)),
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
