//! One task per cluster: credentials → client → discovery → one watch per served kind, turning
//! everything into [`Event`]s — object summaries and the cluster's connection state. A failure
//! stays inside its cluster: it is reported, backed off and retried, and nothing else waits.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::config::{ExecAuthCluster, KubeConfigOptions};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::discovery::{Served, discover};
use super::errors::{self, Failure};
use super::exec;
use super::observe::Observation;
use super::summarize::{key_of, summarize};
use super::transport::{NotHttp2, Protocol, Transport};
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterId, Connection, FluxKind, Phase};
use crate::inventory::ClusterSpec;

/// What every cluster task shares.
pub struct Shared {
    pub transport: Transport,
    pub exec: exec::Runner,
    /// Clusters connecting at once.
    pub connecting: Semaphore,
    pub kinds: Vec<FluxKind>,
    pub connect_timeout: Duration,
    pub max_backoff: Duration,
    pub events: mpsc::Sender<Event>,
}

/// Sends this cluster's events; reports the connection only when it changed.
struct Reporter {
    id: ClusterId,
    events: mpsc::Sender<Event>,
    connection: Connection,
}

/// The engine is gone (shut down, or the consumer dropped the receiver).
struct Closed;

impl Reporter {
    async fn send(&self, change: Change) -> Result<(), Closed> {
        let event = Event {
            cluster: self.id,
            at: Timestamp::now(),
            change,
        };
        self.events.send(event).await.map_err(|_| Closed)
    }

    async fn connection(&mut self, mut next: Connection) -> Result<(), Closed> {
        next.since = if next.phase == self.connection.phase {
            self.connection.since
        } else {
            Some(Timestamp::now())
        };
        if next == self.connection {
            return Ok(());
        }
        self.connection = next.clone();
        self.send(Change::Connection(next)).await
    }

    async fn failed(&mut self, failure: &Failure, retry_in: Duration) -> Result<(), Closed> {
        let mut next = Connection::new(failure.phase);
        next.error = Some(failure.message.clone().into());
        next.retry_at = Some(Timestamp::now() + retry_in);
        next.protocol = self.connection.protocol;
        self.connection(next).await
    }
}

/// How one connection attempt ended.
enum Attempt {
    Connected(Connected),
    Failed(Failure),
    NotHttp2,
    NoFlux,
}

struct Connected {
    client: kube::Client,
    served: Vec<Served>,
    observations: mpsc::UnboundedReceiver<Observation>,
    protocol: Option<&'static str>,
    /// When the exec credential runs out: reconnect before then.
    expires: Option<Timestamp>,
}

/// Why watching stopped.
enum Ended {
    /// Reconnect from scratch (new credentials, new discovery) after backing off.
    Reconnect(Failure),
    Closed,
}

/// Runs until `cancel` fires or the events receiver is dropped.
pub async fn run(id: ClusterId, spec: ClusterSpec, shared: Arc<Shared>, cancel: CancellationToken) {
    let reporter = Reporter {
        id,
        events: shared.events.clone(),
        connection: Connection::default(),
    };
    tokio::select! {
        _ = cancel.cancelled() => {}
        _ = lifecycle(reporter, &spec, &shared) => {}
    }
}

async fn lifecycle(
    mut reporter: Reporter,
    spec: &ClusterSpec,
    shared: &Arc<Shared>,
) -> Result<(), Closed> {
    let mut protocol = if spec.server.starts_with("https://") {
        Protocol::Http2
    } else {
        Protocol::Http1
    };
    let mut backoff = Backoff::new(Duration::from_secs(1), shared.max_backoff, seed(&spec.name));
    loop {
        let mut connecting = Connection::new(Phase::Connecting);
        connecting.error = reporter.connection.error.clone();
        reporter.connection(connecting).await?;
        let Ok(permit) = shared.connecting.acquire().await else {
            return Err(Closed);
        };
        let failure = match attempt(spec, shared, protocol).await {
            Attempt::NotHttp2 => {
                protocol = Protocol::Http1;
                continue;
            }
            Attempt::NoFlux => {
                // Never hold a connecting slot while waiting: others go ahead meanwhile.
                drop(permit);
                let failure = Failure::new(
                    Phase::FluxNotInstalled,
                    "the server serves none of the watched Flux kinds",
                );
                reporter.failed(&failure, shared.max_backoff).await?;
                tokio::time::sleep(shared.max_backoff).await;
                continue;
            }
            Attempt::Failed(failure) => {
                drop(permit);
                failure
            }
            Attempt::Connected(connected) => {
                // The slot stays taken until the first lists are in: bounded concurrency there
                // bounds the memory the initial lists need at once.
                match watch(&mut reporter, connected, shared, &mut backoff, permit).await {
                    Ended::Closed => return Err(Closed),
                    Ended::Reconnect(failure) => {
                        if failure.phase == Phase::Unauthorized
                            && let Some(exec) = exec_of(spec)
                        {
                            shared.exec.invalidate(exec);
                        }
                        failure
                    }
                }
            }
        };
        let delay = backoff.next_delay();
        tracing::debug!(cluster = %spec.name, phase = %failure.phase, error = %failure.message, ?delay, "backing off");
        reporter.failed(&failure, delay).await?;
        tokio::time::sleep(delay).await;
    }
}

