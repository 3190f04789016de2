//! A kind's watch when its connection goes away (GOAWAY) or goes silent (a ping unanswered):
//! moved to a new connection from where it stopped, or told lost at once; and backed off from a
//! server that goes away from every watch within seconds.

use super::state::{QUICK_RESUMES, Watching};
use super::*;

fn watching() -> Watching {
    Watching::new(
        FluxKind::Kustomization,
        (100, 100),
        Lists::Paged,
        Duration::from_secs(30),
        1,
    )
}

fn from(rv: &str) -> Stand {
    Stand::From { rv: rv.into() }
}

/// A watch listed at `rv` and open since `at`.
fn open_at(w: &mut Watching, rv: &str, at: Instant) {
    w.advance(
        Came::Listed(Ok((Vec::new(), rv.into()))),
        at,
        Timestamp::UNIX_EPOCH,
    );
    assert!(matches!(
        w.advance(Came::Opened(Ok(())), at, Timestamp::UNIX_EPOCH),
        Some(Step::Watching)
    ));
}

fn refused() -> Trouble {
    Trouble::transport(&std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
}

#[test]
fn a_watch_moves_from_where_it_stopped_and_says_goaway_when_no_new_connection_is_made() {
    let mut w = watching();
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    open_at(&mut w, "10", t0);
    // Moved: nothing told (the kind stays live), opened again at once from where it stood.
    let later = t0 + Duration::from_secs(60);
    assert!(w.advance(Came::Moved, later, wall).is_none());
    assert_eq!(w.stand(), &from("10"));
    assert_eq!(w.take_wait(), None);
    // The server refuses new connections (it is shutting down): unreachable, saying why.
    match w.advance(Came::Opened(Err(refused())), later, wall) {
        Some(Step::Failed { failure, .. }) => {
            assert_eq!(failure.phase, Phase::Unreachable);
            assert!(
                failure
                    .message
                    .starts_with("the server is going away (GOAWAY) and a new connection failed: "),
                "{}",
                failure.message
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.stand(), &from("10"), "tried again from where it stood");
    assert!(w.take_wait().is_some());
    // Open again (another replica answers): a later failure is only itself.
    w.advance(Came::Opened(Ok(())), later, wall);
    w.advance(Came::Ended, later, wall);
    match w.advance(Came::Opened(Err(refused())), later, wall) {
        Some(Step::Failed { failure, .. }) => {
            assert!(!failure.message.contains("GOAWAY"), "{}", failure.message)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_server_going_away_from_every_watch_within_seconds_is_backed_off_from() {
    let mut w = watching();
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    open_at(&mut w, "1", t0);
    for i in 0..u64::from(QUICK_RESUMES) {
        let at = t0 + Duration::from_secs(i);
        let step = w.advance(Came::Moved, at + Duration::from_millis(10), wall);
        assert!(step.is_none(), "move {i}: {step:?}");
        assert_eq!(w.take_wait(), None);
        w.advance(Came::Opened(Ok(())), at + Duration::from_millis(20), wall);
    }
    match w.advance(Came::Moved, t0 + Duration::from_secs(4), wall) {
        Some(Step::Failed { failure, .. }) => {
            assert_eq!(failure.phase, Phase::ServerError);
            assert!(failure.message.contains("GOAWAY"), "{}", failure.message);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.stand(), &from("1"));
    assert!(w.take_wait().is_some(), "after a pause");
}

#[test]
fn a_watch_on_a_silent_connection_is_told_lost_at_once_and_asked_for_again_at_once() {
    let mut w = watching();
    let (t0, wall) = (Instant::now(), Timestamp::UNIX_EPOCH);
    open_at(&mut w, "7", t0);
    let silent = Trouble::transport(&std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the server did not answer a ping within 5s",
    ));
    match w.advance(Came::Lost(silent), t0 + Duration::from_secs(30), wall) {
        Some(Step::Failed {
            failure, retry_at, ..
        }) => {
            assert_eq!(failure.phase, Phase::TimedOut);
            assert_eq!(retry_at, wall, "asked again at once");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.stand(), &from("7"));
    assert_eq!(w.take_wait(), None);
}

#[tokio::test]
async fn what_came_before_goaway_is_read_first_then_the_reader_is_told_to_move() {
    let mut body = ResponseBody::scripted_going_away(b"{\"a\":1}\n{\"b\":2}\n{\"c\"");
    let mut lines: Lines = Lines::default();
    for want in ["{\"a\":1}", "{\"b\":2}"] {
        let line = lines.read(&mut body).await.ok().flatten().unwrap();
        assert_eq!(line, want.as_bytes());
    }
    assert!(matches!(lines.read(&mut body).await, Err(Unread::Moved)));
}
