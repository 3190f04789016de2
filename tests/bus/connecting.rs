//! Reaching the NATS server: a comma-separated list of servers, a password in the URL never
//! shown, TLS trusting the CA given and only it, and a bucket nobody published to named.

use crate::common;

use std::time::Duration;

use common::bus::TTL;
use common::nats::NatsServer;
use fluxfleet::bus;

use super::options;

/// `--nats` takes a comma-separated list of servers, as NATS clients do (it failed with
/// "invalid port number"): one that is down is passed over, and no password in the list is ever
/// shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comma_separated_list_of_servers_is_taken_as_nats_clients_take_it() {
    let nats = NatsServer::start();
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listed = bus::Options {
        url: format!("nats://127.0.0.1:{down}, {}", nats.url),
        ..options(&nats)
    };
    let client = bus::connect(&listed, "test").await.unwrap();
    let retention = bus::Retention {
        history: Duration::from_secs(3600),
        history_max_bytes: 1 << 30,
        ttl: TTL,
        replicas: 1,
    };
    bus::open(client, &listed, Some(retention)).await.unwrap();

    let nowhere = bus::Options {
        url: format!("nats://ops:s3cret@127.0.0.1:{down},nats://ops:s3cret@127.0.0.1:{down}"),
        ..options(&nats)
    };
    let Err(e) = bus::connect(&nowhere, "test").await else {
        panic!("no server is up");
    };
    // No server reached: worth trying again, and said without the password.
    assert!(
        matches!(e, bus::BusError::Connect { .. }) && e.retryable(),
        "{e:?}"
    );
    let said = e.to_string();
    assert!(
        said.contains(&format!("127.0.0.1:{down}")) && !said.contains("s3cret"),
        "{said}"
    );
    let e = bus::connect(
        &bus::Options {
            url: " , ".into(),
            ..options(&nats)
        },
        "test",
    )
    .await
    .err()
    .unwrap();
    // The command line to fix: not worth trying again.
    assert_eq!(e, bus::BusError::NoServer);
    assert!(!e.retryable());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_says_what_is_missing_when_nothing_was_published() {
    let nats = NatsServer::start();
    let Err(e) = bus::reader::Bus::connect(&options(&nats)).await else {
        panic!("a bucket nobody wrote");
    };
    assert!(
        matches!(&e, bus::BusError::NotPublished { bucket, .. } if bucket == "fleet"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("has a collector published to bucket \"fleet\""),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asking_for_a_password_gets_it_from_the_url_and_errors_never_show_it() {
    let nats = NatsServer::start_with(&["--user", "fleet", "--pass", "s3cret-pw"]);
    let address = nats.url.trim_start_matches("nats://");
    let wrong = bus::Options {
        url: format!("nats://fleet:wrong-pw@{address}"),
        bucket: "fleet".into(),
        ..bus::Options::default()
    };
    let e = bus::reader::Bus::connect(&wrong)
        .await
        .err()
        .expect("refused");
    assert!(matches!(e, bus::BusError::Refused { .. }), "{e:?}");
    let said = e.to_string();
    assert!(!said.contains("wrong-pw"), "{said}");
    assert!(said.contains("nats://…@"), "{said}");
    let right = bus::Options {
        url: format!("nats://fleet:s3cret-pw@{address}"),
        ..wrong
    };
    // Authenticated: what is missing now is a collector, not the password.
    let e = bus::reader::Bus::connect(&right)
        .await
        .err()
        .expect("nothing published");
    assert!(matches!(e, bus::BusError::NotPublished { .. }), "{e:?}");
    assert!(!e.to_string().contains("s3cret-pw"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_nats_trusts_the_ca_it_is_given_and_only_that() {
    let dir = tempfile::tempdir().unwrap();
    common::server_certificate(dir.path());
    let path = |name: &str| dir.path().join(name);
    let nats = NatsServer::start_with(&[
        "--tls",
        "--tlscert",
        path("server.pem").to_str().unwrap(),
        "--tlskey",
        path("server.key").to_str().unwrap(),
    ]);
    let url = nats.url.replace("nats://", "tls://");
    let untrusted = bus::Options {
        url: url.clone(),
        bucket: "fleet".into(),
        ..bus::Options::default()
    };
    let e = bus::reader::Bus::connect(&untrusted)
        .await
        .err()
        .expect("an unknown CA");
    assert!(
        matches!(&e, bus::BusError::Connect { url: at, .. } if *at == url),
        "{e:?}"
    );
    let trusted = bus::Options {
        ca: Some(path("ca.pem")),
        ..untrusted
    };
    // Over TLS with the CA given: connected, and what is missing is a collector.
    let e = bus::reader::Bus::connect(&trusted)
        .await
        .err()
        .expect("nothing published");
    assert!(matches!(e, bus::BusError::NotPublished { .. }), "{e:?}");
}