fn exec_of(spec: &ClusterSpec) -> Option<&kube::config::ExecConfig> {
    spec.kubeconfig
        .auth_infos
        .first()?
        .auth_info
        .as_ref()?
        .exec
        .as_ref()
}

/// A per-cluster jitter seed, so that 2,000 clusters failing together do not retry together.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One connection attempt, with the deadline. The caller holds a connecting slot.
async fn attempt(spec: &ClusterSpec, shared: &Arc<Shared>, protocol: Protocol) -> Attempt {
    match tokio::time::timeout(shared.connect_timeout, connect(spec, shared, protocol)).await {
        Ok(outcome) => outcome,
        Err(_) => Attempt::Failed(Failure::new(
            Phase::TimedOut,
            format!(
                "no answer within {}",
                crate::units::format_duration(shared.connect_timeout)
            ),
        )),
    }
}

async fn connect(spec: &ClusterSpec, shared: &Arc<Shared>, protocol: Protocol) -> Attempt {
    let mut kubeconfig = spec.kubeconfig.clone();
    let mut expires = None;
    let cluster = kubeconfig
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .unwrap_or_default();
    if let Some(auth) = kubeconfig
        .auth_infos
        .first_mut()
        .and_then(|a| a.auth_info.as_mut())
        && let Some(exec) = auth.exec.as_mut()
    {
        if exec.provide_cluster_info {
            match ExecAuthCluster::try_from(&cluster) {
                Ok(c) => exec.cluster = Some(c),
                Err(e) => {
                    return Attempt::Failed(Failure::new(
                        Phase::Invalid,
                        format!("cluster info for the exec plugin: {e}"),
                    ));
                }
            }
        }
        match shared.exec.credential(exec).await {
            Ok(credential) => {
                expires = credential.expires;
                credential.apply(auth);
            }
            Err(message) => return Attempt::Failed(Failure::new(Phase::Unauthorized, message)),
        }
    }
    let options = KubeConfigOptions {
        context: Some(spec.context.clone()),
        ..Default::default()
    };
    let config = match kube::Config::from_custom_kubeconfig(kubeconfig, &options).await {
        Ok(config) => config,
        Err(e) => return Attempt::Failed(Failure::new(Phase::Invalid, crate::errors::chain(&e))),
    };
    let (observer, mut observations) = mpsc::unbounded_channel();
    // Building a client parses certificates (microseconds) and, once for the fleet, the system
    // trust store. Legacy auth providers (gcp) may run a command: only those go to a thread.
    let client = if config.auth_info.auth_provider.is_some() {
        let building = shared.clone();
        tokio::task::spawn_blocking(move || building.transport.client(&config, protocol, observer))
            .await
            .unwrap_or_else(|e| {
                Err(kube::Error::Service(
                    format!("building the client: {e}").into(),
                ))
            })
    } else {
        shared.transport.client(&config, protocol, observer)
    };
    let client = match client {
        Ok(client) => client,
        Err(e) => return Attempt::Failed(errors::of_kube(&e)),
    };
    match discover(&client, &shared.kinds).await {
        Ok(served) if served.is_empty() => Attempt::NoFlux,
        Ok(served) => {
            let mut protocol = None;
            while let Ok(o) = observations.try_recv() {
                protocol.get_or_insert(match o.version {
                    http::Version::HTTP_2 => "HTTP/2",
                    _ => "HTTP/1.1",
                });
            }
            Attempt::Connected(Connected {
                client,
                served,
                observations,
                protocol,
                expires,
            })
        }
        Err(e) if is_not_http2(&e) => Attempt::NotHttp2,
        Err(e) => Attempt::Failed(errors::of_kube(&e)),
    }
}

