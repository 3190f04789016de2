//! The bus: a fleet's state shared through NATS JetStream, so that many people (and fleets
//! larger than one machine) need not each watch every cluster. Collectors ([`collector`]) run
//! the engine on their share of the fleet and publish into a key-value bucket — the latest
//! state of every cluster and object ([`keys`], [`wire`]) — and a stream of changes with an age
//! limit (the history). Readers ([`reader`]) turn the bucket into the session's changes, as any
//! other source, and hold no connection to any cluster; they never gain a way to write through
//! it. Collectors share the fleet without a coordinator of their own: each announces itself in a
//! second bucket with a heartbeat, and every cluster belongs to the live collector that ranks
//! highest for it (rendezvous hashing).

pub mod collector;
mod consume;
mod error;
pub mod history;
pub mod keys;
mod placed;
pub mod proposals;
pub mod reader;
pub mod rendezvous;
mod stores;
pub mod wire;

use std::path::PathBuf;
use std::time::Duration;

use async_nats::jetstream;

pub(crate) use consume::{StreamRead, last_sequence, put_key, read_all};
pub use consume::{every_value, last_values, listed_keys, values_of};
pub use error::{BusError, Malformed};
pub(crate) use placed::placed;
pub use stores::{Names, Stores};

/// How to reach the bus, as the command line says.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `nats://host:4222`, `tls://host:4222`; user and password may be in it.
    pub url: String,
    /// A NATS credentials file (JWT and nkey seed).
    pub creds: Option<PathBuf>,
    /// A file holding an nkey seed.
    pub nkey: Option<PathBuf>,
    /// A CA bundle to trust for the server's TLS certificate (and require TLS).
    pub ca: Option<PathBuf>,
    /// The name of the state bucket; the others are named after it.
    pub bucket: String,
}

/// The bucket the state goes in when `--bucket` says nothing.
pub const DEFAULT_BUCKET: &str = "fluxfleet";

/// Connects with the credentials given; errors name the server, never a secret.
pub async fn connect(options: &Options, name: &str) -> Result<async_nats::Client, BusError> {
    let mut connect = async_nats::ConnectOptions::new()
        .name(name)
        .connection_timeout(Duration::from_secs(10));
    if let Some(creds) = &options.creds {
        connect = connect
            .credentials_file(creds)
            .await
            .map_err(|e| BusError::Credentials {
                path: creds.clone(),
                why: e.to_string(),
            })?;
    }
    if let Some(path) = &options.nkey {
        let seed = std::fs::read_to_string(path).map_err(|e| BusError::Nkey {
            path: path.clone(),
            why: e.to_string(),
        })?;
        connect = connect.nkey(seed.trim().to_string());
    }
    if let Some(ca) = &options.ca {
        connect = connect.add_root_certificates(ca.clone()).require_tls(true);
    }
    // A comma-separated list of servers, as NATS clients take it: the client picks one and
    // moves to another when it is lost. User and password in a URL are passed as credentials
    // (the first URL that has them), and the URLs without them.
    let mut servers = Vec::new();
    let mut credentials = None;
    for one in options
        .url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        let (url, user) = crate::userinfo::split(one);
        credentials = credentials.or(user);
        let server: async_nats::ServerAddr =
            url.parse().map_err(|e: std::io::Error| BusError::BadUrl {
                url: crate::userinfo::redacted(one),
                why: e.to_string(),
            })?;
        servers.push(server);
    }
    if servers.is_empty() {
        return Err(BusError::NoServer);
    }
    if let Some((user, pass)) = credentials {
        connect = connect.user_and_password(user, pass);
    }
    connect.connect(servers).await.map_err(|e| {
        let (url, why) = (crate::userinfo::redacted(&options.url), e.to_string());
        match e.kind() {
            async_nats::ConnectErrorKind::AuthorizationViolation
            | async_nats::ConnectErrorKind::Authentication => BusError::Refused { url, why },
            _ => BusError::Connect { url, why },
        }
    })
}

/// The stream `config` names, made if missing. Collectors starting together race to make it:
/// the losers are refused ("subjects overlap with an existing stream") and take the winner's.
/// A cluster just started may not have placed every node yet ("insufficient resources"), or
/// be electing a leader: asked again, a bounded number of times.
async fn stream(
    js: &jetstream::Context,
    config: jetstream::stream::Config,
) -> Result<jetstream::stream::Stream, BusError> {
    let name = config.name.clone();
    placed("asking for it", || async {
        match js.get_or_create_stream(config.clone()).await {
            Ok(stream) => Ok(stream),
            Err(refused) => js.get_stream(&name).await.map_err(|_| refused.to_string()),
        }
    })
    .await
}

