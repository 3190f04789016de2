#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use super::*;

fn gate(per_client: usize) -> Gate {
    Gate {
        token: SecretString::from("s3cret-token-0123456789".to_string()),
        max_request: 1024,
        per_client,
        in_flight: Mutex::new(HashMap::new()),
        counts: Arc::new(Counts::default()),
    }
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
    let g = gate(1);
    assert!(g.authorized(&with_authorization("Bearer s3cret-token-0123456789")));
    for wrong in [
        "Bearer s3cret-token-0123456788",
        "Bearer s3cret-token-012345678",
        "Bearer s3cret-token-01234567890",
        "bearer s3cret-token-0123456789",
        "Basic s3cret-token-0123456789",
        "s3cret-token-0123456789",
        "Bearer ",
    ] {
        assert!(!g.authorized(&with_authorization(wrong)), "{wrong}");
    }
    assert!(!g.authorized(&hyper::HeaderMap::new()), "no header");
}

#[test]
fn a_client_has_at_most_its_share_in_flight_and_others_are_not_held_up() {
    let g = gate(2);
    let a: IpAddr = "10.0.0.1".parse().unwrap();
    let b: IpAddr = "10.0.0.2".parse().unwrap();
    let first = g.slot(a).unwrap();
    let second = g.slot(a).unwrap();
    assert!(g.slot(a).is_none(), "a third at once is refused");
    assert!(g.slot(b).is_some(), "another address is not held up");
    drop(first);
    let third = g.slot(a).expect("a slot freed is free");
    drop((second, third));
    assert!(
        g.in_flight.lock().unwrap().is_empty(),
        "addresses with nothing in flight are forgotten"
    );
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
