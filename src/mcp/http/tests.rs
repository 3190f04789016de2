#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use super::*;

fn gate(per_client: usize, per_minute: usize) -> Gate {
    Gate {
        proof: Proof::Token(token()),
        max_request: 1024,
        limits: Limits::new(per_client, per_minute),
        proposes: false,
        writes: false,
        no_origins: true,
        counts: Arc::new(RequestCounts::default()),
    }
}

fn token() -> SecretString {
    SecretString::from("s3cret-token-0123456789".to_string())
}

fn with_authorization(value: &str) -> hyper::HeaderMap {
    let mut headers = hyper::HeaderMap::new();
    headers.insert(
        hyper::header::AUTHORIZATION,
        hyper::header::HeaderValue::from_str(value).unwrap(),
    );
    headers
}

#[test]
fn only_the_exact_bearer_token_is_let_in() {
    let authorized = |headers: &hyper::HeaderMap| Gate::token_matches(&token(), headers);
    assert!(authorized(&with_authorization(
        "Bearer s3cret-token-0123456789"
    )));
    for wrong in [
        "Bearer s3cret-token-0123456788",
        "Bearer s3cret-token-012345678",
        "Bearer s3cret-token-01234567890",
        "bearer s3cret-token-0123456789",
        "Basic s3cret-token-0123456789",
        "s3cret-token-0123456789",
        "Bearer ",
    ] {
        assert!(!authorized(&with_authorization(wrong)), "{wrong}");
    }
    assert!(!authorized(&hyper::HeaderMap::new()), "no header");
}

#[test]
fn a_client_has_at_most_its_share_in_flight_and_others_are_not_held_up() {
    let g = gate(2, 100);
    let a = Who::Address("10.0.0.1".parse().unwrap());
    let b = Who::Address("10.0.0.2".parse().unwrap());
    let first = g.limits.slot(&a).ok().unwrap();
    let second = g.limits.slot(&a).ok().unwrap();
    assert!(
        matches!(g.limits.slot(&a), Err(Limit::InFlight(2))),
        "a third at once is refused"
    );
    assert!(g.limits.slot(&b).is_ok(), "another address is not held up");
    drop(first);
    let third = g.limits.slot(&a).ok().expect("a slot freed is free");
    drop((second, third));
    assert_eq!(g.limits.in_flight(&a), 0);
}

#[test]
fn a_principal_past_its_minute_is_refused_and_others_go_on() {
    let g = gate(8, 3);
    let alice = Who::Subject("alice".into());
    let bob = Who::Subject("bob".into());
    for _ in 0..3 {
        drop(g.limits.slot(&alice).ok().unwrap());
    }
    let Err(limit) = g.limits.slot(&alice) else {
        panic!("a fourth in the minute is refused")
    };
    let answer = busy(&alice, &limit);
    assert_eq!(answer.status(), 429);
    let again: u64 = answer.headers()[hyper::header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&again), "{again}");
    assert!(g.limits.slot(&bob).is_ok(), "bob has his own minute");
}

#[test]
fn a_token_file_must_hold_one_long_token() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    for bad in ["", "short", "two words but long enough", "\n\n"] {
        std::fs::write(&file, bad).unwrap();
        let e = read_token(&file).unwrap_err();
        assert!(
            e.to_string().contains("holds no usable token"),
            "{bad:?}: {e}"
        );
        // The error never shows what the file holds.
        assert!(
            bad.trim().is_empty() || !e.to_string().contains(bad.trim()),
            "{e}"
        );
    }
    std::fs::write(&file, "  s3cret-token-0123456789\n").unwrap();
    assert_eq!(
        read_token(&file).unwrap().expose_secret(),
        "s3cret-token-0123456789"
    );
    let missing = read_token(&dir.path().join("nope")).unwrap_err();
    assert!(
        missing.to_string().contains("cannot read the token file"),
        "{missing}"
    );
}
