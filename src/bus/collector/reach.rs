//! A collector's first step: the bus reached and its stores open, tried until they are. A NATS
//! cluster started beside the collectors may still be electing its leader ("no suitable peers
//! for placement"), a server may not be up yet: the collector waits for it rather than exiting,
//! not ready meanwhile, and says why once a minute.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::status::{self, StatusBoard};
use crate::bus::{BusError, Options, Retention, Stores};

/// The first pause after a failed try; each next one twice the last, up to [`LONGEST`].
const FIRST: Duration = Duration::from_secs(1);
const LONGEST: Duration = Duration::from_secs(30);

/// How often the same wait is said again in the log.
const SAY_EVERY: Duration = Duration::from_secs(60);

/// What a collector reaching the bus needs: where, as whom, and what to make there.
pub(super) struct Reaching<'a> {
    pub options: &'a Options,
    pub id: &'a str,
    pub retention: Retention,
    pub status: &'a StatusBoard,
    pub stuck_after: Duration,
}

/// The bus's client and the stores, made where missing; None when told to stop first. A
/// failure worth trying again (a server not answering, JetStream without a leader) is tried
/// again after a pause that doubles up to [`LONGEST`], the collector not ready meanwhile (its
/// `/readyz` says why); one that asks for a fix (the login refused, a bad bucket name) ends it.
pub(super) async fn reach(
    asked: Reaching<'_>,
    stop: &CancellationToken,
) -> Result<Option<(async_nats::Client, Stores)>, BusError> {
    // A name NATS refuses is refused before anything is tried.
    crate::bus::Names::of(&asked.options.bucket)?;
    let name = format!("fluxfleet collect {}", asked.id);
    let mut pause = FIRST;
    let mut said: Option<tokio::time::Instant> = None;
    let mut tries: u64 = 0;
    loop {
        let tried = async {
            let client = crate::bus::connect(asked.options, &name).await?;
            let stores =
                crate::bus::open(client.clone(), asked.options, Some(asked.retention)).await?;
            Ok::<_, BusError>((client, stores))
        };
        let failed = tokio::select! {
            () = stop.cancelled() => return Ok(None),
            reached = tried => match reached {
                Ok(reached) => return Ok(Some(reached)),
                Err(e) if !e.retryable() => return Err(e),
                Err(e) => e,
            },
        };
        tries += 1;
        asked.status.set(status::Snapshot {
            id: asked.id.to_string(),
            at: Some(tokio::time::Instant::now()),
            not_ready: Some(status::NotReady::Bus(failed.clone())),
            stuck_after: asked.stuck_after.max(LONGEST * 2),
            ..Default::default()
        });
        if said.is_none_or(|at| at.elapsed() >= SAY_EVERY) {
            tracing::warn!(
                error = %failed,
                tries,
                again_in = ?pause,
                "the bus is not ready for this collector yet; trying again"
            );
            said = Some(tokio::time::Instant::now());
        }
        tokio::select! {
            () = stop.cancelled() => return Ok(None),
            () = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(LONGEST);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked<'a>(options: &'a Options, status: &'a StatusBoard) -> Reaching<'a> {
        Reaching {
            options,
            id: "c1",
            retention: Retention {
                history: Duration::from_secs(3600),
                history_max_bytes: 1 << 20,
                ttl: Duration::from_secs(5),
                replicas: 1,
            },
            status,
            stuck_after: Duration::from_secs(10),
        }
    }

    /// No server where `--nats` points: the collector keeps trying, not ready and saying why,
    /// until it is told to stop — then it ends without an error.
    #[tokio::test(start_paused = true)]
    async fn a_bus_not_there_yet_is_waited_for_until_told_to_stop() {
        // A port nothing listens on: bound, then let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let options = Options {
            url: format!("nats://127.0.0.1:{port}"),
            bucket: "fleet".into(),
            ..Options::default()
        };
        let status = StatusBoard::default();
        let stop = CancellationToken::new();
        let reaching = reach(asked(&options, &status), &stop);
        tokio::pin!(reaching);
        // Tried, failed, and said so on its probes, while still trying.
        let now = loop {
            tokio::select! {
                biased;
                ended = &mut reaching => panic!("ended while the bus was away: {:?}", ended.err()),
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
            if status.snapshot().not_ready.is_some() {
                break tokio::time::Instant::now();
            }
        };
        let probe = status.readyz(now);
        assert!(
            matches!(&probe, Err(status::NotReady::Bus(BusError::Connect { url, .. })) if url == &options.url),
            "{probe:?}"
        );
        assert_eq!(status.healthz(now), Ok(()), "alive while it waits");
        stop.cancel();
        assert!(matches!(reaching.await, Ok(None)));
    }

    /// What a try cannot mend ends the collector at once, naming it.
    #[tokio::test]
    async fn a_bucket_name_nats_refuses_ends_it() {
        let options = Options {
            url: "nats://127.0.0.1:4222".into(),
            bucket: "a.b".into(),
            ..Options::default()
        };
        let status = StatusBoard::default();
        let ended = reach(asked(&options, &status), &CancellationToken::new()).await;
        assert_eq!(ended.err(), Some(BusError::BadBucket("a.b".into())));
    }
}