/// A key-value bucket, made as the KV API makes one (a stream `KV_<name>` of subjects
/// `$KV.<name>.>`, one value per key) but without asking the account's limits first, which
/// servers before 2.10 answer in a shape newer clients cannot read; then opened as a bucket.
async fn bucket(
    js: &jetstream::Context,
    (name, description): (&str, &str),
    max_age: Duration,
    replicas: usize,
) -> Result<jetstream::kv::Store, BusError> {
    let duplicate_window = if max_age.is_zero() {
        Duration::from_secs(120)
    } else {
        max_age.min(Duration::from_secs(120))
    };
    stream(
        js,
        jetstream::stream::Config {
            name: format!("KV_{name}"),
            description: Some(description.into()),
            subjects: vec![format!("$KV.{name}.>")],
            max_messages_per_subject: 1,
            max_age,
            max_message_size: wire::MAX_VALUE as i32,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            discard: jetstream::stream::DiscardPolicy::New,
            duplicate_window,
            num_replicas: replicas.max(1),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| BusError::jetstream(format!("creating bucket {name}"), e))?;
    placed(&format!("opening bucket {name}"), || js.get_key_value(name)).await
}

/// The history stream, made if missing, with `retention`'s age and size: a stream made before
/// (by an older collector, or with other flags) is brought to them, so that a cap given now
/// holds now. Every collector of a bucket should be given the same.
async fn history(
    js: &jetstream::Context,
    name: &str,
    retention: &Retention,
) -> Result<jetstream::stream::Stream, BusError> {
    // A cap more than the servers may store is refused ("insufficient storage resources"):
    // the error names it, to be lowered (or JetStream's max_file_store raised).
    let cap = crate::units::format_size(retention.history_max_bytes);
    let kept = format!("keeping at most {cap} (--history-max-bytes)");
    let failed = |e: &dyn std::fmt::Display| {
        BusError::jetstream(format!("creating stream {name}, {kept}"), e)
    };
    let max_bytes = i64::try_from(retention.history_max_bytes).unwrap_or(i64::MAX);
    let mut stream = stream(
        js,
        jetstream::stream::Config {
            name: name.to_string(),
            description: Some("fluxfleet: what changed in the fleet".into()),
            subjects: vec![format!("{name}.>")],
            max_age: retention.history,
            max_bytes,
            discard: jetstream::stream::DiscardPolicy::Old,
            max_message_size: wire::MAX_VALUE as i32,
            num_replicas: retention.replicas.max(1),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| failed(&e))?;
    let config = stream.info().await.map_err(|e| failed(&e))?.config.clone();
    if config.max_age != retention.history || config.max_bytes != max_bytes {
        tracing::info!(stream = name, max_age = ?retention.history, max_bytes,
            was_max_age = ?config.max_age, was_max_bytes = config.max_bytes,
            "the history stream takes this collector's retention");
        js.update_stream(jetstream::stream::Config {
            max_age: retention.history,
            max_bytes,
            discard: jetstream::stream::DiscardPolicy::Old,
            ..config
        })
        .await
        .map_err(|e| BusError::jetstream(format!("updating stream {name} to {kept}"), e))?;
    }
    Ok(stream)
}

/// How collectors create the stores.
#[derive(Clone, Copy, Debug)]
pub struct Retention {
    /// How long the history keeps a change.
    pub history: Duration,
    /// The most bytes the history holds (per copy); the oldest changes go first past it.
    pub history_max_bytes: u64,
    /// How long a collector's announcement lives without a heartbeat.
    pub ttl: Duration,
    /// Copies the NATS cluster keeps of each bucket and of the history (1 on a single server;
    /// 3 on a cluster of three loses nothing when a node goes). Set when they are made.
    pub replicas: usize,
}

/// How long a reader asks again for a store the NATS cluster does not answer for: a leader
/// being elected after a node was lost takes seconds, and a one-shot read in that moment should
/// answer, not fail.
const LOOKUP_FOR: Duration = Duration::from_secs(30);

/// `look`'s answer; asked again (every half second, for [`LOOKUP_FOR`]) while its error is one
/// `for_now` says is for now — a request unanswered, not a store missing.
async fn answered<T, E, F, Fut>(mut look: F, for_now: fn(&E) -> bool) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let until = tokio::time::Instant::now() + LOOKUP_FOR;
    loop {
        match look().await {
            Err(e) if for_now(&e) && tokio::time::Instant::now() < until => {
                // Not a spin on an answer that comes at once: a leader may be being elected.
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            answer => return answer,
        }
    }
}

/// A stream's lookup that no server answered in time (no leader yet).
fn stream_for_now(e: &jetstream::context::GetStreamError) -> bool {
    matches!(e.kind(), jetstream::context::GetStreamErrorKind::Request)
}

/// A bucket's lookup whose stream's lookup no server answered in time.
fn bucket_for_now(e: &jetstream::context::KeyValueError) -> bool {
    use std::error::Error;
    e.kind() == jetstream::context::KeyValueErrorKind::GetBucket
        && e.source()
            .and_then(|s| s.downcast_ref::<jetstream::context::GetStreamError>())
            .is_some_and(stream_for_now)
}

/// Opens the stores of `options.bucket`; with `create`, makes those that do not exist yet (a
/// collector), else fails saying that no collector has published there (a reader).
pub async fn open(
    client: async_nats::Client,
    options: &Options,
    create: Option<Retention>,
) -> Result<Stores, BusError> {
    let names = Names::of(&options.bucket)?;
    let js = jetstream::new(client);
    let missing = |what: &'static str, e: &dyn std::fmt::Display| BusError::NotPublished {
        what,
        url: crate::userinfo::redacted(&options.url),
        why: e.to_string(),
        bucket: names.state.clone(),
    };
    let (state, collectors, history) = match create {
        None => (
            answered(|| js.get_key_value(&names.state), bucket_for_now)
                .await
                .map_err(|e| missing("the state bucket", &e))?,
            answered(|| js.get_key_value(&names.collectors), bucket_for_now)
                .await
                .map_err(|e| missing("the collectors' bucket", &e))?,
            answered(|| js.get_stream(&names.history), stream_for_now)
                .await
                .map_err(|e| missing("the history stream", &e))?,
        ),
        Some(retention) => {
            let state = bucket(
                &js,
                (
                    &names.state,
                    "fluxfleet: the latest state of every cluster and Flux object",
                ),
                Duration::ZERO,
                retention.replicas,
            )
            .await?;
            let collectors = bucket(
                &js,
                (&names.collectors, "fluxfleet: the collectors alive"),
                retention.ttl,
                retention.replicas,
            )
            .await?;
            let history = history(&js, &names.history, &retention).await?;
            (state, collectors, history)
        }
    };
    Ok(Stores {
        js,
        names,
        state,
        collectors,
        history,
    })
}

/// The collectors whose announcement has not expired, by id: the bucket's keys as the server
/// lists them, each read (a collector that said goodbye leaves a deletion marker).
///
/// Not the KV API's `keys()`: it follows the bucket until it has delivered a message it counted
/// as the last, and an announcement renewed meanwhile replaces that message before it comes —
/// with collectors renewing every few seconds, `keys()` never ends. Nor a read of the last
/// values up to the stream's end: an announcement renewed during the read is skipped there, and
/// its collector taken for dead.
pub async fn collectors_alive(
    collectors: &jetstream::kv::Store,
) -> Result<std::collections::BTreeSet<String>, BusError> {
    use futures::TryStreamExt;
    let prefix = format!("$KV.{}.", collectors.name);
    let listing = |e: &dyn std::fmt::Display| BusError::jetstream("listing the collectors", e);
    let mut subjects = collectors
        .stream
        .info_with_subjects(format!("{prefix}>"))
        .await
        .map_err(|e| listing(&e))?;
    let mut ids = Vec::new();
    while let Some((subject, _)) = subjects.try_next().await.map_err(|e| listing(&e))? {
        if let Some(id) = subject.strip_prefix(&prefix) {
            ids.push(id.to_string());
        }
    }
    let mut alive = std::collections::BTreeSet::new();
    for id in ids {
        if collectors
            .get(&id)
            .await
            .map_err(|e| BusError::jetstream(format!("reading collector {id}"), e))?
            .is_some()
        {
            alive.insert(id);
        }
    }
    Ok(alive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_urls() {
        assert!(Names::of("fleet.prod").is_err());
        assert!(Names::of("").is_err());
        let n = Names::of("fleet_prod").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(n.collectors, "fleet_prod-collectors");
        assert_eq!(n.history_subject("a.b"), "fleet_prod-history.a=2Eb");
    }
}