fn is_not_http2(e: &kube::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<NotHttp2>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// Where one kind's watch stands.
#[derive(Clone, Debug, PartialEq)]
enum KindState {
    Listing,
    Live,
    Forbidden(String),
    Failed(Failure, Timestamp),
}

async fn watch(
    reporter: &mut Reporter,
    connected: Connected,
    shared: &Shared,
    backoff: &mut Backoff,
    permit: tokio::sync::SemaphorePermit<'_>,
) -> Ended {
    let mut permit = Some(permit);
    let release_by = tokio::time::Instant::now() + shared.connect_timeout;
    let Connected {
        client,
        served,
        mut observations,
        protocol,
        expires,
    } = connected;
    let mut states: Vec<(FluxKind, KindState)> = served
        .iter()
        .map(|s| (s.kind, KindState::Listing))
        .collect();
    let plurals: HashMap<&str, FluxKind> =
        served.iter().map(|s| (s.kind.plural(), s.kind)).collect();
    let streams = served.iter().map(|s| {
        let resource = ApiResource {
            group: s.kind.group().into(),
            version: s.version.clone(),
            api_version: format!("{}/{}", s.kind.group(), s.version),
            kind: s.kind.as_str().into(),
            plural: s.kind.plural().into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let kind_backoff = Backoff::new(Duration::from_millis(500), shared.max_backoff, 0);
        let delay = kind_backoff.last_delay();
        let kind = s.kind;
        watcher(api, watcher::Config::default())
            .backoff(kind_backoff)
            .map(move |item| (kind, item, delay.clone()))
            .boxed()
    });
    let mut merged = futures::stream::select_all(streams);
    let watching: Box<[(FluxKind, Box<str>)]> = served
        .iter()
        .map(|s| (s.kind, s.version.as_str().into()))
        .collect();
    let mut buffers: HashMap<FluxKind, Vec<crate::fleet::FluxSummary>> = HashMap::new();
    let renew_at = expires.map(|t| {
        let left = t.duration_since(Timestamp::now()).as_secs_f64() - 60.0;
        tokio::time::Instant::now() + Duration::from_secs_f64(left.max(1.0))
    });
    let report = |states: &[(FluxKind, KindState)]| {
        let mut c = derive(states);
        c.watching = watching.clone();
        c.protocol = protocol;
        c
    };
    if reporter.connection(report(&states)).await.is_err() {
        return Ended::Closed;
    }
    loop {
        let renew = async {
            match renew_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            item = merged.next() => {
                let Some((kind, item, delay)) = item else {
                    return Ended::Reconnect(Failure::new(Phase::Unreachable, "every watch ended"));
                };
                let state = match item {
                    Ok(event) => {
                        let change = match event {
                            watcher::Event::Init => {
                                buffers.insert(kind, Vec::new());
                                None
                            }
                            watcher::Event::InitApply(obj) => {
                                if let Some(s) = summarize(kind, obj) {
                                    buffers.entry(kind).or_default().push(s);
                                }
                                None
                            }
                            watcher::Event::InitDone => {
                                Some(Change::Replaced(kind, buffers.remove(&kind).unwrap_or_default()))
                            }
                            watcher::Event::Apply(obj) => summarize(kind, obj).map(Change::Applied),
                            watcher::Event::Delete(obj) => key_of(kind, &obj).map(Change::Deleted),
                        };
                        if let Some(change) = change
                            && reporter.send(change).await.is_err()
                        {
                            return Ended::Closed;
                        }
                        let listing = buffers.contains_key(&kind);
                        Some(if listing { KindState::Listing } else { KindState::Live })
                    }
                    Err(e) if errors::is_gone(&e) => None,
                    Err(e) => {
                        let failure = errors::of_watcher(&e);
                        match errors::status_code(&e) {
                            Some(401) => return Ended::Reconnect(failure),
                            // The kind is gone from the server (Flux uninstalled or downgraded).
                            Some(404) => return Ended::Reconnect(Failure::new(
                                Phase::ServerError,
                                format!("{kind} is no longer served; discovering again"),
                            )),
                            Some(403) => Some(KindState::Forbidden(failure.message)),
                            _ => {
                                let retry_at = Timestamp::now() + delay.get();
                                Some(KindState::Failed(failure, retry_at))
                            }
                        }
                    }
                };
                if let Some(state) = state
                    && let Some(slot) = states.iter_mut().find(|(k, _)| *k == kind)
                {
                    slot.1 = state;
                }
            }
            observation = observations.recv() => {
                // A watch request answered 200 after its kind failed: it is back.
                if let Some(o) = observation
                    && o.watch
                    && o.status == 200
                    && let Some(kind) = plurals.get(o.resource.as_str())
                    && let Some(slot) = states.iter_mut().find(|(k, _)| k == kind)
                    && matches!(slot.1, KindState::Failed(..))
                {
                    slot.1 = KindState::Live;
                }
            }
            _ = tokio::time::sleep_until(release_by), if permit.is_some() => {
                // Listing is slow here: let other clusters go ahead.
                permit = None;
            }
            _ = renew => {
                return Ended::Reconnect(Failure::new(Phase::Connecting, "renewing credentials before they expire"));
            }
        }
        let connection = report(&states);
        if connection.phase != Phase::Syncing {
            permit = None;
        }
        if connection.phase == Phase::Live {
            backoff.reset();
        }
        if reporter.connection(connection).await.is_err() {
            return Ended::Closed;
        }
    }
}

/// The cluster's connection from the state of each kind's watch.
fn derive(states: &[(FluxKind, KindState)]) -> Connection {
    let forbidden: Box<[FluxKind]> = states
        .iter()
        .filter(|(_, s)| matches!(s, KindState::Forbidden(_)))
        .map(|(k, _)| *k)
        .collect();
    let failed = states.iter().filter_map(|(k, s)| match s {
        KindState::Failed(f, at) => Some((k, f, at)),
        _ => None,
    });
    let worst = failed.min_by_key(|(_, f, _)| f.phase);
    let mut connection = if let Some((_, failure, at)) = worst {
        let mut c = Connection::new(failure.phase);
        c.error = Some(failure.message.as_str().into());
        c.retry_at = Some(*at);
        c
    } else if !states.is_empty() && forbidden.len() == states.len() {
        let mut c = Connection::new(Phase::Forbidden);
        c.error = states.iter().find_map(|(_, s)| match s {
            KindState::Forbidden(m) => Some(m.as_str().into()),
            _ => None,
        });
        c
    } else if states.iter().any(|(_, s)| *s == KindState::Listing) {
        Connection::new(Phase::Syncing)
    } else {
        Connection::new(Phase::Live)
    };
    if !forbidden.is_empty() && connection.phase != Phase::Forbidden {
        let names: Vec<&str> = forbidden.iter().map(|k| k.as_str()).collect();
        connection.error.get_or_insert_with(|| {
            format!(
                "forbidden to list {}; the other kinds are visible",
                names.join(", ")
            )
            .into()
        });
    }
    connection.forbidden = forbidden;
    connection
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_is_live_only_when_every_kind_is_and_forbidden_kinds_are_named() {
        let ks = FluxKind::Kustomization;
        let hr = FluxKind::HelmRelease;
        let live = derive(&[(ks, KindState::Live), (hr, KindState::Live)]);
        assert_eq!(live.phase, Phase::Live);
        let syncing = derive(&[(ks, KindState::Live), (hr, KindState::Listing)]);
        assert_eq!(syncing.phase, Phase::Syncing);
        let partial = derive(&[
            (ks, KindState::Live),
            (hr, KindState::Forbidden("403".into())),
        ]);
        assert_eq!(partial.phase, Phase::Live);
        assert_eq!(&*partial.forbidden, [hr]);
        assert!(
            partial
                .error
                .unwrap()
                .contains("forbidden to list HelmRelease")
        );
        let all = derive(&[(ks, KindState::Forbidden("403 Forbidden: no".into()))]);
        assert_eq!(all.phase, Phase::Forbidden);
        let failing = derive(&[
            (
                ks,
                KindState::Failed(
                    Failure::new(Phase::ServerError, "503"),
                    Timestamp::UNIX_EPOCH,
                ),
            ),
            (hr, KindState::Live),
        ]);
        assert_eq!(failing.phase, Phase::ServerError);
        assert_eq!(failing.retry_at, Some(Timestamp::UNIX_EPOCH));
    }
}
